// IdleBackoff: a wait yields while it is young, sleeps once it has been idle
// for kYieldFor, and yields again after progress.
#include "transport/progress/idle_backoff.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace mpidsm::detail {
namespace {

using Clock = IdleBackoff::Clock;

TEST(IdleBackoff, YieldsUntilIdleForItsTimeThenSleeps) {
  IdleBackoff backoff;
  const Clock::time_point first = Clock::now();
  EXPECT_FALSE(backoff.sleeps_next(first)) << "a wait that never idled";
  // However many idle polls: a count of yields is no measure of time.
  for (int i = 0; i < 10000; ++i) backoff.idle(first + IdleBackoff::kYieldFor / 2);
  EXPECT_FALSE(backoff.sleeps_next(first + IdleBackoff::kYieldFor / 2 + IdleBackoff::kYieldFor -
                                   std::chrono::microseconds(1)))
      << "idle since its first idle poll, not since the first call";
  EXPECT_TRUE(backoff.sleeps_next(first + IdleBackoff::kYieldFor * 3 / 2));
  // A sleep lasts at least its length (nanosleep never returns early
  // without a signal, and none is sent here).
  const auto start = Clock::now();
  backoff.idle(first + IdleBackoff::kYieldFor * 3 / 2);
  EXPECT_GE(Clock::now() - start, IdleBackoff::kSleep);
  EXPECT_TRUE(backoff.sleeps_next(first + IdleBackoff::kYieldFor * 2))
      << "a wait still idle keeps sleeping";
}

TEST(IdleBackoff, ProgressMakesTheWaitYieldAgain) {
  IdleBackoff backoff;
  const Clock::time_point first = Clock::now();
  backoff.idle(first);
  ASSERT_TRUE(backoff.sleeps_next(first + IdleBackoff::kYieldFor));
  backoff.progressed();
  EXPECT_FALSE(backoff.sleeps_next(first + IdleBackoff::kYieldFor));
  const Clock::time_point again = first + IdleBackoff::kYieldFor * 2;
  backoff.idle(again);
  EXPECT_FALSE(backoff.sleeps_next(again + IdleBackoff::kYieldFor - std::chrono::microseconds(1)))
      << "the new idle spell counts from its own first poll";
  EXPECT_TRUE(backoff.sleeps_next(again + IdleBackoff::kYieldFor));
}

}  // namespace
}  // namespace mpidsm::detail
