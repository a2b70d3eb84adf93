// IdleBackoff: a wait yields while it is young, sleeps once it has yielded
// kYieldsBeforeSleep times in a row, and yields again after progress.
#include "transport/progress/idle_backoff.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace mpidsm::detail {
namespace {

TEST(IdleBackoff, YieldsUntilItsYieldsAreSpentThenSleeps) {
  IdleBackoff backoff;
  for (unsigned i = 0; i < IdleBackoff::kYieldsBeforeSleep; ++i) {
    EXPECT_FALSE(backoff.sleeps_next()) << "idle " << i;
    backoff.idle();
  }
  EXPECT_TRUE(backoff.sleeps_next());
  // A sleep lasts at least its length (nanosleep never returns early
  // without a signal, and none is sent here).
  const auto start = std::chrono::steady_clock::now();
  backoff.idle();
  EXPECT_GE(std::chrono::steady_clock::now() - start, IdleBackoff::kSleep);
  EXPECT_TRUE(backoff.sleeps_next()) << "a wait still idle keeps sleeping";
}

TEST(IdleBackoff, ProgressMakesTheWaitYieldAgain) {
  IdleBackoff backoff;
  for (unsigned i = 0; i < IdleBackoff::kYieldsBeforeSleep; ++i) backoff.idle();
  ASSERT_TRUE(backoff.sleeps_next());
  backoff.progressed();
  EXPECT_FALSE(backoff.sleeps_next());
  for (unsigned i = 1; i < IdleBackoff::kYieldsBeforeSleep; ++i) backoff.idle();
  EXPECT_FALSE(backoff.sleeps_next()) << "one yield short of sleeping";
  backoff.idle();
  EXPECT_TRUE(backoff.sleeps_next());
}

}  // namespace
}  // namespace mpidsm::detail
