// Which thread of a rank holds which DSM lock, driven without MPI or UCX.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "dsm/protocol/lock_holders.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

TEST(LockHolders, AThreadCannotClaimALockItHolds) {
  std::mutex mutex;
  std::unique_lock<std::mutex> guard(mutex);
  LockHolders holders(8, 3);
  holders.claim(5, true, guard);
  EXPECT_TRUE(holders.claimed(5));
  EXPECT_FALSE(holders.claimed(4));
  try {
    holders.claim(5, true, guard);
    FAIL() << "a recursive claim succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_state);
    EXPECT_EQ(e.rank(), 3);
    EXPECT_NE(std::string(e.what()).find("not recursive"), std::string::npos) << e.what();
  }
}

TEST(LockHolders, AnotherThreadIsToldOrWaits) {
  std::mutex mutex;
  LockHolders holders(4, 0);
  {
    std::unique_lock<std::mutex> guard(mutex);
    holders.claim(1, true, guard);
  }
  std::thread told([&] {
    std::unique_lock<std::mutex> guard(mutex);
    EXPECT_THROW(holders.claim(1, false, guard), Error);
  });
  told.join();
  std::atomic<bool> claimed{false};
  std::thread waits([&] {
    std::unique_lock<std::mutex> guard(mutex);
    holders.claim(1, true, guard);
    claimed = true;
  });
  // The waiter cannot claim while this thread holds the lock id.
  for (int i = 0; i < 100; ++i) std::this_thread::yield();
  EXPECT_FALSE(claimed.load());
  {
    std::unique_lock<std::mutex> guard(mutex);
    holders.unclaim(1);
  }
  waits.join();
  EXPECT_TRUE(claimed.load());
  EXPECT_TRUE(holders.claimed(1));
}

TEST(LockHolders, HeldLocksAreCountedUntilTheLastRelease) {
  LockHolders holders(4, 0);
  EXPECT_FALSE(holders.any_held());
  holders.granted();
  holders.granted();
  EXPECT_TRUE(holders.any_held());
  EXPECT_FALSE(holders.released()) << "one lock is still held";
  EXPECT_TRUE(holders.released());
  EXPECT_FALSE(holders.any_held());
}

TEST(LockHolders, TheRankClaimsOnlyAnUnclaimedLock) {
  std::mutex mutex;
  std::unique_lock<std::mutex> guard(mutex);
  LockHolders holders(4, 0);
  EXPECT_TRUE(holders.claim_for_rank(2));
  EXPECT_FALSE(holders.claim_for_rank(2));
  holders.unclaim(2);
  holders.claim(2, false, guard);  // no stale thread recorded: this thread may claim it
  EXPECT_TRUE(holders.claimed(2));
}

}  // namespace
}  // namespace mpidsm::detail
