// DSM locks and flags: the engine's side of the lock protocol (lock_table.hpp
// has the queue and the notice logs at the homes). Acquiring a lock
// invalidates the pages its log names; releasing it puts this rank's
// released pages in the log and hands the lock on. A flag is a lock of its
// own with a word in its record.
#include <sched.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>

#include "engine.hpp"
#include "ticks.hpp"

namespace mpidsm {

// The first `count` lock notices have been delivered (by a barrier, or to a
// lock's log at the outermost unlock).
void Dsm::Engine::forget_lock_notices(std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    listed_[detail::notice_page(lock_notices_[i])] &= static_cast<std::uint8_t>(~kInLockNotices);
  lock_notices_.erase(lock_notices_.begin(),
                      lock_notices_.begin() + static_cast<std::ptrdiff_t>(count));
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
  note_thread(this_thread());
  pass_on_abandoned_locks();
  bool resume = false;
  std::uint64_t wished[detail::LockGrantWishes::kPages];
  std::size_t wishes = 0;
  {
    detail::EngineLock guard(mutex_);
    holders_.claim(id, wait_for_threads, guard.held());
    resume = locks_.take_abandoned(id);
    if (!resume) wishes = grant_wishes(id, wished);
  }
  const std::uint64_t start = detail::TickClock::now();
  try {
    if (!locks_.acquire(id, exchange_.beacon(), resume, {wished, wishes})) {
      {
        detail::EngineLock guard(mutex_);
        locks_.mark_abandoned(id);
      }
      fail_abandoned_wait(id);
    }
    detail::EngineLock guard(mutex_);
    const DropBatch drops(*this);
    acquired_notices_.clear();
    acquired_since_barrier_ = true;
    const bool complete = locks_.read_new_notices(id, epoch_, acquired_notices_);
    std::size_t granted[detail::LockGrantWishes::kPages];
    const std::span<const std::size_t> installed(granted, take_grants({wished, wishes}, granted));
    if (complete) {
      for (std::uint64_t notice : acquired_notices_) {
        const std::size_t page = detail::notice_page(notice);
        if (detail::notice_writer(notice) == rank_) continue;
        wish_for_lock(id, page);
        if (std::ranges::find(installed, page) == installed.end() && !refresh_later(page))
          invalidate(page);
      }
      stats_.updates_received += refresh_copies(refresh_);
    } else {
      ++stats_.lock_log_overflows;
      invalidate_all_cached();
    }
    holders_.granted();
    ++stats_.lock_acquires;
    lock_wait_ticks_.fetch_add(detail::TickClock::now() - start, std::memory_order_relaxed);
  } catch (...) {
    detail::EngineLock guard(mutex_);
    holders_.unclaim(id);
    throw;
  }
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
      id = locks_.take_granted_abandoned([&](std::size_t i) { return holders_.claimed(i); });
      if (!id) return;
      holders_.claim_for_rank(*id);  // no thread of this rank acquires it meanwhile
    }
    locks_.finish_release(locks_.begin_release(*id, epoch_, {}));
    detail::EngineLock guard(mutex_);
    holders_.unclaim(*id);
  }
}

void Dsm::Engine::release_lock(std::size_t id) {
  note_thread(this_thread());
  detail::LockTable::Release appended;
  {
    detail::EngineLock guard(mutex_);
    if (!holders_.claimed(id) || !holders_.any_held())
      throw Error(Errc::invalid_state, rank_,
                  "Dsm::unlock: lock " + std::to_string(id) + " is not held by this rank");
    // Diffs for the lock's home ride in its release call, when it is one.
    const std::span<const std::byte> carried =
        release(ReleaseKind::lock, locks_.releases_by_call(id) ? locks_.home(id) : -1);
    if (locks_.releases_by_call(id))
      for (std::uint64_t notice : lock_notices_) wish_for_lock(id, detail::notice_page(notice));
    // The notices stay for the enclosing locks' logs until the outermost
    // unlock. They go to the log while mutex_ guards them; the hand-over
    // comes after it, as it may wait for a successor.
    appended = locks_.begin_release(id, epoch_, lock_notices_, carried);
    if (holders_.released()) forget_lock_notices(lock_notices_.size());
  }
  locks_.finish_release(appended);
  {
    detail::EngineLock guard(mutex_);
    holders_.unclaim(id);
  }
  pass_on_abandoned_locks();
}

}  // namespace mpidsm
