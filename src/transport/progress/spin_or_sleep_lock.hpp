// A lock for critical sections of a few hundred nanoseconds that two
// threads of a rank (its own and its progress thread) often want at once.
// How a thread that finds it taken waits depends on the node:
//   - spin: while the node has a core per rank, the waiter spins (and
//     yields now and then, for a holder preempted on the same core). It
//     never sleeps, so the holder never pays a wake-up.
//   - sleep: where ranks outnumber the cores (their waits yield), a spinner
//     keeps the core a preempted holder needs: the waiter sleeps on the
//     lock's word (a futex) at once, and the unlock wakes it.
//
// ProgressHandoff's mute state is such a section (an epoll_ctl at most).
// With a std::mutex there, the progress thread, woken by a message that
// arrived between two DSM syncs, slept on the futex while the rank's thread
// muted, and the rank's thread then paid the wake and often lost its core
// to the thread it woke. Measured across simulated hosts, median DSM/MPI or
// time per sync, alternating runs (docs/progress.md):
//   - a loop of syncs with a halo page (1+1): 13.2-16.0 us with the mutex,
//     11.2-11.9 us spinning (9.7-10.3 us without the progress thread);
//   - SOR on one node: 1.39-1.45 with the mutex, 0.99-1.05 spinning;
//   - jia_lu across 1+1+1+1 (four ranks, two cores): 1.46-1.59 with the
//     mutex, 1.77-1.94 spinning, 1.55-1.65 sleeping.
// A bounded spin before sleeping (256 pauses, 2.5 us) kept neither.
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace mpidsm::detail {

class SpinOrSleepLock {
 public:
  enum class Wait { spin, sleep };
  // Before any thread uses the lock.
  void set_wait(Wait wait) noexcept { wait_ = wait; }

  void lock() noexcept {
    if (try_take(kLocked)) return;
    if (wait_ == Wait::spin) {
      for (unsigned spins = 1; !try_take(kLocked); ++spins) {
        pause();
        if (spins % kSpinsBeforeYield == 0) sched_yield();
      }
      return;
    }
    // Marked contended from here on, so that the holder's unlock wakes us.
    while (state_.exchange(kContended, std::memory_order_acquire) != kFree)
      futex(FUTEX_WAIT_PRIVATE, kContended);
  }
  void unlock() noexcept {
    if (state_.exchange(kFree, std::memory_order_release) == kContended)
      futex(FUTEX_WAKE_PRIVATE, 1);
  }

 private:
  static constexpr int kFree = 0, kLocked = 1, kContended = 2;
  static constexpr unsigned kSpinsBeforeYield = 64;

  bool try_take(int as) noexcept {
    int free = kFree;
    return state_.compare_exchange_strong(free, as, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  // The futex itself, not std::atomic::wait, whose library version spins
  // and yields before it sleeps. FUTEX_WAIT returns at once if the word
  // changed meanwhile.
  void futex(int operation, int value) noexcept {
    syscall(SYS_futex, reinterpret_cast<int*>(&state_), operation, value, nullptr, nullptr, 0);
  }
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  Wait wait_ = Wait::spin;
  std::atomic<int> state_{kFree};
  static_assert(sizeof(std::atomic<int>) == sizeof(int), "the futex word is the atomic's int");
};

}  // namespace mpidsm::detail
