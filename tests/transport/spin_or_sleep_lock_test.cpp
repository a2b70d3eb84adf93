// SpinOrSleepLock: mutual exclusion between threads that contend for it,
// more of them than this machine has cores (so holders get preempted), with
// waiters that spin or sleep; and a waiter asleep is woken by the unlock.
#include "transport/progress/spin_or_sleep_lock.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

namespace mpidsm::detail {
namespace {

// Threads that spin, or sleep (an oversubscribed node).
void contending_threads_never_overlap(SpinOrSleepLock::Wait wait) {
  SpinOrSleepLock lock;
  lock.set_wait(wait);
  constexpr int kThreads = 4, kRounds = 100000;
  std::atomic<int> inside{0}, overlaps{0};
  volatile long counter = 0;  // guarded by the lock alone: a lost update shows an overlap
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<SpinOrSleepLock> guard(lock);
        if (inside.fetch_add(1) != 0) ++overlaps;
        counter = counter + 1;
        inside.fetch_sub(1);
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(counter, long{kThreads} * kRounds);
}

TEST(SpinOrSleepLock, ContendingThreadsThatSpinNeverOverlapInsideIt) {
  contending_threads_never_overlap(SpinOrSleepLock::Wait::spin);
}

TEST(SpinOrSleepLock, ContendingThreadsThatSleepNeverOverlapInsideIt) {
  contending_threads_never_overlap(SpinOrSleepLock::Wait::sleep);
}

TEST(SpinOrSleepLock, AWaiterThatWentToSleepGetsTheLockWhenItIsReleased) {
  SpinOrSleepLock lock;
  lock.set_wait(SpinOrSleepLock::Wait::sleep);
  std::atomic<bool> acquired{false};
  lock.lock();
  std::thread waiter([&] {
    std::lock_guard<SpinOrSleepLock> guard(lock);
    acquired = true;
  });
  // The waiter sleeps on the lock by now.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(acquired.load());
  lock.unlock();
  waiter.join();  // hangs (and the test times out) if the unlock did not wake it
  EXPECT_TRUE(acquired.load());
}

}  // namespace
}  // namespace mpidsm::detail
