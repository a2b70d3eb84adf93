// DSM locks: an MCS queue lock per id on remote atomics, so handing a lock
// over involves only the two ranks concerned and never the CPU of a third
// (the lock's home only holds the queue tail word, reached by remote atomics).
// Each lock's home also keeps the lock's write-notice log (notice_log.hpp).
//
// Memory, in shared words (shared_words.hpp: committed as used, CPU atomics
// where every rank maps every other): per rank, the records of the locks homed here (id % ranks ==
// rank, 1 KiB each) and one queue node per lock id (16 bytes) for this
// rank's own waiting.
//
// Where UCX reaches a home through messages (tcp), each atomic and get is a
// round trip anyway, so acquiring a lock is one answered call instead of a
// swap and a read of the log: the home swaps the tail itself and, when the
// lock was free, answers with the log's header and the entries the caller
// has not seen. A waiter handed the lock from the queue reads the log with
// one such call too. Releasing with notices is one call: the home appends
// them and frees the tail unless a waiter queued. The home's own atomics on
// the tail are the CPU's, as UCX's are over tcp and shared memory, so
// callers of both kinds share one queue; a NIC's atomics are not coherent
// with the CPU's, so where some rank reaches some home through RDMA, every
// acquire swaps with UCX. An acquiring call may also bring pages the lock's
// home is home to, written since (lock_grants.hpp). Where every rank is
// alone on its node, the home keeps each lock's queue itself and hands the
// lock on (lock_queues.hpp): a release is then a one-way call, and a
// waiter's acquiring call is answered when the lock becomes its own, the
// answer being the grant with the log (an agreed message keyed by the lock,
// so a waiter that abandoned its wait, see acquire(), receives it later). A hand-over
// then costs the release and the grant, where a granted flag and a call for
// the log took three messages more and a round trip.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "dsm/memory/lazy_array.hpp"
#include "dsm/memory/shared_words.hpp"
#include "lock_grants.hpp"
#include "lock_homes.hpp"
#include "lock_queues.hpp"
#include "mpidsm/transport.hpp"
#include "notice_log.hpp"
#include "sharing.hpp"
#include "transport/library_messaging.hpp"

namespace mpidsm::detail {

class LockTable {
 public:
  // Collective. A release through a call may carry diffs for the lock's
  // home (begin_release): the home hands them to `apply_diffs` (with
  // `apply_context`), as if they had come in a message of their own, before
  // it appends the notices; `max_diffs` bytes at most. `pages` (this rank's
  // master copies, `page_size` bytes each) are what a grant answers from.
  // `sharing` counts the copies a grant hands out (it may be constructed
  // after this table: no peer calls before every rank constructed both).
  // Ids below `movable` may move home (lock_homes.hpp).
  LockTable(MPI_Comm comm, Transport& transport, std::size_t locks, std::size_t movable,
            const MappablePeers& mappable, Transport::RemoteHandler apply_diffs,
            void* apply_context, std::size_t max_diffs, std::span<const std::byte> pages,
            std::size_t page_size, SharingRecord& sharing);
  ~LockTable();  // collective
  // The transport is gone: forget the table without deregistering it.
  void abandon_transport() { words_.abandon_transport(); }
  LockTable(const LockTable&) = delete;
  LockTable& operator=(const LockTable&) = delete;

  std::size_t count() const { return locks_; }
  int home(std::size_t id) const { return homes_.home(id); }
  // At a barrier's entry, then after its exchange on every rank alike: the
  // locks' moves (lock_homes.hpp).
  void propose_moves(const std::function<int(std::size_t)>& home_of_page,
                     std::vector<std::int64_t>& out);
  void apply_moves(std::span<const std::int64_t> moves);

  // Blocks until this rank holds `id` (true); FIFO among waiters. False when
  // `give_up` turned non-zero first (a holder entered a barrier, which no
  // waiter could join): the wait is abandoned but this rank keeps its place
  // in the queue. With `resume`, waits on in the place an abandoned wait
  // kept. Where the acquire is a call, `wished` (lock_grants.hpp's wishes on
  // the wire) go with it and with the log's read after a hand-over.
  bool acquire(std::size_t id, const std::uint64_t& give_up, bool resume,
               std::span<const std::uint64_t> wished = {});
  // Abandoned waits, kept for the caller, which serialises these calls with
  // its acquire() and release() of the same id.
  void mark_abandoned(std::size_t id);
  bool take_abandoned(std::size_t id);  // whether `id`'s wait was abandoned (no more)
  // Without the caller's serialisation: a hint, exact once serialised.
  bool any_abandoned() const { return abandoned_count_.load(std::memory_order_relaxed) != 0; }
  // An abandoned wait, other than those `busy` names, whose lock was granted
  // since (this rank holds it and must pass it on), taken.
  template <class Busy>
  std::optional<std::size_t> take_granted_abandoned(Busy&& busy);
  // Holder only. Releasing `id` is one operation in two steps, so that a
  // caller may append under its own lock and hand over outside it (the
  // hand-over may wait for a successor to link). begin_release appends
  // `notices` (the pages this rank released while it held `id`) to the
  // lock's log in `epoch`, remote completion on return; through a call the
  // home frees the lock with the append when nobody queued. finish_release
  // then hands `id` to the next waiter, or frees it when none waits, unless
  // the append freed it already. Callers serialise begin_release calls.
  struct Release {
    std::size_t id = 0;
    bool freed = false;   // the append freed the lock: nothing is left to hand over
    bool called = false;  // through a call: unless freed, a successor queued
  };
  // `diffs` (only where releases_by_call(id)): diff_message.hpp's records
  // for the lock's home, applied there before the notices are appended.
  [[nodiscard]] Release begin_release(std::size_t id, std::uint64_t epoch,
                                      std::span<const std::uint64_t> notices,
                                      std::span<const std::byte> diffs = {});
  // Whether releasing `id` is a call to its home, which can carry diffs;
  // acquiring it then is a call too, whose answer can carry pages.
  bool releases_by_call(std::size_t id) const { return calls(id); }
  // Holder only. Asks for `page`, which must be homed at `id`'s home, with
  // the grants of `id` from now on (lock_grants.hpp).
  void wish(std::size_t id, std::size_t page) { wishes_.remember(id, page); }
  // The pages wished for `id` (page + 1; 0: none).
  std::span<const std::uint64_t, LockGrantWishes::kPages> wishes(std::size_t id) const {
    return wishes_.of(id);
  }
  // Right after read_new_notices: the bytes its answer brought for `page`
  // (valid until this thread's next call), or nullptr.
  const std::byte* granted(std::size_t page) const;
  void finish_release(const Release& release);
  // The one-way releases this rank sent (where homes keep the queues) have
  // been applied at their homes: before a barrier or a sync tells anyone
  // of this rank's releases.
  void complete_releases();

  // The lock's flag word at its home (Dsm::set_flag): set to `value`, or read.
  void set_flag(std::size_t id, std::uint64_t value);
  std::uint64_t flag(std::size_t id);

  // Holder only. The notices appended since this rank last read the log in
  // `epoch`, into `out`; false when more were appended than the ring keeps.
  // Right after an acquire() that took a free lock through a call, or was
  // granted it by a home keeping the queue, from its answer, with no round
  // trip; after a hand-over from an MCS queue, through one answered call
  // where the home is reached through messages (a read of the header, then
  // of the entries, would be two round trips).
  bool read_new_notices(std::size_t id, std::uint64_t epoch, std::vector<std::uint64_t>& out);

  // What an acquiring call asks and the home answers (lock_calls.cpp); a
  // holder's call for the log after a hand-over asks and gets the same.
  struct AcquireCall {
    std::uint64_t id;
    std::uint64_t seen_epoch, seen_count;           // the caller's last read of the log
    std::uint64_t wished[LockGrantWishes::kPages];  // lock_grants.hpp's wishes (0: none)
  };
  // Then `kept` notices, then `diff_bytes` of diffs.
  struct ReleaseCall {
    std::uint64_t id, epoch;
    std::uint64_t appended;  // notices appended; the log keeps the last `kept`
    std::uint64_t kept;
    std::uint64_t free;  // 1: free the lock unless someone queued
    std::uint64_t diff_bytes;
  };
  struct ReleaseAnswer {
    std::uint64_t tail;   // the tail the home found (the caller: it freed the lock)
    std::uint64_t count;  // the log's entries in `epoch` now
  };
  struct AcquireAnswer {
    std::uint64_t predecessor;  // the tail the call swapped out (0: the lock was free)
    NoticeLogHeader header;     // when it was free: the log's header
    std::uint64_t entries_sent;
    // Page + 1 of each page granted (a fetch, or a refresh of a page another
    // rank wrote since the caller's read), in the order their bytes follow
    // the entries; 0: no more.
    std::uint64_t granted[LockGrantWishes::kPages];
    // The entries the caller has not read (its seen_ words chose the first).
    std::uint64_t entries[LockRecordLayout::ring_entries];
  };

 private:
  struct QueueNode {
    std::uint64_t next;     // successor rank + 1, set by the successor
    std::uint64_t granted;  // set to 1 by the predecessor when it hands over
  };
  // In its static home's shared words.
  std::size_t record_offset(std::size_t id) const {
    return (id / ranks_) * LockRecordLayout::bytes;
  }
  std::size_t node_offset(std::size_t id) const { return nodes_base_ + id * sizeof(QueueNode); }
  QueueNode& my_node(std::size_t id) const;
  // Waits for a word of this rank's memory that a peer sets remotely; 0 when
  // `give_up` (if any) turned non-zero first.
  std::uint64_t wait_for_nonzero(const std::uint64_t& word, const std::uint64_t* give_up = nullptr);
  // The call path of acquire(): the tail this rank swapped out.
  std::uint64_t acquire_through_call(std::size_t id);
  // The wishes this thread's calls for `id` carry, until its next acquire.
  static void hold_wishes(std::span<const std::uint64_t> wished);
  // The answer of this thread's acquire() of `id` that took a free lock
  // through a call, once (nullptr when there is none).
  const AcquireAnswer* take_answer(std::size_t id) const;
  // An answer's bytes at most: the struct, then the granted pages.
  std::size_t answer_capacity() const {
    return sizeof(AcquireAnswer) + LockGrantWishes::kPages * page_size_;
  }
  // Checks a log answer of `size` bytes (the caller's) against its counts.
  void check_log_answer(const AcquireAnswer& answer, std::size_t size, std::size_t id) const;
  // Notes the pages `answer` brought, for granted().
  void note_granted(const AcquireAnswer& answer);
  // The holder's call for the log's header and unread entries (valid until
  // this thread's next call).
  const AcquireAnswer& read_log_through_call(std::size_t id);
  // Calls `handler` at `id`'s home with this rank's last read of the log
  // and this thread's wishes; the answer's size (the answer is this thread's).
  std::size_t ask_home(std::uint32_t handler, std::size_t id);
  // The call path of begin_release(): true when the call freed the lock.
  bool append_through_call(std::size_t id, std::uint64_t epoch,
                           std::span<const std::uint64_t> notices, std::span<const std::byte> diffs,
                           bool free);
  // Where the home keeps the queue: the release as a one-way call.
  void release_one_way(std::size_t id, std::uint64_t epoch, std::span<const std::uint64_t> notices,
                       std::span<const std::byte> diffs);
  // A release call's bytes into release_call_; their size.
  std::size_t compose_release(std::size_t id, std::uint64_t epoch,
                              std::span<const std::uint64_t> notices,
                              std::span<const std::byte> diffs, bool free);
  // The home keeps the queues: its own acquire (0 when it holds the lock
  // now, else non-zero: queued) and its hand-over of a lock it released.
  std::uint64_t queue_here(std::size_t id) {
    return queues_.take(id, transport_.rank(), AcquireCall{}) ? 0 : me_;
  }
  void hand_on(std::size_t id);
  // Where the home keeps the queue and is called: the acquiring call, whose
  // answer comes when the lock is this rank's (at once when it is free), or,
  // with `resume`, the grant of a wait abandoned before. False when
  // `give_up` turned non-zero first: the grant comes later.
  bool acquire_from_queue(std::size_t id, const std::uint64_t& give_up, bool resume);
  // Into this thread's answer: the acquiring call, answered by the grant,
  // and the receive of the grant of a wait abandoned before.
  Request call_for_grant(std::size_t id);
  Request receive_grant(std::size_t id);
  // The grant `received` (into this thread's answer), checked: read_new_notices
  // takes it.
  void take_grant(const Request& received, std::size_t id);
  // Whether the lock of an abandoned wait is this rank's now.
  bool granted_since_abandoned(std::size_t id);
  // `next` (-1: nobody) holds `id` now, and queued with `call`: its grant,
  // from inside a handler or not.
  void grant(std::size_t id, int next, const AcquireCall& call, bool in_handler);
  // At the home, inside its progress: swaps the caller in and answers.
  static Answer answer_acquire(void* context, int source, const std::byte* bytes, std::size_t size);
  // At the home: answers a holder's call for the log.
  static Answer answer_log_read(void* context, int source, const std::byte* bytes,
                                std::size_t size);
  // At the home: the log's header and the entries `call` has not seen, then
  // the wished pages those entries name as written by another rank than
  // `source`, into `out` (answer_capacity() bytes); the answer's size.
  std::size_t fill_log_answer(const AcquireCall& call, int source, AcquireAnswer& out);
  AcquireAnswer& answer() { return *reinterpret_cast<AcquireAnswer*>(answer_.data()); }
  // At the home: the call, checked (a malformed one aborts: only a broken
  // peer sends it).
  AcquireCall checked_call(int source, const std::byte* bytes, std::size_t size,
                           const char* what) const;
  // At the home: appends a holder's notices, frees the lock if asked and
  // nobody queued, and answers.
  static Answer answer_release(void* context, int source, const std::byte* bytes, std::size_t size);
  // At the home that keeps the queue: appends a holder's notices (a one-way
  // call) and hands the lock to the next waiter.
  static void take_release(void* context, int source, std::uint64_t, const std::byte* bytes,
                           std::size_t size);
  // At the home: the release call, checked (a malformed one aborts), and
  // its diffs applied and notices appended; the log's entries then.
  ReleaseCall checked_release(int source, const std::byte* bytes, std::size_t size) const;
  std::uint64_t append_release(const ReleaseCall& call, int source, const std::byte* entries);
  // The lock record of `id`, homed here: in the shared words at its static
  // home, else moved here (a call may come before this rank made the move).
  std::byte* local_record(std::size_t id) {
    return homes_.static_home(id) == transport_.rank() ? &words_.local<std::byte>(record_offset(id))
                                                       : homes_.hosted_record(id);
  }
  std::uint64_t& tail_here(std::size_t id) {
    return *reinterpret_cast<std::uint64_t*>(local_record(id) + LockRecordLayout::tail);
  }
  // Whether a call for `id` may come here: its static home, or any rank
  // where locks move.
  bool may_host(std::size_t id) const {
    return homes_.static_home(id) == transport_.rank() || (by_call_ && id < movable_);
  }
  // The record of `id` reached without a call (calls() false): in the
  // shared words, or moved here.
  bool hosted_here(std::size_t id) const;
  std::uint64_t swap_tail(std::size_t id, std::uint64_t value);
  std::uint64_t compare_swap_tail(std::size_t id, std::uint64_t expected, std::uint64_t desired);
  void get_record(std::size_t id, std::size_t offset, void* out, std::size_t bytes);
  void get_record_nbi(std::size_t id, std::size_t offset, void* out, std::size_t bytes);
  void put_record_nbi(std::size_t id, std::size_t offset, const void* in, std::size_t bytes);
  void complete_record(std::size_t id);  // the puts and gets above are complete
  // The entries [from, to) of the log homed here, into `out`.
  void copy_entries(std::size_t id, std::uint64_t from, std::uint64_t to, std::uint64_t* out);

  Transport& transport_;
  LibraryMessaging messaging_;
  std::size_t locks_;
  std::size_t ranks_;
  std::uint64_t me_;  // this rank + 1 (0 means "nobody")
  std::size_t nodes_base_;
  SharedWords words_;
  LazyArray<std::uint64_t> seen_epoch_;  // per id: epoch of seen_count_
  LazyArray<std::uint64_t> seen_count_;  // per id: log entries already read
  std::uint32_t acquire_handler_, release_handler_, log_handler_, one_way_release_handler_;
  Transport::RemoteHandler apply_diffs_;
  void* apply_context_;
  std::size_t max_diffs_;
  // A release call's bytes, until its answer is in, or until UCX has sent
  // a one-way release (begin_release's callers serialise it).
  LazyArray<std::byte> release_call_;
  std::vector<std::size_t> abandoned_;           // ids whose wait was abandoned, queued still
  std::atomic<std::size_t> abandoned_count_{0};  // abandoned_.size()
  // Every rank reaches every home it does not map through messages
  // (agreed), so that no NIC atomic races the home's CPU atomics on a tail:
  // acquire() and begin_release() then call the homes they do not map.
  bool by_call_;
  // Whether `id`'s home is called: a moved lock's by every other rank.
  bool calls(std::size_t id) const {
    const int at = home(id);
    return by_call_ && at != transport_.rank() && (homes_.moved(id) || !words_.maps(at));
  }
  std::size_t movable_;
  bool every_rank_alone(MPI_Comm comm) const;
  // Every rank alone on its node and every home called: homes keep the
  // queues (queues_), and locks may move (homes_).
  bool queued_at_home_;
  LockQueues<AcquireCall> queues_;
  // The homes one-way releases went to since complete_releases(), each once.
  std::vector<int> released_to_;
  std::vector<bool> releasing_to_;  // per rank: in released_to_
  LockHomes homes_;
  std::span<const std::byte> pages_;  // this rank's master copies
  std::size_t page_size_;
  SharingRecord& sharing_;
  LockGrantWishes wishes_;
  // The pages the last read_new_notices' answer brought: page + 1 (0: no
  // more), and where its bytes are.
  std::uint64_t granted_pages_[LockGrantWishes::kPages] = {};
  const std::byte* granted_bytes_ = nullptr;
  // The home's answer: handlers run one at a time (inside the worker's
  // progress), and a transient answer leaves before the next. Words, so
  // that the struct at its start is aligned.
  std::vector<std::uint64_t> answer_;
  ReleaseAnswer release_answer_{};
};

template <class Busy>
std::optional<std::size_t> LockTable::take_granted_abandoned(Busy&& busy) {
  if (abandoned_.empty()) return std::nullopt;
  transport_.progress();  // over tcp the grant is applied by this worker
  for (auto it = abandoned_.begin(); it != abandoned_.end(); ++it) {
    const std::size_t id = *it;
    if (busy(id) || !granted_since_abandoned(id)) continue;
    abandoned_.erase(it);
    abandoned_count_.store(abandoned_.size(), std::memory_order_relaxed);
    return id;
  }
  return std::nullopt;
}

}  // namespace mpidsm::detail
