#include "engine.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "diff.hpp"
#include "placement.hpp"
#include "prefetch.hpp"
#include "transport/mpi_exchange.hpp"

namespace mpidsm {
namespace {

// Twins kept at once; when they run out, dirty pages are written home early
// (always safe under release consistency) and their twins reused.
constexpr std::size_t kTwinSlots = 1024;

}  // namespace

Dsm::Engine::Engine(Runtime& runtime, const DsmSettings& settings)
    : runtime_(runtime),
      transport_(runtime.transport()),
      rank_(runtime.rank()),
      page_size_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))),
      prefetch_pages_(settings.prefetch_pages),
      max_checking_pages_(settings.max_checking_pages),
      print_stats_at_exit_(settings.print_stats),
      track_prefetch_use_(settings.print_stats),
      region_(runtime.comm(), transport_, settings.size),
      pages_(region_.size() / page_size_),
      allocator_(pages_, 1),
      master_(region_.master_region()),
      locks_(transport_, settings.locks),
      sharing_(transport_, pages_, runtime.config().direct_access),
      directory_(transport_, pages_, runtime.config().direct_access),
      barrier_slots_(transport_,
                     2 * static_cast<std::size_t>(runtime.size()) * sizeof(std::int64_t),
                     runtime.config().direct_access),
      cache_(std::min(settings.cache_pages, pages_), pages_),
      state_(pages_),
      twins_(kTwinSlots * page_size_),
      batch_(std::min(prefetch_pages_, cache_.capacity() - 1) + 1),
      homes_written_(static_cast<std::size_t>(runtime.size()), false),
      held_(locks_.count(), false) {
  for (std::size_t slot = kTwinSlots; slot-- > 0;)
    free_twins_.push_back(static_cast<std::int32_t>(slot));
  // Sized up front so faults and releases do not allocate in the usual case.
  dirty_.reserve(2 * kTwinSlots);
  notices_.reserve(2 * kTwinSlots);
  lock_notices_.reserve(2 * kTwinSlots);
  acquired_notices_.reserve(detail::LockRecordLayout::ring_entries);
  for (int peer = 0; peer < runtime.size(); ++peer)
    mapped_master_.push_back(
        runtime.config().direct_access ? static_cast<std::byte*>(master_.mapped(peer)) : nullptr);
  pagemap_fd_ = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  detail::register_fault_range(region_.view(), region_.size(), this);
}

Dsm::Engine::~Engine() {
  detail::unregister_fault_range(region_.view());
  if (pagemap_fd_ >= 0) close(pagemap_fd_);
}

void Dsm::Engine::protect(std::size_t page, std::size_t count, int protection) {
  if (mprotect(view(page), count * page_size_, protection) != 0)
    throw Error(
        Errc::no_memory, rank_,
        "DSM: mprotect of " + std::to_string(count) + " pages failed: " + std::strerror(errno));
}

// Runs in the SIGSEGV handler of the faulting thread. Nothing may be thrown
// out of a signal handler: a failure is reported and the fault then takes its
// ordinary course (a crash with the usual report).
bool Dsm::Engine::handle_fault(void* address, bool write) {
  try {
    std::lock_guard<std::mutex> guard(mutex_);
    return resolve(page_of(address), write);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s (while resolving a DSM fault)\n", e.what());
    return false;
  }
}

// The pages stay pinned in the cache until the next synchronisation, so a
// later fault cannot evict them while UCX still reads or writes them.
void Dsm::Engine::make_accessible(const void* address, std::size_t size, bool write) {
  std::lock_guard<std::mutex> guard(mutex_);
  const std::size_t first = page_of(address);
  const std::size_t last = page_of(static_cast<const std::byte*>(address) + size - 1);
  if (last - first + 1 + pinned_pages_.size() > cache_.capacity())
    throw Error(Errc::no_memory, rank_,
                "buffer at " + detail::describe_address(address) + " (" + std::to_string(size) +
                    " bytes) and the DSM buffers already in transfer need more pages than "
                    "MPIDSM_CACHE_PAGES=" +
                    std::to_string(cache_.capacity()) + "; raise it or transfer in parts");
  for (std::size_t page = first; page <= last; ++page) {
    if (!resolve(page, write))
      throw Error(Errc::unregistered, rank_,
                  "buffer at " + detail::describe_address(address) + " (" + std::to_string(size) +
                      " bytes) reaches unallocated DSM memory at " +
                      detail::describe_address(view(page)));
    if (cache_.contains(page) && !cache_.entry(page).pinned) {
      cache_.entry(page).pinned = true;
      pinned_pages_.push_back(page);
    }
  }
}

void Dsm::Engine::unpin_all() {
  for (std::size_t page : pinned_pages_)
    if (cache_.contains(page)) cache_.entry(page).pinned = false;
  pinned_pages_.clear();
}

bool Dsm::Engine::resolve(std::size_t page, bool write) {
  switch (state_[page]) {
    case PageState::home_clean:
      if (write) {
        ++stats_.write_faults;
        mark_dirty(page, PageState::home_dirty);
      }
      return true;
    case PageState::invalid: {
      int home = home_of_page(page);
      if (home == -1) return false;  // no allocation: a real crash
      ++(write ? stats_.write_faults : stats_.read_faults);
      if (home == detail::HomeDirectory::undecided) home = directory_.claim(page);
      if (home == rank_) {  // first touch: this rank's zero page is the master
        become_home(page);
        return true;
      }
      // A write miss gets its twin before the view becomes writable (one
      // mprotect), so no other thread's write can slip in before the twin.
      fetch(page, home, write);
      if (write) make_twin(page);
      return true;
    }
    case PageState::cached:
      if (write) {
        ++stats_.write_faults;
        settle_prefetch(page, true);
        cache_.touch(page);
        make_twin(page);
      }
      return true;
    case PageState::dirty:
    case PageState::home_dirty:
    case PageState::home_exclusive:
      return true;  // resolved by another thread while this one waited
  }
  return false;
}

void Dsm::Engine::fetch(std::size_t page, int home, bool for_write) {
  std::size_t count = 1;
  batch_[0] = page;
  if (for_write) {  // prefetch serves read misses only
    fetch_batch(batch_.data(), 1, home, false);
    return;
  }
  // Prefetch only along a stream: a miss on the page right after the previous
  // miss (or its batch). An isolated miss (a neighbour's boundary row, a
  // pointer chase) fetches one page: a prefetched page counts as copied at
  // its home, which then tracks writes to it (sharing.hpp).
  // The batch never exceeds the cache room that pinned pages leave.
  const std::size_t room = cache_.capacity() - std::min(cache_.capacity(), pinned_pages_.size());
  const std::size_t ahead = std::min(batch_.size(), room) - std::min<std::size_t>(1, room);
  if (ahead > 0 && page == stream_next_)
    count = detail::select_prefetch(
        page, pages_, ahead, max_checking_pages_,
        [&](std::size_t q) { return state_[q] == PageState::invalid && home_of_page(q) == home; },
        batch_.data());
  fetch_batch(batch_.data(), count, home);
  stream_next_ = batch_[count - 1] + 1;
  for (std::size_t i = 1; i < count; ++i) cache_.entry(batch_[i]).prefetched = true;
  stats_.prefetched += count - 1;
}

// Gets the pages (increasing, all invalid, all homed at `home`) into the
// master view, which UCX may write without faulting: one get per contiguous
// run and one flush for the batch. Then the application's view becomes readable.
void Dsm::Engine::fetch_batch(const std::size_t* pages, std::size_t count, int home, bool map) {
  for (std::size_t i = 0; i < count; ++i) {
    make_room();
    cache_.insert(pages[i]);
  }
  auto for_each_run = [&](auto&& f) {
    for (std::size_t i = 0; i < count;) {
      std::size_t j = i + 1;
      while (j < count && pages[j] == pages[j - 1] + 1) ++j;
      f(pages[i], j - i);
      i = j;
    }
  };
  // The home learns that these pages now have copies before they are read.
  for_each_run(
      [&](std::size_t first, std::size_t length) { sharing_.mark_copied(home, first, length); });
  if (std::byte* direct = mapped_master_[static_cast<std::size_t>(home)]) {
    for_each_run([&](std::size_t first, std::size_t length) {
      std::memcpy(master(first), direct + first * page_size_, length * page_size_);
    });
  } else {
    for_each_run([&](std::size_t first, std::size_t length) {
      transport_.get_nbi(home, master_, first * page_size_, master(first), length * page_size_);
    });
    transport_.flush(home);
  }
  if (map)
    for_each_run([&](std::size_t first, std::size_t length) {
      // With statistics on, prefetched pages lose the view's page-table
      // entries, so the kernel shows which of them get touched (the cost is a
      // minor fault per used page, about 1 us here, hence only then).
      if (count > 1 && track_prefetch_use_)
        madvise(view(first), length * page_size_, MADV_DONTNEED);
      protect(first, length, PROT_READ);
    });
  for (std::size_t i = 0; i < count; ++i) state_[pages[i]] = PageState::cached;
  stats_.pages_fetched += count;
}

// Frees a cache slot when none is left: the least recently faulted page is
// written home if dirty, then dropped.
void Dsm::Engine::make_room() {
  if (!cache_.full()) return;
  // Pinned pages, and pages of the batch being fetched (still invalid), are
  // skipped (made recent). make_accessible and fetch keep them fewer than the
  // capacity, so a victim exists; the bound only guards that promise.
  for (std::size_t tries = 0;
       cache_.entry(cache_.oldest()).pinned || state_[cache_.oldest()] == PageState::invalid;
       ++tries) {
    if (tries == cache_.capacity())
      throw Error(Errc::no_memory, rank_,
                  "DSM: every cached page is in use by a transfer (MPIDSM_CACHE_PAGES=" +
                      std::to_string(cache_.capacity()) + ")");
    cache_.touch(cache_.oldest());
  }
  const std::size_t victim = cache_.oldest();
  if (state_[victim] == PageState::dirty) {
    write_diff(victim);
    flush_written_homes();
  }
  settle_prefetch(victim);
  protect(victim, 1, PROT_NONE);
  state_[victim] = PageState::invalid;
  cache_.erase(victim);
  ++stats_.evictions;
}

void Dsm::Engine::make_twin(std::size_t page) {
  // Out of twins: write every dirty page home now (its notices wait for the
  // next synchronisation) and reuse the twins.
  if (free_twins_.empty()) release();
  const std::int32_t slot = free_twins_.back();
  free_twins_.pop_back();
  std::memcpy(&twins_[static_cast<std::size_t>(slot) * page_size_], master(page), page_size_);
  cache_.entry(page).twin = slot;
  mark_dirty(page, PageState::dirty);
}

void Dsm::Engine::mark_dirty(std::size_t page, PageState state) {
  state_[page] = state;
  dirty_.push_back(page);
  protect(page, 1, PROT_READ | PROT_WRITE);
}

void Dsm::Engine::record_notice(std::size_t page) {
  notices_.push_back(static_cast<std::int64_t>(page));
  lock_notices_.push_back(detail::encode_notice(page, rank_));
}

// Puts the changed runs of a dirty remote page home (completion at the next
// flush of its home), frees its twin, records the notice. The view becomes
// read-only first, so a concurrent writer faults and waits for the lock.
void Dsm::Engine::write_diff(std::size_t page, bool already_read_only) {
  if (!already_read_only) protect(page, 1, PROT_READ);
  std::int32_t& slot = cache_.entry(page).twin;
  const std::byte* twin = &twins_[static_cast<std::size_t>(slot) * page_size_];
  const std::size_t base = page * page_size_;
  const int home = home_of_page(page);
  std::byte* direct = mapped_master_[static_cast<std::size_t>(home)];
  stats_.diff_runs += detail::for_each_changed_run(
      twin, master(page), page_size_, [&](std::size_t offset, std::size_t length) {
        if (direct)
          std::memcpy(direct + base + offset, master(page) + offset, length);
        else
          transport_.put_nbi(home, master_, base + offset, master(page) + offset, length);
        stats_.diff_bytes += length;
      });
  ++stats_.diffs;
  // Stores to a mapped home are complete once issued; the notices that
  // publish them travel through MPI or UCX, which order memory.
  if (!direct) homes_written_[static_cast<std::size_t>(home)] = true;
  free_twins_.push_back(slot);
  slot = detail::PageCache::none;
  state_[page] = PageState::cached;
  record_notice(page);
}

// Release: every page written since the last release goes home (remote pages
// as diffs, one flush per home; home pages are already there) and becomes a
// write notice.
void Dsm::Engine::release() {
  // Home pages nobody has copied (home_exclusive) need no notice, unless a
  // first copy of one happened since the last release.
  if (sharing_.new_copies_since_last_check()) share_exclusive_pages();
  // A page may be listed twice, or no longer be dirty (written back early,
  // invalidated): only pages still dirty count.
  auto is_dirty = [&](std::size_t page) {
    return state_[page] == PageState::dirty || state_[page] == PageState::home_dirty;
  };
  // Runs of consecutive dirty pages (the usual order of dirty_) become
  // read-only with one mprotect each before their diffs are taken.
  for (std::size_t i = 0; i < dirty_.size();) {
    if (!is_dirty(dirty_[i])) {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < dirty_.size() && dirty_[j] == dirty_[j - 1] + 1 && is_dirty(dirty_[j])) ++j;
    protect(dirty_[i], j - i, PROT_READ);
    for (; i < j; ++i) {
      const std::size_t page = dirty_[i];
      if (state_[page] == PageState::home_dirty) {
        state_[page] = PageState::home_clean;
        record_notice(page);
      } else {
        write_diff(page, true);
      }
    }
  }
  dirty_.clear();
  flush_written_homes();
}

// Some rank copied a page homed here for the first time: exclusive pages it
// copied may have been written since, so they get a notice and are tracked
// from now on. Runs once per first copy event, not per release.
void Dsm::Engine::share_exclusive_pages() {
  std::erase_if(exclusive_, [&](std::size_t page) {
    if (state_[page] != PageState::home_exclusive) return true;  // freed meanwhile
    if (!sharing_.copied(page)) return false;
    protect(page, 1, PROT_READ);
    state_[page] = PageState::home_clean;
    record_notice(page);
    return true;
  });
}

void Dsm::Engine::flush_written_homes() {
  for (std::size_t home = 0; home < homes_written_.size(); ++home)
    if (homes_written_[home]) {
      transport_.flush(static_cast<int>(home));
      homes_written_[home] = false;
    }
}

// Acquire side: drops this rank's copy of a page another rank changed. Own
// changes to it are written home first, so none is lost.
void Dsm::Engine::invalidate(std::size_t page) {
  if (state_[page] == PageState::dirty) {
    write_diff(page);
    flush_written_homes();
  }
  if (state_[page] != PageState::cached) return;
  settle_prefetch(page);
  protect(page, 1, PROT_NONE);
  state_[page] = PageState::invalid;
  cache_.erase(page);
  ++stats_.invalidations;
}

void Dsm::Engine::invalidate_all_cached() {
  cache_.for_each([&](std::size_t page) { invalidate(page); });
}

// A prefetched page leaving the cache is counted as used when the
// application's view of it has a page-table entry, i.e. was touched; one
// being written is used by definition.
void Dsm::Engine::settle_prefetch(std::size_t page, bool written) {
  if (!cache_.contains(page) || !cache_.entry(page).prefetched) return;
  cache_.entry(page).prefetched = false;
  if (!track_prefetch_use_) return;
  ++(written || touched_since_mapped(page) ? stats_.prefetch_used : stats_.prefetch_unused);
}

bool Dsm::Engine::touched_since_mapped(std::size_t page) {
  if (pagemap_fd_ < 0) return false;
  std::uint64_t entry = 0;
  const off_t at =
      static_cast<off_t>(reinterpret_cast<std::uintptr_t>(view(page)) / page_size_ * sizeof entry);
  if (pread(pagemap_fd_, &entry, sizeof entry, at) != sizeof entry) return false;
  return (entry >> 63) != 0;  // "page present"
}

void* Dsm::Engine::allocate(std::size_t bytes, const Placement& placement) {
  MPI_Comm comm = runtime_.comm();
  // Every rank must describe the same allocation.
  const long long mine[] = {static_cast<long long>(bytes), static_cast<long long>(placement.kind),
                            static_cast<long long>(placement.pages_per_block), placement.rank};
  const detail::ValueRange agreed = detail::value_range(comm, rank_, mine);
  if (!agreed.uniform())
    throw Error(Errc::collective_mismatch, rank_,
                "Dsm::allocate: ranks passed different sizes or placements (sizes " +
                    std::to_string(agreed.low[0]) + " to " + std::to_string(agreed.high[0]) +
                    " bytes)");
  if (bytes == 0) throw Error(Errc::invalid_argument, rank_, "Dsm::allocate: size is 0");
  if (placement.kind == Placement::Kind::on_rank &&
      (placement.rank < 0 || placement.rank >= runtime_.size()))
    throw Error(Errc::invalid_rank, rank_,
                "Dsm::allocate: home rank " + std::to_string(placement.rank) +
                    " is outside the communicator of size " + std::to_string(runtime_.size()));
  if (placement.kind == Placement::Kind::cyclic && placement.pages_per_block == 0)
    throw Error(Errc::invalid_argument, rank_, "Dsm::allocate: cyclic block of 0 pages");
  const std::size_t pages = (bytes + page_size_ - 1) / page_size_;
  std::lock_guard<std::mutex> guard(mutex_);
  std::optional<std::size_t> first = allocator_.allocate(pages);
  if (!first)
    throw Error(
        Errc::no_memory, rank_,
        "Dsm::allocate: " + std::to_string(bytes) +
            " bytes do not fit the DSM region (MPIDSM_DSM_SIZE=" + std::to_string(region_.size()) +
            ", largest free " + std::to_string(allocator_.largest_free() * page_size_) + " bytes)");
  allocations_.insert(
      std::upper_bound(allocations_.begin(), allocations_.end(), *first,
                       [](std::size_t page, const Allocation& a) { return page < a.first; }),
      Allocation{*first, pages, placement});
  for (std::size_t i = 0; i < pages; ++i)
    if (detail::home_of(placement, i, pages, runtime_.size()) == rank_) become_home(*first + i);
  return view(*first);
}

void Dsm::Engine::free(void* address) {
  std::optional<Error> failure;
  const auto* at = static_cast<const std::byte*>(address);
  const std::size_t first = region_.contains(address) ? page_of(address) : 0;
  std::optional<std::size_t> pages;
  if (region_.contains(address) && at == view(first)) pages = allocator_.length_of(first);
  if (!pages)
    failure.emplace(Errc::unregistered, rank_,
                    "Dsm::free: address is not the start of a DSM allocation");
  detail::throw_if_any_failed(runtime_.comm(), rank_, failure, "Dsm::free");
  barrier();  // nobody still reads or writes it
  std::lock_guard<std::mutex> guard(mutex_);
  protect(first, *pages, PROT_NONE);
  // A later allocation here must read as zero. On one node the memory goes
  // back to the kernel. Where a NIC may have it registered (pinned), pages
  // are kept and every page this rank homed or fetched is zeroed instead: a
  // fresh page behind a registration would no longer be the one remote puts
  // reach.
  const bool give_back = master_.all_mapped();
  for (std::size_t page = first; page < first + *pages; ++page) {
    if (cache_.contains(page)) {
      settle_prefetch(page);
      cache_.erase(page);
    }
    const bool homed_here = state_[page] == PageState::home_clean ||
                            state_[page] == PageState::home_dirty ||
                            state_[page] == PageState::home_exclusive;
    if (!give_back && (homed_here || sharing_.fetched_here(page)))
      std::memset(master(page), 0, page_size_);
  }
  if (give_back) region_.discard(first * page_size_, *pages * page_size_);
  state_.reset(first, *pages);
  std::erase_if(allocations_, [&](const Allocation& a) { return a.first == first; });
  sharing_.forget(first, *pages);
  directory_.forget(first, *pages);
  std::erase_if(exclusive_,
                [&](std::size_t page) { return page >= first && page < first + *pages; });
  allocator_.free(first);
}

int Dsm::Engine::home_of(const void* address) {
  if (!region_.contains(address))
    throw Error(Errc::unregistered, rank_, "Dsm::home_of: address is outside the DSM region");
  std::lock_guard<std::mutex> guard(mutex_);
  const std::size_t page = page_of(address);
  const int home = home_of_page(page);
  if (home == -1)
    throw Error(Errc::unregistered, rank_, "Dsm::home_of: address is in no DSM allocation");
  if (home == detail::HomeDirectory::undecided) {
    const int recorded = directory_.look_up(page);
    return recorded == detail::HomeDirectory::undecided ? -1 : recorded;
  }
  return home;
}

void Dsm::Engine::prefetch(const void* address, std::size_t bytes) {
  if (bytes == 0) return;
  const auto* at = static_cast<const std::byte*>(address);
  if (!region_.contains(at) || !region_.contains(at + bytes - 1))
    throw Error(Errc::out_of_range, rank_,
                "Dsm::prefetch: " + std::to_string(bytes) + " bytes at " +
                    detail::describe_address(address) + " are not inside the DSM region");
  std::lock_guard<std::mutex> guard(mutex_);
  std::size_t count = 0;
  int home = -1;
  auto flush_batch = [&] {
    if (count == 0) return;
    fetch_batch(batch_.data(), count, home);
    for (std::size_t i = 0; i < count; ++i) cache_.entry(batch_[i]).prefetched = true;
    stats_.prefetched += count;
    count = 0;
  };
  for (std::size_t page = page_of(at), last = page_of(at + bytes - 1); page <= last; ++page) {
    const int page_home = home_of_page(page);
    if (state_[page] != PageState::invalid || page_home < 0) continue;
    if (page_home != home || count == batch_.size()) flush_batch();
    home = page_home;
    batch_[count++] = page;
  }
  flush_batch();
}

// Nobody has a copy of a page that just became this rank's: it is written
// freely until someone does.
void Dsm::Engine::become_home(std::size_t page) {
  state_[page] = PageState::home_exclusive;
  protect(page, 1, PROT_READ | PROT_WRITE);
  exclusive_.push_back(page);
}

int Dsm::Engine::home_of_page(std::size_t page) const {
  auto after = std::upper_bound(allocations_.begin(), allocations_.end(), page,
                                [](std::size_t p, const Allocation& a) { return p < a.first; });
  if (after == allocations_.begin()) return -1;
  const Allocation& a = *(after - 1);
  if (page >= a.first + a.pages) return -1;
  const int home = detail::home_of(a.placement, page - a.first, a.pages, runtime_.size());
  return home == detail::decided_at_first_touch ? directory_.known(page) : home;
}

DsmStats Dsm::Engine::stats() {
  std::lock_guard<std::mutex> guard(mutex_);
  DsmStats snapshot = stats_;
  snapshot.barrier_ns = clock_.to_ns(barrier_ticks_.load(std::memory_order_relaxed));
  snapshot.lock_wait_ns = clock_.to_ns(lock_wait_ticks_.load(std::memory_order_relaxed));
  // Prefetched pages still cached are classified now, without settling them.
  if (track_prefetch_use_)
    cache_.for_each([&](std::size_t page) {
      if (cache_.entry(page).prefetched)
        ++(touched_since_mapped(page) ? snapshot.prefetch_used : snapshot.prefetch_unused);
    });
  return snapshot;
}

}  // namespace mpidsm
