#include "sharing.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dsm/test_hooks.hpp"

namespace mpidsm::detail {

SharingRecord::SharingRecord(MPI_Comm comm, Transport& transport, std::size_t pages,
                             std::size_t max_batch, const MappablePeers& mappable)
    : transport_(transport),
      words_(comm, transport, count_offset(pages), mappable, "DSM sharing record"),
      drop_handler_(transport.add_remote_handler(take_drops, this)),
      local_(pages),
      staged_(2 * max_batch) {
  unwritten_.reserve(static_cast<std::size_t>(transport.size()) * max_batch);
  drops_.reserve(kMostDrops);
}

SharingRecord::~SharingRecord() {
  if (!transport_abandoned_) transport_.remove_remote_handler(drop_handler_);
}

namespace {

template <class T>
std::atomic_ref<T> word(std::byte* words, std::size_t offset) {
  return std::atomic_ref<T>(*reinterpret_cast<T*>(words + offset));
}

}  // namespace

bool SharingRecord::add_copies(int home, const std::size_t* pages, std::size_t count) {
  if (!words_.direct()) return append_through_ucx(home, pages, count);
  for (std::size_t i = 0; i < count; ++i)
    if (take_copy(pages[i])) count_and_log(&words_.mapped<std::byte>(home, 0), pages[i]);
  return false;
}

bool SharingRecord::take_copy(std::size_t page) {
  if (local_[page] & kHolds) return false;
  local_[page] |= kHolds | kEverFetched;
  return true;
}

void SharingRecord::count_copies_here(std::size_t first, std::size_t count) {
  for (std::size_t page = first; page < first + count; ++page)
    count_and_log(&words_.local<std::byte>(0), page);
}

// Every copy is logged, not only a first one: a count is not yet an entry.
// A fetcher counted before its entry is written (descheduled between the two,
// or through UCX, which posts its counts, then reserves slots, then writes
// entries); had a second fetcher seen that count and logged nothing, a
// release of the home in between would see neither copy, and the page would
// stay exclusive, written without notices, under the second one's copy.
void SharingRecord::count_and_log(std::byte* words, std::size_t page) {
  word<std::uint32_t>(words, count_offset(page)).fetch_add(1);
  const std::uint64_t index = word<std::uint64_t>(words, kCounter).fetch_add(1);
  delay_copy_log_entry_if_asked();
  const std::uint64_t entry = CopyLog::encode(index, page);
  const std::size_t slot = kRing + CopyLog::slot(index) * kSlot;
  word<std::uint64_t>(words, slot).store(entry);
  word<std::uint64_t>(words, slot + 8).store(CopyLog::check(entry));
}

void SharingRecord::uncount(std::byte* words, std::size_t page) {
  word<std::uint32_t>(words, count_offset(page)).fetch_sub(1);
}

// The counts go first (posted: a fetched count would cost a round trip per
// page, and every copy is logged anyway); a fence makes them land before
// the one round trip that reserves the log slots; the entries follow, and a
// second fence makes them land before the caller's get of the pages, whose
// completion shows theirs: two round trips per miss, not three.
bool SharingRecord::append_through_ucx(int home, const std::size_t* pages, std::size_t count) {
  std::size_t staged = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (!(local_[pages[i]] & kHolds)) staged_[2 * staged++] = pages[i];
  if (staged == 0) return false;
  const MemoryRegion& memory = words_.region();
  for (std::size_t i = 0; i < staged; ++i) {
    const std::size_t page = staged_[2 * i];
    local_[page] |= kHolds | kEverFetched;
    transport_.atomic_post<std::uint32_t>(AtomicOp::add, home, memory, count_offset(page), 1);
  }
  transport_.fence();
  const std::uint64_t first =
      transport_.atomic_fetch<std::uint64_t>(AtomicOp::add, home, memory, kCounter, staged);
  delay_copy_log_entry_if_asked();
  for (std::size_t i = 0; i < staged; ++i) {
    staged_[2 * i] = CopyLog::encode(first + i, staged_[2 * i]);
    staged_[2 * i + 1] = CopyLog::check(staged_[2 * i]);
  }
  // Consecutive indices fill the ring in at most two contiguous spans.
  for (std::size_t i = 0; i < staged;) {
    const std::size_t slot = CopyLog::slot(first + i);
    const std::size_t run = std::min(staged - i, CopyLog::entries - slot);
    transport_.put_nbi(home, memory, kRing + slot * kSlot, &staged_[2 * i], run * kSlot);
    i += run;
  }
  transport_.fence();
  return true;
}

bool SharingRecord::drop_copy(int home, std::size_t page) {
  if (!(local_[page] & kHolds)) return false;
  local_[page] &= static_cast<std::uint8_t>(~kHolds);
  if (words_.direct()) {
    uncount(&words_.mapped<std::byte>(home, 0), page);
    return false;
  }
  if (!drops_through_calls_) {
    transport_.atomic_post<std::uint32_t>(AtomicOp::add, home, words_.region(), count_offset(page),
                                          ~std::uint32_t{0});
    return true;
  }
  if (drops_.size() == kMostDrops) send_drops();
  drops_.push_back(drop_entry(home, page));
  return true;
}

// A reader that drops a column of pages at a barrier uncounts each one at
// its home: as remote atomics over tcp, each was a message of its own (in
// jia_lu across two hosts, 7 of the 11 messages per rank and interval).
// A call that fails may have reached its home or not: its drops are never
// sent again (twice would leave a count low, a copy unseen), so the counts
// stay high, which costs notices only.
void SharingRecord::send_drops() {
  std::sort(drops_.begin(), drops_.end());  // by home, then page
  std::size_t done = 0;
  try {
    while (done < drops_.size()) {
      const std::size_t first = done;
      const std::uint64_t home = drops_[first] >> kDropHomeShift;
      while (done < drops_.size() && drops_[done] >> kDropHomeShift == home) ++done;
      transport_.call(static_cast<int>(home), drop_handler_, &drops_[first],
                      (done - first) * sizeof(std::uint64_t));
    }
  } catch (...) {
    drops_.erase(drops_.begin(), drops_.begin() + static_cast<std::ptrdiff_t>(done));
    throw;
  }
  drops_.clear();
}

// The counts only ever fall by copies their sender counted before: a
// malformed call is a broken peer, not a state to carry on in.
void SharingRecord::take_drops(void* context, int source, std::uint64_t, const std::byte* bytes,
                               std::size_t size) {
  auto& self = *static_cast<SharingRecord*>(context);
  const auto here = static_cast<std::uint64_t>(self.transport_.rank());
  auto malformed = [&] {
    std::fprintf(stderr, "mpidsm: rank %d: malformed DSM copy drop from rank %d\n",
                 self.transport_.rank(), source);
    std::abort();
  };
  if (size % sizeof(std::uint64_t) != 0) malformed();
  for (std::size_t offset = 0; offset < size; offset += sizeof(std::uint64_t)) {
    std::uint64_t entry;
    std::memcpy(&entry, bytes + offset, sizeof entry);
    const std::uint64_t page = entry & ((std::uint64_t{1} << kDropHomeShift) - 1);
    if (entry >> kDropHomeShift != here || page >= self.local_.size()) malformed();
    uncount(&self.words_.local<std::byte>(0), page);
  }
}

std::uint32_t SharingRecord::sharers(std::size_t page) const {
  // A locked read-modify-write orders this rank's earlier writes before the
  // read (a plain load could pass them).
  return std::atomic_ref<std::uint32_t>(words_.local<std::uint32_t>(count_offset(page)))
      .fetch_add(0);
}

std::uint64_t SharingRecord::log_counter() const {
  return std::atomic_ref<std::uint64_t>(words_.local<std::uint64_t>(kCounter)).fetch_add(0);
}

bool SharingRecord::log_entry(std::uint64_t index, std::size_t& page) const {
  const std::size_t slot = kRing + CopyLog::slot(index) * kSlot;
  const std::uint64_t entry = std::atomic_ref<std::uint64_t>(words_.local<std::uint64_t>(slot))
                                  .load(std::memory_order_acquire);
  const std::uint64_t check = std::atomic_ref<std::uint64_t>(words_.local<std::uint64_t>(slot + 8))
                                  .load(std::memory_order_acquire);
  if (!CopyLog::written_for(entry, check, index)) return false;
  page = CopyLog::page(entry);
  return true;
}

void SharingRecord::forget(std::size_t first, std::size_t count) {
  local_.reset(first, count);
}

}  // namespace mpidsm::detail
