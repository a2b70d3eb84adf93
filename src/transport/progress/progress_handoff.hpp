// Who progresses the worker when events arrive: a thread waiting inside the
// transport (it drives UCX itself), or the progress thread sleeping on the
// worker's event fd (it serves remote ranks while this rank computes).
//
// Measured across two simulated hosts (tcp, no spare CPU): when events also
// woke the sleeping thread during a wait, put+quiet took 2x and a tagged
// ping-pong 1.8x what they take without the thread. A woken thread calls into
// the worker, whose multi-threaded mode guards it with a spinlock, so it
// spins while the waiter holds it, or preempts the waiter and makes it spin.
// A thread preempted while holding a spinlock makes the other spin for a
// whole time slice: the helper used a third of a CPU spinning there.
// Hence two rules:
// 1. The helper thread enters the worker only while no other thread is
//    inside the transport, and a thread entering lets a helper already
//    inside finish first (Dekker-style flags: each writes its own, then
//    reads the other's). Counting costs two atomic operations per call, and
//    only once a helper runs.
// 2. Once the helper runs, a wait still idle after a few polls (a remote
//    one) *mutes* the worker's fd in the sleeper's epoll set (one
//    epoll_ctl, overlapped with the wait), and the last thread out unmutes
//    it (one more), so events already handled do not wake the sleeper.
//    Short waits (shared memory) make no system call.
// 3. While MPI's progress loop serves peers (the rank is blocked in MPI and
//    that loop's callback found events), the worker's fd stays muted, and
//    the sleeper sleeps for at most kMpiQuietWindow at a time: once the loop
//    has served nothing for that long (the rank left MPI, or peers went
//    quiet), it unmutes the fd and sleeps on it again. Measured across two
//    hosts with no spare CPU, a DSM read miss from a home in MPI_Barrier
//    took 29-31 us when each request also woke the sleeper (MPI's loop
//    served 1999 of 2000 of them anyway), 23-24 us with the fd muted.
//    The price: a request that arrives within that window after the rank
//    left MPI waits for the window's end, and the sleeper wakes once per
//    window while MPI's loop serves peers.
#pragma once

#include <sys/epoll.h>
#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "spin_or_sleep_lock.hpp"

namespace mpidsm::detail {

class ProgressHandoff {
 public:
  ProgressHandoff() = default;
  ~ProgressHandoff();
  ProgressHandoff(const ProgressHandoff&) = delete;
  ProgressHandoff& operator=(const ProgressHandoff&) = delete;

  // Creates the sleeper's epoll set over the worker's event fd (the worker
  // must be multi-threaded and have UCP_FEATURE_WAKEUP); throws Errc::transport.
  // `oversubscribed`: the node runs more ranks than it has cores (their
  // waits yield); then a thread finding the mute state's lock taken sleeps
  // instead of spinning (spin_or_sleep_lock.hpp).
  void open(int rank, ucp_worker_h worker, bool oversubscribed);

  // --- threads inside the transport (other than the helper) ---
  // Calls that touch the worker, waits included, count themselves once a
  // helper runs (CountedInside).
  bool helper_running() const noexcept { return helper_running_.load(std::memory_order_relaxed); }
  void enter() noexcept {
    inside_.fetch_add(1, std::memory_order_seq_cst);
    if (helper_inside_.load(std::memory_order_seq_cst) && !in_helper_) [[unlikely]]
      let_helper_finish();
  }
  // Until the last thread inside leaves, events do not wake the sleeper.
  // True when muted (false: nobody is inside, or the set was never opened).
  bool mute() noexcept;
  void leave() noexcept {
    if (inside_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        mute_requested_.load(std::memory_order_seq_cst))
      apply();
  }
  bool others_inside() const noexcept { return inside_.load(std::memory_order_relaxed) > 0; }

  // --- the progress thread (the helper) ---
  // Brackets each call into the worker; false (and not inside) when another
  // thread is inside the transport (a waiter drives the worker itself).
  bool helper_enter() noexcept;
  void helper_leave() noexcept {
    in_helper_ = false;
    helper_inside_.store(false, std::memory_order_release);
  }
  // Arms the worker and blocks until it has events while no other thread is
  // inside the transport, or until interrupt(). Returns at once when events
  // are pending.
  void sleep();
  void interrupt() noexcept;

  // --- MPI's progress loop (MpiProgressHook), counted inside ---
  // After a round of that loop that found events: mutes the worker's fd
  // while the loop goes on serving (rule 3).
  void mpi_loop_served() noexcept;
  static constexpr std::chrono::nanoseconds kMpiQuietWindow{100'000};

  // How often MPI's loop began serving peers and muted the fd (rule 3).
  std::uint64_t mpi_serving_episodes() const noexcept {
    return mpi_episodes_.load(std::memory_order_relaxed);
  }
  // How often waiters muted the fd (rule 2): a system call each, and one more
  // to unmute.
  std::uint64_t waiter_mutes() const noexcept {
    return waiter_mutes_.load(std::memory_order_relaxed);
  }

 private:
  // Mutes or unmutes as mute_requested_ and inside_ (rule 2) and
  // mpi_serving_ (rule 3) say.
  bool apply() noexcept;
  static std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  // The sleeper's wait for events: for at most kMpiQuietWindow while
  // MPI's loop serves peers, else until they come.
  int wait_for_events(epoll_event* events, int capacity);
  bool arm() noexcept;  // false: events are pending
  void let_helper_finish() const noexcept;

  int rank_ = -1;
  ucp_worker_h worker_ = nullptr;
  int epoll_fd_ = -1;
  int worker_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<int> inside_{0};
  std::atomic<bool> mute_requested_{false};
  std::atomic<bool> helper_inside_{false};
  std::atomic<bool> helper_running_{false};
  // UCX callbacks the helper runs may call back in: they must not wait for
  // the helper to leave.
  static thread_local bool in_helper_;
  SpinOrSleepLock mute_lock_;
  bool muted_ = false;  // guarded by mute_lock_
  // The worker was armed since the helper last progressed it: an unmute
  // needs no arm.
  std::atomic<bool> armed_{false};
  // Rule 3: MPI's loop serves peers, and when it last found events.
  std::atomic<bool> mpi_serving_{false};
  std::atomic<std::int64_t> mpi_served_ns_{0};
  std::atomic<std::uint64_t> mpi_episodes_{0};
  std::atomic<std::uint64_t> waiter_mutes_{0};
};

// Counts a thread as inside the transport for its lifetime, once a helper
// runs and unless told not to (calls that block in MPI collectives). Before
// the helper's first call nobody needs the count: no atomic operation then.
class CountedInside {
 public:
  explicit CountedInside(ProgressHandoff& handoff, bool count = true) noexcept
      : handoff_(count && handoff.helper_running() ? &handoff : nullptr) {
    if (handoff_) handoff_->enter();
  }
  ~CountedInside() {
    if (handoff_) handoff_->leave();
  }
  CountedInside(const CountedInside&) = delete;
  CountedInside& operator=(const CountedInside&) = delete;

 private:
  ProgressHandoff* handoff_;
};

}  // namespace mpidsm::detail
