// A lock for critical sections of a few hundred nanoseconds that a thread
// often finds taken by a thread on another core: the waiter spins a little
// (the holder is usually about to leave), then sleeps on the lock's word
// (a futex), so that a holder preempted on an oversubscribed node gets the
// CPU instead of a spinner. Unlocking costs a wake-up only when a waiter
// sleeps.
//
// ProgressHandoff's mute state is such a section (an epoll_ctl at most).
// With a std::mutex there, the progress thread, woken by a message that
// arrived between two DSM syncs, slept on the futex at once while the
// rank's thread muted, and the rank's thread then paid a futex wake and
// often lost its core to the thread it woke: a sync with a neighbour across
// two simulated hosts took 13.2-16.0 us, against 9.7-10.3 us without the
// progress thread. Spinning without ever sleeping fixed that (11.2-11.9 us)
// but cost jia_lu across three hosts on two cores, where a spinner kept
// the core of a preempted holder: 1.41 -> 1.48-1.60 its MPI twin.
#pragma once

#include <atomic>

namespace mpidsm::detail {

class SpinThenSleepLock {
 public:
  void lock() noexcept {
    for (unsigned spin = 0; spin < kSpins; ++spin) {
      int free = 0;
      if (state_.compare_exchange_weak(free, kLocked, std::memory_order_acquire,
                                       std::memory_order_relaxed))
        return;
      pause();
    }
    // Marked contended from here on, so that the holder's unlock wakes us.
    while (state_.exchange(kContended, std::memory_order_acquire) != kFree)
      state_.wait(kContended, std::memory_order_relaxed);
  }
  void unlock() noexcept {
    if (state_.exchange(kFree, std::memory_order_release) == kContended) state_.notify_one();
  }

 private:
  static constexpr int kFree = 0, kLocked = 1, kContended = 2;
  // About a microsecond: longer than the section, shorter than a futex
  // wait and wake.
  static constexpr unsigned kSpins = 256;
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  std::atomic<int> state_{kFree};
};

}  // namespace mpidsm::detail
