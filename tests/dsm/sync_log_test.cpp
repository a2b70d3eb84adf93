// What a pairwise sync owes each peer (SyncLog) and how its message is read
// back (SyncMessage::View), without MPI or UCX.
#include <gtest/gtest.h>

#include <vector>

#include "dsm/protocol/sync_log.hpp"
#include "dsm/protocol/sync_message.hpp"

namespace mpidsm::detail {
namespace {

using Notices = std::vector<std::int64_t>;

Notices take(SyncLog& log, int peer, const Notices& since_barrier) {
  Notices out;
  log.take(peer, since_barrier, out);
  return out;
}

TEST(SyncLog, APeerNotSyncedSinceTheBarrierGetsTheBarriersList) {
  SyncLog log(3);
  log.record(5);  // before any sync: not logged
  EXPECT_EQ(log.entries(), 0u);
  EXPECT_EQ(take(log, 1, {5, 9}), (Notices{5, 9}));
}

TEST(SyncLog, EachPeerGetsWhatWasReleasedSinceItsLastSync) {
  SyncLog log(3);
  EXPECT_TRUE(take(log, 1, {}).empty());
  EXPECT_TRUE(take(log, 2, {}).empty());
  log.record(4);
  log.record(7);
  EXPECT_EQ(take(log, 1, {4, 7}), (Notices{4, 7}));
  log.record(4);  // written again in the next interval: owed again
  EXPECT_EQ(take(log, 1, {4, 7}), (Notices{4}));
  EXPECT_EQ(take(log, 2, {4, 7}), (Notices{4, 7, 4}));
  EXPECT_TRUE(take(log, 2, {4, 7}).empty());
}

TEST(SyncLog, ABarrierLeavesNothingOwed) {
  SyncLog log(2);
  take(log, 1, {});
  log.record(3);
  log.reset();
  EXPECT_EQ(log.entries(), 0u);
  log.record(8);  // not logged until the next sync
  EXPECT_EQ(take(log, 1, {8}), (Notices{8}));
}

TEST(SyncLog, ALongLogFallsBackToTheBarriersList) {
  SyncLog log(2);
  take(log, 1, {});
  for (std::size_t i = 0; i < 2 * SyncLog::kMaxEntries; ++i) log.record(1);  // past its room
  EXPECT_EQ(take(log, 1, {1, 2}), (Notices{1, 2}));
  EXPECT_EQ(log.entries(), 0u);
}

TEST(SyncMessage, AViewReadsEveryPartOfTheMessage) {
  constexpr std::size_t page_words = 2;
  // status, counts (3 notices, 1 wanted, 1 pushed), notices, wanted, pushed page, its bytes
  const Notices words{0, 3, 1, 1, 10, 11, 12, 20, 30, 111, 222};
  SyncMessage::View view;
  ASSERT_TRUE(view.parse(words, page_words));
  EXPECT_EQ(view.notices, 3u);
  EXPECT_EQ(Notices(view.inline_notices.begin(), view.inline_notices.end()), (Notices{10, 11, 12}));
  EXPECT_EQ(Notices(view.wanted.begin(), view.wanted.end()), (Notices{20}));
  EXPECT_EQ(Notices(view.pushed.begin(), view.pushed.end()), (Notices{30}));
  EXPECT_EQ(view.bytes[0], 111);
  EXPECT_EQ(view.bytes[1], 222);
}

TEST(SyncMessage, AShortOrInconsistentMessageIsMalformed) {
  SyncMessage::View view;
  EXPECT_FALSE(view.parse(Notices{0, 1}, 2));               // no full head
  EXPECT_FALSE(view.parse(Notices{0, 2, 0, 0, 10}, 2));     // a notice missing
  EXPECT_FALSE(view.parse(Notices{0, 0, 0, 1, 30, 1}, 2));  // a page's bytes missing
  EXPECT_FALSE(view.parse(Notices{0, -1, 0, 0}, 2));        // a negative count
  EXPECT_FALSE(view.parse(Notices{0, 0, 17, 0}, 2));        // more wanted than allowed
  // Notices beyond the inline ones come in a second message: not counted here.
  Notices many(SyncMessage::kHead + SyncMessage::kInlineNotices, 1);
  many[SyncMessage::kStatus] = 0;
  many[SyncMessage::kNotices] = 100;
  many[SyncMessage::kWanted] = 0;
  many[SyncMessage::kPushed] = 0;
  ASSERT_TRUE(view.parse(many, 2));
  EXPECT_EQ(view.inline_notices.size(), SyncMessage::kInlineNotices);
  EXPECT_EQ(view.notices, 100u);
}

}  // namespace
}  // namespace mpidsm::detail
