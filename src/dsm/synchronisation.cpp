// The DSM's acquire and release points: barrier (everyone's notices) and
// locks (the notices of the critical sections under one lock).
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "common/mpi_exchange.hpp"
#include "engine.hpp"
#include "test_hooks.hpp"
#include "ticks.hpp"
#include "transport/node_barrier.hpp"
#include "transport/progress/progress_control.hpp"

namespace mpidsm {
namespace {

// What a rank contributes to the barrier's count exchange when it called the
// barrier inside a critical section, or when its release failed.
constexpr std::int64_t kHoldsLock = -1;
constexpr std::int64_t kFailed = -2;
// Notices a rank can add to its count in the barrier's allgather (a 64-byte
// record per rank): a barrier after a few written pages then costs one
// collective, not two.
constexpr std::size_t kInlineNotices = 7;

// Waits for one of the barrier's collectives, which receives into (or reads
// counts from) `buffers`. A wait that throws (a peer died) abandons the
// collective, and MPI may still write there in any later MPI call as live
// peers' parts arrive: the buffers are then left to MPI for good (their
// storage moved into vectors never freed), never to be reused or freed.
template <class... Buffers>
void wait_receiving(Transport& transport, MPI_Request& request, Buffers&... buffers) {
  try {
    transport.wait_mpi(request, "Dsm::barrier");
  } catch (const Error&) {
    (static_cast<void>(new Buffers(std::move(buffers))), ...);
    throw;
  }
}
}  // namespace

void Dsm::Engine::barrier() {
  detail::check_not_forked(rank_, "Dsm::barrier");
  pass_on_abandoned_locks();
  const std::uint64_t start = detail::TickClock::now();
  BarrierScratch& x = barrier_scratch_;
  x.outgoing.clear();
  bool holds_lock;
  std::optional<Error> failure;
  std::size_t lock_notices_before = 0;
  x.mask.assign(barrier_slots_.direct() ? 0
                                        : detail::BarrierUpdates::kMasks *
                                              detail::BarrierUpdates::mask_words(runtime_.size()),
                0);
  // Across nodes, from here to the end, this thread's own polls serve the
  // peers (the progress thread would only compete with it for the worker
  // and a CPU): the diffs of the release, the count exchange, the updates.
  // Not on one node: node_barrier() spins on shared words, without UCX.
  std::optional<detail::DrivingProgress> driving;
  if (!barrier_slots_.direct()) driving.emplace(transport_);
  {
    detail::EngineLock guard(mutex_);
    holds_lock = held_count_ > 0;
    forget_updates();  // a barrier that failed in its exchange left them
    if (!holds_lock) {
      ++stats_.barriers;
      try {
        // The counts keep_counted kept for pages not fetched again since go
        // (a page nobody reads any more must not cost its home a fault per
        // write forever), before release(), whose flushes complete the drops.
        drop_uncached_counts(counted_uncached_);
        detail::fail_if_injected(detail::FailurePoint::barrier_release, rank_);
        release();
      } catch (const Error& e) {
        failure = e;
      }
      // The notices travel now; a page released again meanwhile is noticed afresh.
      x.outgoing.swap(notices_);
      forget_notices(x.outgoing);
      sync_.barrier_delivered();
      // Across nodes (every diff flushed by now), the subscriptions and
      // pushes leave while the exchange runs.
      if (!failure && !x.mask.empty()) prepare_updates(x);
      fetched_.clear();
      lock_notices_before = lock_notices_.size();
    }
  }
  if (holds_lock) raise_barrier_beacons();
  // Every diff is complete at its home (release flushed) before anyone learns
  // of it, so a page invalidated below is updated from its home. The count
  // exchange is the barrier; the notices follow only when there are some.
  const auto ranks = static_cast<std::size_t>(runtime_.size());
  x.counts.resize(ranks);
  const std::int64_t mine = failure      ? kFailed
                            : holds_lock ? kHoldsLock
                                         : static_cast<std::int64_t>(x.outgoing.size());
  bool delivered = false;
  try {
    delivered = exchange_counts(mine, x);
  } catch (...) {
    detail::EngineLock guard(mutex_);
    forget_updates(true);  // no message of this barrier stays in flight
    throw;
  }
  std::int64_t total = 0;
  int holder = -1;
  bool any_failed = false;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (x.counts[r] == kHoldsLock && holder < 0) holder = static_cast<int>(r);
    any_failed = any_failed || x.counts[r] == kFailed;
    total += std::max<std::int64_t>(x.counts[r], 0);
  }
  if (any_failed || holder >= 0) {
    {
      // Nobody's notices are lost: they wait for the next barrier, and the
      // lock notices for the next unlock. Subscriptions get empty answers.
      detail::EngineLock guard(mutex_);
      for (std::int64_t notice : x.outgoing) record_notice_of_barrier(notice);
      try {
        finish_updates(x, true, total);
      } catch (const Error& e) {
        if (!failure) failure = e;
      }
      install_updates();
    }
    // The holder raised this rank's beacon before its count left: no waiter
    // of a later barrier sees it.
    if (holder >= 0) std::atomic_ref<std::uint64_t>(barrier_beacon()).store(0);
    driving.reset();  // what follows may block in MPI
    if (any_failed) detail::throw_if_any_failed(runtime_.comm(), rank_, failure, "Dsm::barrier");
    throw Error(Errc::invalid_state, rank_,
                "Dsm::barrier: rank " + std::to_string(holder) +
                    " called it while holding a DSM lock (a barrier inside a critical "
                    "section); unlock first");
  }
  MPI_Comm comm = runtime_.comm();
  if (total > 0 && !delivered) {
    lay_out_incoming(x, total);
    MPI_Request request;
    detail::check_mpi(rank_, "MPI_Iallgatherv in Dsm::barrier",
                      MPI_Iallgatherv(x.outgoing.data(), static_cast<int>(x.outgoing.size()),
                                      MPI_INT64_T, x.incoming.data(), x.sizes.data(),
                                      x.offsets.data(), MPI_INT64_T, comm, &request));
    wait_receiving(transport_, request, x.incoming, x.sizes, x.offsets);
  }
  if (total == 0) x.incoming.clear();
  // Across nodes every rank takes this step, so homes and readers change
  // what they hold of each other's subscriptions alike.
  if (total > 0 || lock_notices_before > 0 || !x.mask.empty()) {
    detail::EngineLock guard(mutex_);
    // The barrier delivered these to everyone; later ones wait for the next unlock.
    forget_lock_notices(lock_notices_before);
    for (std::size_t writer = 0; total > 0 && writer < ranks; ++writer) {
      if (writer == static_cast<std::size_t>(rank_)) continue;
      const auto first = x.incoming.begin() + x.offsets[writer];
      for (auto it = first; it != first + x.sizes[writer]; ++it) {
        const std::size_t page = detail::ReleaseNotice::page(*it);
        const bool kept = (*it & detail::ReleaseNotice::possibly_written) ? keep_counted(page)
                                                                          : await_update(page);
        if (!kept) invalidate(page);
      }
    }
    try {
      finish_updates(x, false, total);
    } catch (...) {
      install_updates();  // what arrived; the other awaited pages leave the cache
      throw;
    }
    install_updates();
  }
  // Every notice up to here has reached every rank: lock logs start afresh.
  // Only the barrier writes these (relaxed store, no locked instruction);
  // lock() and stats() read them.
  epoch_.store(epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  barrier_ticks_.store(
      barrier_ticks_.load(std::memory_order_relaxed) + (detail::TickClock::now() - start),
      std::memory_order_relaxed);
  pass_on_abandoned_locks();  // granted while this rank waited here
}

// Pages leaving notices_ for a barrier's exchange may be noticed again.
void Dsm::Engine::forget_notices(std::span<const std::int64_t> notices) {
  for (std::int64_t notice : notices)
    listed_[detail::ReleaseNotice::page(notice)] &= static_cast<std::uint8_t>(~kInNotices);
}

// A notice that a failed barrier did not deliver goes back to notices_
// (unless the page was noticed again meanwhile).
void Dsm::Engine::record_notice_of_barrier(std::int64_t notice) {
  const std::size_t page = detail::ReleaseNotice::page(notice);
  if (listed_[page] & kInNotices) return;
  listed_[page] |= kInNotices;
  notices_.push_back(notice);
}

// The first `count` lock notices have been delivered (by a barrier, or to a
// lock's log at the outermost unlock).
void Dsm::Engine::forget_lock_notices(std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    listed_[detail::notice_page(lock_notices_[i])] &= static_cast<std::uint8_t>(~kInLockNotices);
  lock_notices_.erase(lock_notices_.begin(),
                      lock_notices_.begin() + static_cast<std::ptrdiff_t>(count));
}

// The count exchange that is also the barrier. When every rank's slots are
// mapped (one node), a rank with something to say (notices, or holding a
// lock) stores its count into every rank's slots, and a barrier in shared
// memory publishes them. A clean barrier then reads only this rank's own
// slots, which nobody wrote: no cache line moves beyond the barrier's own. Slots alternate with
// the barrier's parity and the reader zeroes what it found, so a rank already
// in the next barrier never overwrites a count a slower rank is still reading.
// Where every rank has counts[r] notices: x.sizes, x.offsets and room in
// x.incoming for all of them, in rank order.
void Dsm::Engine::lay_out_incoming(BarrierScratch& x, std::int64_t total) {
  const std::size_t ranks = x.counts.size();
  x.sizes.resize(ranks);
  x.offsets.resize(ranks);
  for (std::size_t r = 0, at = 0; r < ranks; ++r) {
    x.sizes[r] = static_cast<int>(std::max<std::int64_t>(x.counts[r], 0));
    x.offsets[r] = static_cast<int>(at);
    at += static_cast<std::size_t>(x.sizes[r]);
  }
  x.incoming.resize(static_cast<std::size_t>(total));
}

bool Dsm::Engine::exchange_counts(std::int64_t mine, BarrierScratch& x) {
  std::vector<std::int64_t>& counts = x.counts;
  x.subscribers.clear();
  x.renewers.clear();
  x.pushers.clear();
  MPI_Comm comm = runtime_.comm();
  // Non-blocking collectives, so a rank that died ends the wait with an
  // error naming it.
  MPI_Request request;
  if (!barrier_slots_.direct()) {
    const std::size_t record = 1 + kInlineNotices + x.mask.size();
    const std::size_t ranks = counts.size();
    x.records.resize(record * (ranks + 1));  // the last record is this rank's to send
    std::int64_t* mine_out = x.records.data() + record * ranks;
    mine_out[0] = mine;
    if (mine > 0 && static_cast<std::size_t>(mine) <= kInlineNotices)
      std::copy(x.outgoing.begin(), x.outgoing.end(), mine_out + 1);
    std::copy(x.mask.begin(), x.mask.end(), mine_out + 1 + kInlineNotices);
    detail::check_mpi(
        rank_, "MPI_Iallgather in Dsm::barrier",
        MPI_Iallgather(mine_out, static_cast<int>(record), MPI_INT64_T, x.records.data(),
                       static_cast<int>(record), MPI_INT64_T, comm, &request));
    // A subscription costs a send (on a simulated host a tcp send took
    // 10-20 us), which would delay this rank's record.
    try {
      updates_.send();
    } catch (const Error&) {
      wait_receiving(transport_, request, x.records);  // the others' collective completes
      throw;
    }
    wait_receiving(transport_, request, x.records);
    std::int64_t total = 0;
    bool inline_only = true;
    const std::size_t my_word = static_cast<std::size_t>(rank_) / 64,
                      words = x.mask.size() / detail::BarrierUpdates::kMasks;
    const std::uint64_t my_bit = std::uint64_t{1} << (rank_ % 64);
    for (std::size_t r = 0; r < ranks; ++r) {
      counts[r] = x.records[r * record];
      const std::int64_t* masks = x.records.data() + r * record + 1 + kInlineNotices;
      auto marked = [&](std::size_t mask) {
        return (static_cast<std::uint64_t>(masks[mask * words + my_word]) & my_bit) != 0;
      };
      if (marked(0)) x.subscribers.push_back(static_cast<int>(r));
      if (marked(1)) x.renewers.push_back(static_cast<int>(r));
      if (marked(2)) x.pushers.push_back(static_cast<int>(r));
      total += std::max<std::int64_t>(counts[r], 0);
      inline_only = inline_only && counts[r] <= static_cast<std::int64_t>(kInlineNotices);
    }
    if (!inline_only || total == 0) return false;
    lay_out_incoming(x, total);
    for (std::size_t r = 0; r < ranks; ++r)
      std::copy_n(x.records.data() + r * record + 1, x.sizes[r], x.incoming.begin() + x.offsets[r]);
    return true;
  }
  const std::size_t ranks = counts.size();
  const std::size_t base = (exchanges_++ % 2) * ranks;
  const auto me = static_cast<std::size_t>(rank_);
  auto slot_offset = [&](std::size_t writer) { return (base + writer) * sizeof(std::int64_t); };
  if (mine != 0)
    for (std::size_t r = 0; r < ranks; ++r)
      if (r != me)
        std::atomic_ref<std::int64_t>(
            barrier_slots_.mapped<std::int64_t>(static_cast<int>(r), slot_offset(me)))
            .store(mine, std::memory_order_release);
  node_barrier();
  for (std::size_t r = 0; r < ranks; ++r) {
    std::atomic_ref<std::int64_t> slot(barrier_slots_.local<std::int64_t>(slot_offset(r)));
    counts[r] = slot.load(std::memory_order_acquire);
    if (counts[r] != 0) slot.store(0, std::memory_order_relaxed);
  }
  counts[me] = mine;
  return false;
}

// On the mapped slots (node_barrier.hpp); the counts a rank stored into its
// peers' slots before are visible to them after.
void Dsm::Engine::node_barrier() {
  const auto rounds_base = 2 * static_cast<std::size_t>(runtime_.size()) * sizeof(std::int64_t);
  detail::dissemination_barrier(
      transport_, ++node_barriers_,
      [&](int rank, std::size_t round) -> std::uint64_t& {
        return barrier_slots_.mapped<std::uint64_t>(rank,
                                                    rounds_base + round * sizeof(std::uint64_t));
      },
      "Dsm::barrier");
}

void Dsm::Engine::check_lock_id(std::size_t id, const char* operation, const char* what) const {
  if (id >= lock_count())
    throw Error(Errc::out_of_range, rank_,
                std::string(operation) + ": " + what + " id " + std::to_string(id) +
                    " is not below MPIDSM_LOCKS=" + std::to_string(lock_count()));
}

// A flag is a word in the record of a lock of its own (ids after the
// application's): raising it under that lock puts the raiser's release in
// the lock's log, and a waiter that saw it raised takes the lock once to
// acquire every release made under it.
void Dsm::Engine::set_flag(std::size_t id) {
  detail::check_not_forked(rank_, "Dsm::set_flag");
  check_lock_id(id, "Dsm::set_flag", "flag");
  acquire_lock(flag_lock(id), true);
  try {
    locks_.set_flag(flag_lock(id), 1);
  } catch (...) {
    release_lock(flag_lock(id));
    throw;
  }
  release_lock(flag_lock(id));
}

void Dsm::Engine::wait_flag(std::size_t id) {
  detail::check_not_forked(rank_, "Dsm::wait_flag");
  check_lock_id(id, "Dsm::wait_flag", "flag");
  // Polls with a remote read that backs off to a yield: the raiser may
  // need this core (oversubscribed) or this rank's progress (tcp).
  for (unsigned polls = 1; locks_.flag(flag_lock(id)) == 0; ++polls) {
    transport_.progress();
    if (polls > 64 || transport_.yield_when_idle()) sched_yield();
    if (polls % 256 == 0) transport_.check_peers("Dsm::wait_flag");
  }
  acquire_lock(flag_lock(id), true);
  release_lock(flag_lock(id));
}

void Dsm::Engine::reset_flag(std::size_t id) {
  detail::check_not_forked(rank_, "Dsm::reset_flag");
  check_lock_id(id, "Dsm::reset_flag", "flag");
  locks_.set_flag(flag_lock(id), 0);
}

// Locks belong to the rank: a second thread of the rank asking for a lock
// the rank holds either waits here for the first to unlock
// (wait_for_threads), or is told, rather than joining the global queue
// behind its own rank.
void Dsm::Engine::lock(std::size_t id, bool wait_for_threads) {
  detail::check_not_forked(rank_, "Dsm::lock");
  check_lock_id(id, "Dsm::lock");
  acquire_lock(id, wait_for_threads);
}

void Dsm::Engine::unlock(std::size_t id) {
  detail::check_not_forked(rank_, "Dsm::unlock");
  check_lock_id(id, "Dsm::unlock");
  release_lock(id);
}

void Dsm::Engine::acquire_lock(std::size_t id, bool wait_for_threads) {
  const std::thread::id me = std::this_thread::get_id();
  pass_on_abandoned_locks();
  bool resume = false;
  {
    detail::EngineLock guard(mutex_);
    while (held_[id]) {
      if (holder_[id] == me)
        throw Error(Errc::invalid_state, rank_,
                    "Dsm::lock: lock " + std::to_string(id) +
                        " is already held by this thread (DSM locks are not recursive)");
      if (!wait_for_threads)
        throw Error(Errc::invalid_state, rank_,
                    "Dsm::lock: lock " + std::to_string(id) +
                        " is held by another thread of this rank; DSM locks belong to the "
                        "rank: threads that share lock ids use Dsm::lock_among_threads or "
                        "mpidsm::DsmThreadMutex, which wait for each other");
      lock_released_.wait(guard.held());
    }
    held_[id] = true;  // also keeps a second thread of this rank out of the queue
    holder_[id] = me;
    resume = locks_.take_abandoned(id);
  }
  const std::uint64_t start = detail::TickClock::now();
  try {
    if (!locks_.acquire(id, barrier_beacon(), resume)) {
      {
        detail::EngineLock guard(mutex_);
        locks_.mark_abandoned(id);
      }
      fail_abandoned_wait(id);
    }
    detail::EngineLock guard(mutex_);
    acquired_notices_.clear();
    if (locks_.read_new_notices(id, epoch_, acquired_notices_)) {
      for (std::uint64_t notice : acquired_notices_)
        if (detail::notice_writer(notice) != rank_) invalidate(detail::notice_page(notice));
    } else {
      ++stats_.lock_log_overflows;
      invalidate_all_cached();
    }
    ++held_count_;
    ++stats_.lock_acquires;
    lock_wait_ticks_.fetch_add(detail::TickClock::now() - start, std::memory_order_relaxed);
  } catch (...) {
    detail::EngineLock guard(mutex_);
    held_[id] = false;
    lock_released_.notify_all();
    throw;
  }
}

void Dsm::Engine::raise_barrier_beacons() {
  for (int r = 0; r < runtime_.size(); ++r)
    barrier_slots_.swap<std::uint64_t>(r, beacon_offset(), static_cast<std::uint64_t>(rank_) + 1);
}

// The barrier this rank joins fails on every rank, naming the holder.
void Dsm::Engine::fail_abandoned_wait(std::size_t id) {
  const std::string waiting = "Dsm::lock: lock " + std::to_string(id) + " was not granted: ";
  try {
    barrier();
  } catch (const Error& e) {
    throw Error(e.code(), rank_, waiting + e.message());
  }
  throw Error(Errc::invalid_state, rank_,
              waiting + "a rank entered Dsm::barrier while holding a DSM lock");
}

void Dsm::Engine::pass_on_abandoned_locks() {
  if (!locks_.any_abandoned()) return;  // nearly always: no lock taken
  for (;;) {
    std::optional<std::size_t> id;
    {
      detail::EngineLock guard(mutex_);
      id = locks_.take_granted_abandoned([&](std::size_t i) { return held_[i] != 0; });
      if (!id) return;
      held_[*id] = true;  // no thread of this rank acquires it meanwhile
    }
    locks_.release(*id, epoch_, {});
    detail::EngineLock guard(mutex_);
    held_[*id] = false;
    lock_released_.notify_all();
  }
}

void Dsm::Engine::release_lock(std::size_t id) {
  std::uint64_t epoch = 0;
  {
    detail::EngineLock guard(mutex_);
    if (!held_[id] || held_count_ == 0)
      throw Error(Errc::invalid_state, rank_,
                  "Dsm::unlock: lock " + std::to_string(id) + " is not held by this rank");
    release();
    // The notices stay for the enclosing locks' logs until the outermost
    // unlock; the lock's log gets them from a copy, which the hand-over
    // (outside mutex_: it may wait for a successor) reads.
    released_notices_.assign(lock_notices_.begin(), lock_notices_.end());
    epoch = epoch_;
    if (--held_count_ == 0) forget_lock_notices(lock_notices_.size());
  }
  locks_.release(id, epoch, released_notices_);
  {
    detail::EngineLock guard(mutex_);
    held_[id] = false;
    lock_released_.notify_all();
  }
  pass_on_abandoned_locks();
}

}  // namespace mpidsm
