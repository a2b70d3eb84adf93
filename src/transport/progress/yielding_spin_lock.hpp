// A lock for critical sections of a few hundred nanoseconds that a thread
// often finds taken by a thread on another core: the waiter spins, and
// yields now and then so that a holder preempted on the same core runs.
//
// ProgressHandoff's mute state is such a section (an epoll_ctl at most).
// With a std::mutex there, the progress thread, woken by a message that
// arrived between two DSM syncs, blocked on the futex while the rank's
// thread muted, and the rank's thread then paid a futex wake and often lost
// its core to the woken thread: a sync with a neighbour across two
// simulated hosts took 13.2-16.0 us, against 11.2-11.9 us with this lock
// and 9.7-10.3 us without the progress thread.
#pragma once

#include <sched.h>

#include <atomic>

namespace mpidsm::detail {

class YieldingSpinLock {
 public:
  void lock() noexcept {
    unsigned spins = 0;
    while (held_.exchange(true, std::memory_order_acquire))
      while (held_.load(std::memory_order_relaxed))
        if (++spins % kSpinsBeforeYield == 0) sched_yield();
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  static constexpr unsigned kSpinsBeforeYield = 64;
  std::atomic<bool> held_{false};
};

}  // namespace mpidsm::detail
