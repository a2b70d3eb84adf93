#include "lock_table.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "agreed_keys.hpp"
#include "common/mpi_exchange.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {

LockTable::LockTable(MPI_Comm comm, Transport& transport, std::size_t locks, std::size_t movable,
                     const MappablePeers& mappable, Transport::RemoteHandler apply_diffs,
                     void* apply_context, std::size_t max_diffs, std::span<const std::byte> pages,
                     std::size_t page_size, SharingRecord& sharing)
    : transport_(transport),
      messaging_(transport),
      locks_(locks),
      ranks_(static_cast<std::size_t>(transport.size())),
      me_(static_cast<std::uint64_t>(transport.rank()) + 1),
      nodes_base_((locks + ranks_ - 1) / ranks_ * LockRecordLayout::bytes),
      words_(comm, transport, nodes_base_ + locks * sizeof(QueueNode), mappable,
             "DSM lock table (MPIDSM_LOCKS=" + std::to_string(locks / 2) + ", as many flags)"),
      seen_epoch_(locks),
      seen_count_(locks),
      acquire_handler_(messaging_.add_answering_handler(answer_acquire, this)),
      release_handler_(messaging_.add_answering_handler(answer_release, this)),
      log_handler_(messaging_.add_answering_handler(answer_log_read, this)),
      one_way_release_handler_(transport.add_remote_handler(take_release, this)),
      apply_diffs_(apply_diffs),
      apply_context_(apply_context),
      max_diffs_(max_diffs),
      release_call_(sizeof(ReleaseCall) + LockRecordLayout::ring_entries * sizeof(std::uint64_t) +
                    max_diffs),
      by_call_(messaging_.all_reach_through_messages(
          true, [this](int peer) { return words_.maps(peer); })),
      movable_(movable),
      // Each lock id queued at a home needs a grant key of its own.
      queued_at_home_(by_call_ && every_rank_alone(comm) && locks <= kKeysPerUse),
      queues_(queued_at_home_ ? locks : 0),
      releasing_to_(queued_at_home_ ? ranks_ : 0),
      homes_(locks, movable, transport.rank(), transport.size(), queued_at_home_),
      pages_(pages),
      page_size_(page_size),
      sharing_(sharing),
      wishes_(locks),
      answer_((answer_capacity() + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t)) {}

LockTable::~LockTable() {
  if (!words_.region().valid()) return;  // abandoned
  // Every rank is here (collective), so no call to the handler is in flight.
  transport_.remove_remote_handler(acquire_handler_);
  transport_.remove_remote_handler(release_handler_);
  transport_.remove_remote_handler(log_handler_);
  transport_.remove_remote_handler(one_way_release_handler_);
}

// Collective. No rank maps another's words: every rank is alone on its node,
// so every other rank calls each home whether a lock moved or not. Where
// ranks share nodes, their peers on the static home's node swap its tail
// with the CPU's atomics, and a moved lock would make them call instead.
bool LockTable::every_rank_alone(MPI_Comm comm) const {
  int alone = 1;
  for (int peer = 0; alone && peer < static_cast<int>(ranks_); ++peer)
    if (peer != transport_.rank() && words_.maps(peer)) alone = 0;
  int all = 0;
  allreduce(comm, transport_.rank(), &alone, &all, 1, MPI_INT, MPI_LAND, "Dsm (lock table)");
  return all != 0;
}

LockTable::QueueNode& LockTable::my_node(std::size_t id) const {
  return words_.local<QueueNode>(node_offset(id));
}

// A wait inside the transport: the progress thread sleeps meanwhile, rather
// than wake for each event this thread's polls serve anyway (over tcp the
// peer's atomic is applied by them), and a peer gone (the one that would
// set the word may have held the lock) ends it.
std::uint64_t LockTable::wait_for_nonzero(const std::uint64_t& word, const std::uint64_t* give_up) {
  struct Watch {
    const std::uint64_t* word;
    const std::uint64_t* give_up;
    std::uint64_t value;
  } watch{&word, give_up, 0};
  transport_.progress_until(
      [](void* context) {
        auto& w = *static_cast<Watch*>(context);
        w.value = std::atomic_ref<const std::uint64_t>(*w.word).load(std::memory_order_acquire);
        return w.value != 0 ||
               (w.give_up && std::atomic_ref<const std::uint64_t>(*w.give_up).load() != 0);
      },
      &watch, "Dsm::lock");
  return watch.value;
}

void LockTable::mark_abandoned(std::size_t id) {
  abandoned_.push_back(id);
  abandoned_count_.store(abandoned_.size(), std::memory_order_relaxed);
}

bool LockTable::take_abandoned(std::size_t id) {
  const auto at = std::find(abandoned_.begin(), abandoned_.end(), id);
  if (at == abandoned_.end()) return false;
  abandoned_.erase(at);
  abandoned_count_.store(abandoned_.size(), std::memory_order_relaxed);
  return true;
}

void LockTable::set_flag(std::size_t id, std::uint64_t value) {
  words_.swap<std::uint64_t>(home(id), record_offset(id) + LockRecordLayout::flag, value);
}

std::uint64_t LockTable::flag(std::size_t id) {
  return words_.load<std::uint64_t>(home(id), record_offset(id) + LockRecordLayout::flag);
}

bool LockTable::acquire(std::size_t id, const std::uint64_t& give_up, bool resume,
                        std::span<const std::uint64_t> wished) {
  hold_wishes(wished);
  if (queued_at_home_ && calls(id)) return acquire_from_queue(id, give_up, resume);
  QueueNode& node = my_node(id);
  if (resume) return wait_for_nonzero(node.granted, &give_up) != 0;
  // Nobody else writes this node until it is published by the swap below.
  std::atomic_ref<std::uint64_t>(node.next).store(0, std::memory_order_relaxed);
  std::atomic_ref<std::uint64_t>(node.granted).store(0, std::memory_order_release);
  const std::uint64_t predecessor = calls(id)         ? acquire_through_call(id)
                                    : queued_at_home_ ? queue_here(id)
                                                      : swap_tail(id, me_);
  if (predecessor == 0) return true;
  // Where the home keeps the queue, it grants the lock itself: no link.
  if (!queued_at_home_) {
    const int pred = static_cast<int>(predecessor - 1);
    // The predecessor's next is 0 until this add: the add is the link.
    words_.add<std::uint64_t>(pred, node_offset(id) + offsetof(QueueNode, next), me_);
  }
  return wait_for_nonzero(node.granted, &give_up) != 0;
}

void LockTable::finish_release(const Release& release) {
  if (release.freed) return;
  const std::size_t id = release.id;
  if (queued_at_home_) return hand_on(id);  // this rank is the home: its own release
  QueueNode& node = my_node(id);
  std::uint64_t successor =
      std::atomic_ref<std::uint64_t>(node.next).load(std::memory_order_acquire);
  if (successor == 0) {
    // After a release call, its home saw someone queue; otherwise swap back.
    if (!release.called && compare_swap_tail(id, me_, 0) == me_) return;  // nobody queued
    // Someone swapped itself in after us and is about to link.
    successor = wait_for_nonzero(node.next);
  }
  const int next = static_cast<int>(successor - 1);
  words_.add<std::uint64_t>(next, node_offset(id) + offsetof(QueueNode, granted), 1);
}

LockTable::Release LockTable::begin_release(std::size_t id, std::uint64_t epoch,
                                            std::span<const std::uint64_t> notices,
                                            std::span<const std::byte> diffs) {
  // A moved lock's record is no shared word, and a home that keeps the
  // queue hands the lock on: freeing it is a call too.
  if (notices.empty() && diffs.empty() && !(calls(id) && (homes_.moved(id) || queued_at_home_)))
    return {id, false};
  if (calls(id) && queued_at_home_) {
    release_one_way(id, epoch, notices, diffs);
    return {id, true, true};  // the home hands it on
  }
  if (calls(id)) {
    // A waiter already linked gets the lock from finish_release(); otherwise
    // the home frees it with the append, unless one queues meanwhile.
    const bool linked =
        std::atomic_ref<std::uint64_t>(my_node(id).next).load(std::memory_order_acquire) != 0;
    return {id, append_through_call(id, epoch, notices, diffs, !linked), true};
  }
  if (!diffs.empty())
    throw Error(Errc::invalid_state, transport_.rank(),
                "LockTable::begin_release: diffs for lock " + std::to_string(id) +
                    ", whose release is no call");
  if (home(id) == transport_.rank()) homes_.note_release(id, notice_page(notices.back()));
  NoticeLogHeader header{epoch, seen_count_[id]};
  // This rank read the header when it acquired the lock, and only the
  // holder appends: a round trip to the home is needed only when a barrier
  // began a new epoch while the lock was held.
  if (seen_epoch_[id] != epoch) {
    get_record(id, LockRecordLayout::header, &header, sizeof header);
    if (header.epoch != epoch) header = {epoch, 0};
  }
  // Only the newest ring_entries notices can be kept.
  const std::size_t skip = notices.size() > LockRecordLayout::ring_entries
                               ? notices.size() - LockRecordLayout::ring_entries
                               : 0;
  const std::uint64_t from = header.count + skip;
  const std::uint64_t to = header.count + notices.size();
  RingSpan spans[2];
  const std::uint64_t* source = notices.data() + skip;
  for (int s = 0, n = ring_spans(from, to, LockRecordLayout::ring_entries, spans); s < n; ++s) {
    put_record_nbi(id, LockRecordLayout::ring + spans[s].index * sizeof(std::uint64_t), source,
                   spans[s].length * sizeof(std::uint64_t));
    source += spans[s].length;
  }
  header.count = to;
  // Readers read only once they hold the lock, after this flush: no fence needed.
  put_record_nbi(id, LockRecordLayout::header, &header, sizeof header);
  complete_record(id);
  // This rank read the log when it acquired the lock and nobody appended since.
  seen_epoch_[id] = epoch;
  seen_count_[id] = to;
  return {id, false};
}

void LockTable::hand_on(std::size_t id) {
  AcquireCall waiting{};
  const int next = queues_.pass(id, transport_.rank(), waiting);
  grant(id, next, waiting, false);
}

void LockTable::complete_releases() {
  while (!released_to_.empty()) {
    const int home = released_to_.back();
    transport_.flush(home);  // the handler has run there
    released_to_.pop_back();
    releasing_to_[static_cast<std::size_t>(home)] = false;
  }
}

bool LockTable::read_new_notices(std::size_t id, std::uint64_t epoch,
                                 std::vector<std::uint64_t>& out) {
  const AcquireAnswer* answered = take_answer(id);
  if (!answered && calls(id)) answered = &read_log_through_call(id);
  granted_pages_[0] = 0;
  if (answered) note_granted(*answered);
  NoticeLogHeader header{};
  if (answered)
    header = answered->header;
  else
    get_record(id, LockRecordLayout::header, &header, sizeof header);
  const std::uint64_t from = seen_epoch_[id] == epoch ? seen_count_[id] : 0;
  const std::uint64_t to = header.epoch == epoch ? header.count : 0;
  seen_epoch_[id] = epoch;
  seen_count_[id] = to;
  if (to <= from) return true;
  if (to - from > LockRecordLayout::ring_entries) return false;
  const std::size_t first = out.size();
  out.resize(first + static_cast<std::size_t>(to - from));
  std::uint64_t* target = out.data() + first;
  if (answered) {
    // The home sent [from, to): it chose the same first entry from the same
    // seen_ words, as the header's epoch is this one.
    std::copy_n(answered->entries, to - from, target);
    return true;
  }
  RingSpan spans[2];
  for (int s = 0, n = ring_spans(from, to, LockRecordLayout::ring_entries, spans); s < n; ++s) {
    get_record_nbi(id, LockRecordLayout::ring + spans[s].index * sizeof(std::uint64_t), target,
                   spans[s].length * sizeof(std::uint64_t));
    target += spans[s].length;
  }
  complete_record(id);
  return true;
}

// A moved lock's record hosted here is this rank's memory, touched by no
// other rank: CPU atomics and copies, as the handlers serving its callers.
bool LockTable::hosted_here(std::size_t id) const {
  return homes_.static_home(id) != transport_.rank() && home(id) == transport_.rank();
}

std::uint64_t LockTable::swap_tail(std::size_t id, std::uint64_t value) {
  if (hosted_here(id))
    return std::atomic_ref<std::uint64_t>(tail_here(id)).exchange(value, std::memory_order_seq_cst);
  return words_.swap<std::uint64_t>(home(id), record_offset(id) + LockRecordLayout::tail, value);
}

std::uint64_t LockTable::compare_swap_tail(std::size_t id, std::uint64_t expected,
                                           std::uint64_t desired) {
  if (hosted_here(id)) {
    std::atomic_ref<std::uint64_t>(tail_here(id))
        .compare_exchange_strong(expected, desired, std::memory_order_seq_cst);
    return expected;
  }
  return words_.compare_swap<std::uint64_t>(home(id), record_offset(id) + LockRecordLayout::tail,
                                            expected, desired);
}

void LockTable::get_record(std::size_t id, std::size_t offset, void* out, std::size_t bytes) {
  if (hosted_here(id))
    std::memcpy(out, local_record(id) + offset, bytes);
  else
    words_.get(home(id), record_offset(id) + offset, out, bytes);
}

void LockTable::get_record_nbi(std::size_t id, std::size_t offset, void* out, std::size_t bytes) {
  if (hosted_here(id))
    std::memcpy(out, local_record(id) + offset, bytes);
  else
    words_.get_nbi(home(id), record_offset(id) + offset, out, bytes);
}

void LockTable::put_record_nbi(std::size_t id, std::size_t offset, const void* in,
                               std::size_t bytes) {
  if (hosted_here(id))
    std::memcpy(local_record(id) + offset, in, bytes);
  else
    words_.put_nbi(home(id), record_offset(id) + offset, in, bytes);
}

void LockTable::complete_record(std::size_t id) {
  if (!hosted_here(id)) words_.flush(home(id));
}

void LockTable::propose_moves(const std::function<int(std::size_t)>& home_of_page,
                              std::vector<std::int64_t>& out) {
  homes_.propose(home_of_page, out);
}

void LockTable::apply_moves(std::span<const std::int64_t> moves) {
  homes_.apply(moves);
}

}  // namespace mpidsm::detail
