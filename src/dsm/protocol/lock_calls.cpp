// Acquiring a lock, and releasing it with notices, through one answered
// call each, where UCX reaches its home through messages (lock_table.hpp);
// where the home keeps the queue, the answer to a waiter's call is its
// grant, sent by the home when the lock becomes the waiter's.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agreed_keys.hpp"
#include "lock_table.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

// The answer of this thread's last acquiring call that found the lock free,
// until read_new_notices() takes it: the same thread, right after acquire().
// Words, so that the struct at its start is aligned; sized once per thread
// for the largest answer (a grant's pages follow the struct).
struct Answered {
  const LockTable* table = nullptr;
  std::size_t id = 0;
  std::vector<std::uint64_t> words;
  LockTable::AcquireAnswer& answer() {
    return *reinterpret_cast<LockTable::AcquireAnswer*>(words.data());
  }
  // Room for `capacity` bytes: grown once per thread (and page size), so
  // later acquires allocate nothing.
  void* room(std::size_t capacity) {
    if (words.size() * sizeof(std::uint64_t) < capacity)
      words.resize((capacity + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
    return words.data();
  }
};
thread_local Answered answered;
// The grant a home composes for a waiter when it releases the lock itself,
// outside any handler (handlers compose theirs in the table's answer).
thread_local Answered granting;
// The wishes of this thread's current acquire (lock_grants.hpp).
thread_local std::uint64_t held_wishes[LockGrantWishes::kPages];

// An answer of the wrong size: the home broke the protocol, which this
// rank reports as the transport's failure.
[[noreturn]] void throw_no_answer(int rank, int home, const char* operation,
                                  const std::string& asked, std::size_t size) {
  throw Error(Errc::transport, rank,
              std::string(operation) + ": rank " + std::to_string(home) + " answered " + asked +
                  " with " + std::to_string(size) + " bytes, which is no answer");
}

}  // namespace

void LockTable::hold_wishes(std::span<const std::uint64_t> wished) {
  std::ranges::fill(held_wishes, std::uint64_t{0});
  std::ranges::copy(wished.first(std::min(wished.size(), LockGrantWishes::kPages)), held_wishes);
}

std::size_t LockTable::ask_home(std::uint32_t handler, std::size_t id) {
  AcquireCall call{id, seen_epoch_[id], seen_count_[id], {}};
  std::ranges::copy(held_wishes, call.wished);
  const std::size_t capacity = answer_capacity();
  Request request = messaging_.call_answered(home(id), handler, &call, sizeof call,
                                             answered.room(capacity), capacity);
  request.wait();
  return request.message().size;
}

void LockTable::check_log_answer(const AcquireAnswer& answer, std::size_t size,
                                 std::size_t id) const {
  const auto granted = static_cast<std::size_t>(
      std::ranges::find(answer.granted, std::uint64_t{0}) - std::begin(answer.granted));
  if (size < offsetof(AcquireAnswer, entries) ||
      answer.entries_sent > LockRecordLayout::ring_entries ||
      size != offsetof(AcquireAnswer, entries) + answer.entries_sent * sizeof(std::uint64_t) +
                  granted * page_size_)
    throw_no_answer(transport_.rank(), home(id), "Dsm::lock",
                    "the log of lock " + std::to_string(id), size);
}

std::uint64_t LockTable::acquire_through_call(std::size_t id) {
  answered.table = nullptr;  // whatever an acquire that failed left
  const std::size_t size = ask_home(acquire_handler_, id);
  const AcquireAnswer& answer = answered.answer();
  if (size < sizeof answer.predecessor)
    throw_no_answer(transport_.rank(), home(id), "Dsm::lock",
                    "the acquire of lock " + std::to_string(id), size);
  if (answer.predecessor != 0) {
    if (size != sizeof answer.predecessor)
      throw_no_answer(transport_.rank(), home(id), "Dsm::lock",
                      "the acquire of lock " + std::to_string(id), size);
    return answer.predecessor;
  }
  check_log_answer(answer, size, id);
  answered.table = this;
  answered.id = id;
  return 0;
}

const LockTable::AcquireAnswer& LockTable::read_log_through_call(std::size_t id) {
  answered.table = nullptr;
  const std::size_t size = ask_home(log_handler_, id);
  check_log_answer(answered.answer(), size, id);
  return answered.answer();
}

bool LockTable::acquire_from_queue(std::size_t id, const std::uint64_t& give_up, bool resume) {
  Request grant = resume ? receive_grant(id) : call_for_grant(id);
  if (!LibraryMessaging::wait_serving_peers(grant, give_up)) return false;
  take_grant(grant, id);
  return true;
}

Request LockTable::call_for_grant(std::size_t id) {
  answered.table = nullptr;
  const std::size_t capacity = answer_capacity();
  AcquireCall call{id, seen_epoch_[id], seen_count_[id], {}};
  std::ranges::copy(held_wishes, call.wished);
  return messaging_.call_answered_agreed(home(id), acquire_handler_, &call, sizeof call,
                                         answered.room(capacity), capacity, lock_grant_key(id));
}

// Homes do not move while a wait is queued (lock_homes.hpp): an abandoned
// wait's grant comes from the home it queued at, under the lock's key.
Request LockTable::receive_grant(std::size_t id) {
  answered.table = nullptr;
  const std::size_t capacity = answer_capacity();
  return messaging_.receive_agreed(home(id), lock_grant_key(id), answered.room(capacity), capacity);
}

void LockTable::take_grant(const Request& received, std::size_t id) {
  const std::size_t size = received.message().size;
  const AcquireAnswer& answer = answered.answer();
  if (size < sizeof answer.predecessor || answer.predecessor != 0)
    throw_no_answer(transport_.rank(), home(id), "Dsm::lock",
                    "the acquire of lock " + std::to_string(id), size);
  check_log_answer(answer, size, id);
  answered.table = this;
  answered.id = id;
}

bool LockTable::granted_since_abandoned(std::size_t id) {
  if (!(queued_at_home_ && calls(id)))
    return std::atomic_ref<std::uint64_t>(my_node(id).granted).load() != 0;
  // A grant sent meanwhile waits in UCX for its receive.
  Request grant = receive_grant(id);
  return LibraryMessaging::withdraw_unless_arrived(grant);
}

const LockTable::AcquireAnswer* LockTable::take_answer(std::size_t id) const {
  if (answered.table != this || answered.id != id) return nullptr;
  answered.table = nullptr;
  return &answered.answer();
}

void LockTable::note_granted(const AcquireAnswer& answer) {
  std::ranges::copy(answer.granted, granted_pages_);
  granted_bytes_ = reinterpret_cast<const std::byte*>(answer.entries + answer.entries_sent);
}

const std::byte* LockTable::granted(std::size_t page) const {
  const std::uint64_t wish = static_cast<std::uint64_t>(page) + 1;
  for (std::size_t i = 0; i < LockGrantWishes::kPages && granted_pages_[i] != 0; ++i)
    if (granted_pages_[i] == wish) return granted_bytes_ + i * page_size_;
  return nullptr;
}

void LockTable::copy_entries(std::size_t id, std::uint64_t from, std::uint64_t to,
                             std::uint64_t* out) {
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
  const std::size_t pages = pages_.size() / page_size_;
  auto malformed = [&](std::uint64_t wish) {
    const std::uint64_t page = wish & LockGrantWishes::kPageMask;
    return (wish != 0 && page == 0) || page > pages ||
           ((wish & LockGrantWishes::kCountCopy) && !(wish & LockGrantWishes::kFetch));
  };
  if (size != sizeof call || call.id >= locks_ || !may_host(call.id) ||
      std::ranges::any_of(call.wished, malformed)) {
    // Only a broken peer sends this: no answer would keep it consistent.
    std::fprintf(stderr, "mpidsm: rank %d: malformed %s from rank %d\n", transport_.rank(), what,
                 source);
    std::abort();
  }
  return call;
}

// The lock's last holder appended (remote completion) before it freed the
// tail or handed the lock over, which the caller saw: the log is complete.
// A wished page goes with the answer when the caller holds no copy (a
// fetch: counted first, as PageCalls::answer does), or when an entry it has
// not read names the page as another rank's: the master copy then holds that
// writer's diffs (applied before its notices were appended), as a refresh
// right after the acquire would find it.
std::size_t LockTable::fill_log_answer(const AcquireCall& call, int source, AcquireAnswer& out) {
  std::memcpy(&out.header, local_record(call.id) + LockRecordLayout::header, sizeof out.header);
  const std::uint64_t first = out.header.epoch == call.seen_epoch ? call.seen_count : 0;
  std::size_t entries = 0;
  if (out.header.count > first && out.header.count - first <= LockRecordLayout::ring_entries) {
    entries = static_cast<std::size_t>(out.header.count - first);
    copy_entries(call.id, first, out.header.count, out.entries);
  }
  out.entries_sent = entries;
  std::ranges::fill(out.granted, std::uint64_t{0});
  auto* bytes = reinterpret_cast<std::byte*>(out.entries + entries);
  std::size_t granted = 0;
  for (const std::uint64_t wish : call.wished) {
    if (wish == 0) continue;
    const auto page = static_cast<std::size_t>((wish & LockGrantWishes::kPageMask) - 1);
    const bool written = std::any_of(out.entries, out.entries + entries, [&](std::uint64_t e) {
      return notice_page(e) == page && notice_writer(e) != source;
    });
    if (!written && !(wish & LockGrantWishes::kFetch)) continue;
    if (wish & LockGrantWishes::kCountCopy) sharing_.count_copies_here(page, 1);
    std::memcpy(bytes + granted * page_size_, pages_.data() + page * page_size_, page_size_);
    out.granted[granted++] = page + 1;
  }
  return offsetof(AcquireAnswer, entries) + entries * sizeof(std::uint64_t) + granted * page_size_;
}

Answer LockTable::answer_acquire(void* context, int source, const std::byte* bytes,
                                 std::size_t size) {
  auto& table = *static_cast<LockTable*>(context);
  const AcquireCall call = table.checked_call(source, bytes, size, "lock acquire");
  AcquireAnswer& answer = table.answer();
  // Queued here: the grant answers the call (grant()).
  if (table.queued_at_home_ && !table.queues_.take(call.id, source, call))
    return Answer::deferred();
  answer.predecessor =
      table.queued_at_home_
          ? 0
          : std::atomic_ref<std::uint64_t>(table.tail_here(call.id))
                .exchange(static_cast<std::uint64_t>(source) + 1, std::memory_order_seq_cst);
  if (answer.predecessor != 0) return {&answer.predecessor, sizeof answer.predecessor, true};
  return {&answer, table.fill_log_answer(call, source, answer), true};
}

Answer LockTable::answer_log_read(void* context, int source, const std::byte* bytes,
                                  std::size_t size) {
  auto& table = *static_cast<LockTable*>(context);
  const AcquireCall call = table.checked_call(source, bytes, size, "lock log read");
  table.answer().predecessor = 0;
  return {&table.answer(), table.fill_log_answer(call, source, table.answer()), true};
}

std::size_t LockTable::compose_release(std::size_t id, std::uint64_t epoch,
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
  return static_cast<std::size_t>(end - bytes);
}

bool LockTable::append_through_call(std::size_t id, std::uint64_t epoch,
                                    std::span<const std::uint64_t> notices,
                                    std::span<const std::byte> diffs, bool free) {
  const std::size_t size = compose_release(id, epoch, notices, diffs, free);
  ReleaseAnswer answer{};
  Request request = messaging_.call_answered(home(id), release_handler_, &release_call_[0], size,
                                             &answer, sizeof answer);
  request.wait();
  if (request.message().size != sizeof answer)
    throw_no_answer(transport_.rank(), home(id), "Dsm::unlock",
                    "the release of lock " + std::to_string(id), request.message().size);
  seen_epoch_[id] = epoch;
  seen_count_[id] = answer.count;
  return free && answer.tail == me_;
}

LockTable::ReleaseCall LockTable::checked_release(int source, const std::byte* bytes,
                                                  std::size_t size) const {
  ReleaseCall call{};
  if (size >= sizeof call) std::memcpy(&call, bytes, sizeof call);
  if (size < sizeof call || call.id >= locks_ || !may_host(call.id) ||
      call.kept > LockRecordLayout::ring_entries || call.kept > call.appended ||
      call.diff_bytes > max_diffs_ ||
      size != sizeof call + call.kept * sizeof(std::uint64_t) + call.diff_bytes) {
    std::fprintf(stderr, "mpidsm: rank %d: malformed lock release from rank %d\n",
                 transport_.rank(), source);
    std::abort();
  }
  return call;
}

std::uint64_t LockTable::append_release(const ReleaseCall& call, int source,
                                        const std::byte* entries) {
  if (call.kept != 0) {
    std::uint64_t last = 0;
    std::memcpy(&last, entries + (call.kept - 1) * sizeof last, sizeof last);
    homes_.note_release(call.id, notice_page(last));
  }
  // The diffs first: whoever takes the lock next and reads the notices
  // fetches the pages with these changes in.
  if (call.diff_bytes != 0)
    apply_diffs_(apply_context_, source, 0, entries + call.kept * sizeof(std::uint64_t),
                 call.diff_bytes);
  std::byte* record = local_record(call.id);
  NoticeLogHeader header;
  std::memcpy(&header, record + LockRecordLayout::header, sizeof header);
  if (header.epoch != call.epoch) header = {call.epoch, 0};
  const std::uint64_t from = header.count + (call.appended - call.kept);
  const std::uint64_t to = header.count + call.appended;
  auto* ring = reinterpret_cast<std::uint64_t*>(record + LockRecordLayout::ring);
  RingSpan spans[2];
  for (int s = 0, n = ring_spans(from, to, LockRecordLayout::ring_entries, spans); s < n; ++s) {
    std::memcpy(ring + spans[s].index, entries, spans[s].length * sizeof(std::uint64_t));
    entries += spans[s].length * sizeof(std::uint64_t);
  }
  header.count = to;
  std::memcpy(record + LockRecordLayout::header, &header, sizeof header);
  return to;
}

Answer LockTable::answer_release(void* context, int source, const std::byte* bytes,
                                 std::size_t size) {
  auto& table = *static_cast<LockTable*>(context);
  const ReleaseCall call = table.checked_release(source, bytes, size);
  ReleaseAnswer& answer = table.release_answer_;
  answer.count = table.append_release(call, source, bytes + sizeof call);
  answer.tail = 0;
  if (call.free) {
    // After the log's writes: whoever swaps itself in next reads them.
    std::uint64_t expected = static_cast<std::uint64_t>(source) + 1;
    std::atomic_ref<std::uint64_t>(table.tail_here(call.id))
        .compare_exchange_strong(expected, 0, std::memory_order_seq_cst);
    answer.tail = expected;
  }
  return {&answer, sizeof answer, true};
}

void LockTable::release_one_way(std::size_t id, std::uint64_t epoch,
                                std::span<const std::uint64_t> notices,
                                std::span<const std::byte> diffs) {
  const std::size_t size = compose_release(id, epoch, notices, diffs, true);
  // The bytes are free again on return; the handler's return is awaited
  // only by complete_releases().
  transport_.call(home(id), one_way_release_handler_, &release_call_[0], size);
  if (!releasing_to_[static_cast<std::size_t>(home(id))]) {
    releasing_to_[static_cast<std::size_t>(home(id))] = true;
    released_to_.push_back(home(id));
  }
  // Only the holder appends: the log counts what it read plus what it added,
  // as the home's append will (a new epoch starts it again).
  const std::uint64_t read = seen_epoch_[id] == epoch ? seen_count_[id] : 0;
  seen_epoch_[id] = epoch;
  seen_count_[id] = read + notices.size();
}

void LockTable::take_release(void* context, int source, std::uint64_t, const std::byte* bytes,
                             std::size_t size) {
  auto& table = *static_cast<LockTable*>(context);
  const ReleaseCall call = table.checked_release(source, bytes, size);
  table.append_release(call, source, bytes + sizeof call);
  AcquireCall waiting{};
  const int next = table.queues_.pass(call.id, source, waiting);
  table.grant(call.id, next, waiting, true);
}

// The home's own wait is on its granted word; a remote waiter's acquiring
// call gets its answer now, after the log's appends it must see.
void LockTable::grant(std::size_t id, int next, const AcquireCall& call, bool in_handler) {
  if (next < 0) return;
  if (next == transport_.rank()) {
    std::atomic_ref<std::uint64_t>(my_node(id).granted).store(1, std::memory_order_release);
    return;
  }
  AcquireAnswer& out =
      in_handler ? answer() : *static_cast<AcquireAnswer*>(granting.room(answer_capacity()));
  out.predecessor = 0;
  const Answer grant{&out, fill_log_answer(call, next, out), true};
  if (in_handler)
    messaging_.answer_from_handler(next, lock_grant_key(id), grant);
  else
    messaging_.answer_at_once(next, lock_grant_key(id), grant);
}

}  // namespace mpidsm::detail
