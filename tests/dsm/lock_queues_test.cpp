// The queues homes keep for their locks (lock_queues.hpp): who holds a
// lock, who waits in order, and the call each waiter left to be answered
// when the lock becomes its own; and the agreed keys that carry those
// answers, apart from every other use (agreed_keys.hpp).
#include <gtest/gtest.h>

#include <cstdint>

#include "dsm/protocol/agreed_keys.hpp"
#include "dsm/protocol/lock_queues.hpp"

namespace mpidsm::detail {
namespace {

struct Call {
  std::uint64_t asked = 0;
};

TEST(LockQueues, AFreeLockGoesToItsFirstAsker) {
  LockQueues<Call> queues(4);
  EXPECT_TRUE(queues.take(2, 5, {1}));
  Call next{};
  EXPECT_EQ(queues.pass(2, 5, next), -1);  // nobody waits: free again
  EXPECT_TRUE(queues.take(2, 7, {2}));
}

// `from` releases `id`: `to` holds it next, with the call it queued with.
void expect_handed(LockQueues<Call>& queues, std::size_t id, int from, int to,
                   std::uint64_t asked) {
  Call next{};
  EXPECT_EQ(queues.pass(id, from, next), to);
  EXPECT_EQ(next.asked, asked);
}

TEST(LockQueues, WaitersGetTheLockInOrderWithTheCallTheyQueuedWith) {
  LockQueues<Call> queues(8);
  ASSERT_TRUE(queues.take(3, 0, {10}));
  EXPECT_FALSE(queues.take(3, 4, {40}));
  EXPECT_FALSE(queues.take(3, 2, {20}));
  EXPECT_FALSE(queues.take(3, 9, {90}));
  expect_handed(queues, 3, 0, 4, 40);
  expect_handed(queues, 3, 4, 2, 20);
  // A waiter queued after some passed still comes last.
  EXPECT_FALSE(queues.take(3, 1, {11}));
  expect_handed(queues, 3, 2, 9, 90);
  expect_handed(queues, 3, 9, 1, 11);
  Call next{};
  EXPECT_EQ(queues.pass(3, 1, next), -1);
}

TEST(LockQueues, LocksQueueIndependently) {
  LockQueues<Call> queues(4);
  ASSERT_TRUE(queues.take(0, 1, {}));
  ASSERT_TRUE(queues.take(1, 2, {}));
  EXPECT_FALSE(queues.take(0, 3, {30}));
  EXPECT_FALSE(queues.take(1, 4, {40}));
  expect_handed(queues, 1, 2, 4, 40);
  expect_handed(queues, 0, 1, 3, 30);
}

TEST(LockQueuesDeathTest, ReleasingALockAnotherRankHoldsAborts) {
  LockQueues<Call> queues(2);
  ASSERT_TRUE(queues.take(1, 3, {}));
  Call next{};
  EXPECT_DEATH(queues.pass(1, 4, next), "rank 4 released DSM lock 1, which rank 3 holds");
}

TEST(AgreedKeys, EachUseHasItsOwnQuarter) {
  constexpr std::uint64_t quarter = kKeysPerUse;
  EXPECT_EQ(4 * quarter, std::uint64_t{LibraryMessaging::max_agreed_key} + 1);
  EXPECT_LT(barrier_update_key(quarter - 1), quarter);
  EXPECT_EQ(barrier_update_key(quarter), 0u);  // wraps within its part
  EXPECT_EQ(barrier_record_key(0), quarter);
  EXPECT_EQ(barrier_record_key(quarter - 1), 2 * quarter - 1);
  EXPECT_EQ(sync_key(0), 2 * quarter);
  EXPECT_EQ(sync_key(quarter - 1), 3 * quarter - 1);
  EXPECT_EQ(sync_key(quarter), 2 * quarter);
  EXPECT_EQ(lock_grant_key(0), 3 * quarter);
  EXPECT_EQ(lock_grant_key(quarter - 1), std::uint64_t{LibraryMessaging::max_agreed_key});
}

}  // namespace
}  // namespace mpidsm::detail
