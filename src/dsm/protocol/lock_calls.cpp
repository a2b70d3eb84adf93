// Acquiring a lock, and releasing it with notices, through one answered
// call each, where UCX reaches its home through messages (lock_table.hpp).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lock_table.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

// The answer of this thread's last acquiring call that found the lock free,
// until read_new_notices() takes it: the same thread, right after acquire().
struct Answered {
  const LockTable* table = nullptr;
  std::size_t id = 0;
  LockTable::AcquireAnswer answer;
};
thread_local Answered answered;

// An answer of the wrong size: the home broke the protocol, which this
// rank reports as the transport's failure.
[[noreturn]] void throw_no_answer(int rank, int home, const char* operation,
                                  const std::string& asked, std::size_t size) {
  throw Error(Errc::transport, rank,
              std::string(operation) + ": rank " + std::to_string(home) + " answered " + asked +
                  " with " + std::to_string(size) + " bytes, which is no answer");
}

}  // namespace

std::size_t LockTable::ask_home(std::uint32_t handler, std::size_t id) {
  const AcquireCall call{id, seen_epoch_[id], seen_count_[id]};
  Request request = messaging_.call_answered(home(id), handler, &call, sizeof call,
                                             &answered.answer, sizeof answered.answer);
  request.wait();
  return request.message().size;
}

std::uint64_t LockTable::acquire_through_call(std::size_t id) {
  answered.table = nullptr;  // whatever an acquire that failed left
  const std::size_t size = ask_home(acquire_handler_, id);
  if (size < offsetof(AcquireAnswer, entries) &&
      !(size == sizeof(std::uint64_t) && answered.answer.predecessor != 0))
    throw_no_answer(transport_.rank(), home(id), "Dsm::lock",
                    "the acquire of lock " + std::to_string(id), size);
  if (answered.answer.predecessor == 0) {
    answered.table = this;
    answered.id = id;
  }
  return answered.answer.predecessor;
}

const LockTable::AcquireAnswer& LockTable::read_log_through_call(std::size_t id) {
  answered.table = nullptr;
  const std::size_t size = ask_home(log_handler_, id);
  if (size < offsetof(AcquireAnswer, entries))
    throw_no_answer(transport_.rank(), home(id), "Dsm::lock",
                    "the read of lock " + std::to_string(id) + "'s log", size);
  return answered.answer;
}

const LockTable::AcquireAnswer* LockTable::take_answer(std::size_t id) const {
  if (answered.table != this || answered.id != id) return nullptr;
  answered.table = nullptr;
  return &answered.answer;
}

void LockTable::copy_entries(std::size_t id, std::uint64_t from, std::uint64_t to,
                             std::uint64_t* out) const {
  const auto* ring =
      reinterpret_cast<const std::uint64_t*>(local_record(id) + LockRecordLayout::ring);
  RingSpan spans[2];
  for (int s = 0, n = ring_spans(from, to, LockRecordLayout::ring_entries, spans); s < n; ++s) {
    std::memcpy(out, ring + spans[s].index, spans[s].length * sizeof(std::uint64_t));
    out += spans[s].length;
  }
}

LockTable::AcquireCall LockTable::checked_call(int source, const std::byte* bytes, std::size_t size,
                                               const char* what) const {
  AcquireCall call{};
  if (size == sizeof call) std::memcpy(&call, bytes, sizeof call);
  if (size != sizeof call || call.id >= locks_ || home(call.id) != transport_.rank()) {
    // Only a broken peer sends this: no answer would keep it consistent.
    std::fprintf(stderr, "mpidsm: rank %d: malformed %s from rank %d\n", transport_.rank(), what,
                 source);
    std::abort();
  }
  return call;
}

// The lock's last holder appended (remote completion) before it freed the
// tail or handed the lock over, which the caller saw: the log is complete.
std::size_t LockTable::fill_log_answer(const AcquireCall& call) {
  std::memcpy(&answer_.header, local_record(call.id) + LockRecordLayout::header,
              sizeof answer_.header);
  const std::uint64_t first = answer_.header.epoch == call.seen_epoch ? call.seen_count : 0;
  std::size_t entries = 0;
  if (answer_.header.count > first &&
      answer_.header.count - first <= LockRecordLayout::ring_entries) {
    entries = static_cast<std::size_t>(answer_.header.count - first);
    copy_entries(call.id, first, answer_.header.count, answer_.entries);
  }
  return offsetof(AcquireAnswer, entries) + entries * sizeof(std::uint64_t);
}

Answer LockTable::answer_acquire(void* context, int source, const std::byte* bytes,
                                 std::size_t size) {
  auto& table = *static_cast<LockTable*>(context);
  const AcquireCall call = table.checked_call(source, bytes, size, "lock acquire");
  AcquireAnswer& answer = table.answer_;
  answer.predecessor =
      std::atomic_ref<std::uint64_t>(
          *reinterpret_cast<std::uint64_t*>(table.local_record(call.id) + LockRecordLayout::tail))
          .exchange(static_cast<std::uint64_t>(source) + 1, std::memory_order_seq_cst);
  if (answer.predecessor != 0) return {&answer.predecessor, sizeof answer.predecessor, true};
  return {&answer, table.fill_log_answer(call), true};
}

Answer LockTable::answer_log_read(void* context, int source, const std::byte* bytes,
                                  std::size_t size) {
  auto& table = *static_cast<LockTable*>(context);
  const AcquireCall call = table.checked_call(source, bytes, size, "lock log read");
  table.answer_.predecessor = 0;
  return {&table.answer_, table.fill_log_answer(call), true};
}

bool LockTable::append_through_call(std::size_t id, std::uint64_t epoch,
                                    std::span<const std::uint64_t> notices,
                                    std::span<const std::byte> diffs, bool free) {
  if (diffs.size() > max_diffs_)
    throw Error(Errc::invalid_argument, transport_.rank(),
                "Dsm::unlock: " + std::to_string(diffs.size()) + " bytes of diffs for lock " +
                    std::to_string(id) + ", more than a release carries (" +
                    std::to_string(max_diffs_) + ")");
  // Only the newest ring_entries notices can be kept.
  const std::size_t kept = std::min(notices.size(), LockRecordLayout::ring_entries);
  const ReleaseCall call{id, epoch, notices.size(), kept, free ? 1u : 0u, diffs.size()};
  std::byte* bytes = &release_call_[0];
  std::memcpy(bytes, &call, sizeof call);
  std::byte* entries = bytes + sizeof call;
  if (kept != 0)
    std::memcpy(entries, notices.data() + (notices.size() - kept), kept * sizeof(std::uint64_t));
  std::byte* end = entries + kept * sizeof(std::uint64_t);
  if (!diffs.empty()) std::memcpy(end, diffs.data(), diffs.size());
  end += diffs.size();
  ReleaseAnswer answer{};
  Request request =
      messaging_.call_answered(home(id), release_handler_, bytes,
                               static_cast<std::size_t>(end - bytes), &answer, sizeof answer);
  request.wait();
  if (request.message().size != sizeof answer)
    throw_no_answer(transport_.rank(), home(id), "Dsm::unlock",
                    "the release of lock " + std::to_string(id), request.message().size);
  seen_epoch_[id] = epoch;
  seen_count_[id] = answer.count;
  return free && answer.tail == me_;
}

Answer LockTable::answer_release(void* context, int source, const std::byte* bytes,
                                 std::size_t size) {
  auto& table = *static_cast<LockTable*>(context);
  ReleaseCall call{};
  if (size >= sizeof call) std::memcpy(&call, bytes, sizeof call);
  if (size < sizeof call || call.id >= table.locks_ ||
      table.home(call.id) != table.transport_.rank() ||
      call.kept > LockRecordLayout::ring_entries || call.kept > call.appended ||
      call.diff_bytes > table.max_diffs_ ||
      size != sizeof call + call.kept * sizeof(std::uint64_t) + call.diff_bytes) {
    std::fprintf(stderr, "mpidsm: rank %d: malformed lock release from rank %d\n",
                 table.transport_.rank(), source);
    std::abort();
  }
  const std::byte* source_entries = bytes + sizeof call;
  // The diffs first: whoever takes the lock next and reads the notices
  // fetches the pages with these changes in.
  if (call.diff_bytes != 0)
    table.apply_diffs_(table.apply_context_, source, 0,
                       source_entries + call.kept * sizeof(std::uint64_t), call.diff_bytes);
  std::byte* record = table.local_record(call.id);
  NoticeLogHeader header;
  std::memcpy(&header, record + LockRecordLayout::header, sizeof header);
  if (header.epoch != call.epoch) header = {call.epoch, 0};
  const std::uint64_t from = header.count + (call.appended - call.kept);
  const std::uint64_t to = header.count + call.appended;
  auto* ring = reinterpret_cast<std::uint64_t*>(record + LockRecordLayout::ring);
  RingSpan spans[2];
  for (int s = 0, n = ring_spans(from, to, LockRecordLayout::ring_entries, spans); s < n; ++s) {
    std::memcpy(ring + spans[s].index, source_entries, spans[s].length * sizeof(std::uint64_t));
    source_entries += spans[s].length * sizeof(std::uint64_t);
  }
  header.count = to;
  std::memcpy(record + LockRecordLayout::header, &header, sizeof header);
  ReleaseAnswer& answer = table.release_answer_;
  answer.count = to;
  answer.tail = 0;
  if (call.free) {
    // After the log's writes: whoever swaps itself in next reads them.
    std::uint64_t expected = static_cast<std::uint64_t>(source) + 1;
    std::atomic_ref<std::uint64_t>(
        *reinterpret_cast<std::uint64_t*>(record + LockRecordLayout::tail))
        .compare_exchange_strong(expected, 0, std::memory_order_seq_cst);
    answer.tail = expected;
  }
  return {&answer, sizeof answer, true};
}

}  // namespace mpidsm::detail
