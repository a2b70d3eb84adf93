// YieldingSpinLock: mutual exclusion between threads that contend for it,
// more of them than this machine has cores (so holders get preempted and
// waiters must yield for them).
#include "transport/progress/yielding_spin_lock.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

namespace mpidsm::detail {
namespace {

TEST(YieldingSpinLock, ContendingThreadsNeverOverlapInsideIt) {
  YieldingSpinLock lock;
  constexpr int kThreads = 4, kRounds = 100000;
  std::atomic<int> inside{0}, overlaps{0};
  volatile long counter = 0;  // guarded by the lock alone: a lost update shows an overlap
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<YieldingSpinLock> guard(lock);
        if (inside.fetch_add(1) != 0) ++overlaps;
        counter = counter + 1;
        inside.fetch_sub(1);
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(counter, long{kThreads} * kRounds);
}

}  // namespace
}  // namespace mpidsm::detail
