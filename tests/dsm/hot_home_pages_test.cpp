// HotHomePages without MPI or UCX: which home pages become hot, how a
// release tells a hot page's writes from none, cold pages' snapshots, and
// the bound on slots.
#include "dsm/memory/hot_home_pages.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace mpidsm::detail {
namespace {

constexpr std::size_t kPageSize = 256;

// `page` written in two consecutive intervals, whose releases end epochs or
// not, then adopted with the snapshot `bytes`.
void make_hot(HotHomePages& hot, std::size_t page, const std::byte* bytes, bool ends_epoch) {
  hot.begin_release(ends_epoch);
  hot.written(page);
  hot.begin_release(ends_epoch);
  ASSERT_TRUE(hot.written(page));
  hot.adopt(page, bytes);
}

// `checks` releases each finding `page` unchanged and not yet cooling; then
// one more release begins: whether the page cools at it.
bool cools_after_idle_checks(HotHomePages& hot, std::size_t page, const std::byte* bytes,
                             unsigned checks, bool ends_epoch) {
  for (unsigned check = 0; check < checks; ++check) {
    hot.begin_release(ends_epoch);
    EXPECT_FALSE(hot.cooling(page)) << "check " << check;
    EXPECT_FALSE(hot.changed(page, bytes)) << "check " << check;
  }
  hot.begin_release(ends_epoch);
  return hot.cooling(page);
}

TEST(HotHomePages, APageWrittenAgainSoonBecomesHot) {
  HotHomePages hot(100, kPageSize);
  hot.begin_release(true);
  EXPECT_FALSE(hot.written(7));  // one write is no pattern
  hot.begin_release(true);
  EXPECT_TRUE(hot.written(7));  // written in consecutive intervals
  HotHomePages other(100, kPageSize);
  other.begin_release(true);
  other.written(7);
  for (unsigned gap = 1; gap < HotHomePages::kCoolAfter; ++gap) other.begin_release(true);
  other.begin_release(true);
  EXPECT_TRUE(other.written(7));  // every kCoolAfter-th interval: it would stay hot
}

TEST(HotHomePages, APageWrittenRarelyStaysTrackedByFaults) {
  HotHomePages hot(100, kPageSize);
  for (int time = 0; time < 3; ++time) {
    hot.begin_release(true);
    EXPECT_FALSE(hot.written(7)) << time;
    for (unsigned gap = 0; gap < HotHomePages::kCoolAfter; ++gap) hot.begin_release(true);
  }
}

// Between barriers a program may release many locks (Water: six locks and
// two barriers per step): a page its home rewrites once per step is recent
// by epochs, however many releases lie between its writes, and stays hot
// while it is rewritten so.
TEST(HotHomePages, APageRewrittenOncePerStepAmongLockReleasesStaysHot) {
  constexpr int kLockReleases = 6, kBarriers = 2, kReleases = kLockReleases + kBarriers;
  static_assert(kReleases > HotHomePages::kCoolAfter);
  HotHomePages hot(100, kPageSize);
  std::vector<std::byte> page(kPageSize, std::byte{1});
  // Releases 0-5 a lock's, 6 and 7 barriers'; the page is written before 7.
  auto ends_epoch = [](int release) { return release >= kLockReleases; };
  for (int release = 0; release < kReleases; ++release) hot.begin_release(ends_epoch(release));
  EXPECT_FALSE(hot.written(7));
  for (int release = 0; release < kReleases; ++release) hot.begin_release(ends_epoch(release));
  ASSERT_TRUE(hot.written(7)) << "written again two epochs later";
  hot.adopt(7, page.data());
  for (int step = 0; step < 10; ++step) {
    for (int release = 0; release < kReleases; ++release) {
      if (release == kReleases - 1) page[static_cast<std::size_t>(step)] = std::byte{2};
      hot.begin_release(ends_epoch(release));
      EXPECT_FALSE(hot.cooling(7)) << "step " << step << ", release " << release;
      EXPECT_EQ(hot.changed(7, page.data()), release == kReleases - 1) << step << ", " << release;
    }
  }
  // Written no more: cools once kCoolAfter epochs passed.
  for (int step = 0; step < 3; ++step)
    for (int release = 0; release < kReleases; ++release) {
      hot.begin_release(ends_epoch(release));
      if (hot.cooling(7)) return;
      hot.changed(7, page.data());
    }
  ADD_FAILURE() << "never cooled";
}

// Locks without barriers advance no epoch: a hot page unchanged at
// kIdleChecks checks in a row cools all the same.
TEST(HotHomePages, WithoutEpochsAnUnchangedPageCoolsAfterTheIdleChecks) {
  HotHomePages hot(100, kPageSize);
  std::vector<std::byte> page(kPageSize, std::byte{1});
  make_hot(hot, 5, page.data(), false);
  EXPECT_TRUE(cools_after_idle_checks(hot, 5, page.data(), HotHomePages::kIdleChecks - 1, false));
}

TEST(HotHomePages, AComparisonFindsWritesAndTheCopyBecomesTheSnapshot) {
  HotHomePages hot(100, kPageSize);
  std::vector<std::byte> page(kPageSize, std::byte{1});
  make_hot(hot, 3, page.data(), true);
  EXPECT_TRUE(hot.hot(3));
  EXPECT_FALSE(hot.cooling(3));

  page[kPageSize - 1] = std::byte{2};  // the last byte, so no prefix hides it
  EXPECT_TRUE(hot.changed(3, page.data()));
  EXPECT_FALSE(hot.cooling(3));
  // Compared with the copy taken last time: unchanged, kCoolAfter - 1 times
  // before the page must be made read-only ahead of its last comparison.
  EXPECT_TRUE(cools_after_idle_checks(hot, 3, page.data(), HotHomePages::kCoolAfter - 1, true));
  page[0] = std::byte{9};
  EXPECT_TRUE(hot.changed(3, page.data()));  // a change ends the idle run
  EXPECT_FALSE(hot.cooling(3));
  hot.drop(3);
  EXPECT_FALSE(hot.hot(3));
  EXPECT_TRUE(hot.pages().empty());
}

TEST(HotHomePages, NoMoreThanTheSlotsAreHotAndADroppedOneFreesItsSlot) {
  constexpr std::size_t pages = HotHomePages::kSlots + 10;
  HotHomePages hot(pages, kPageSize);
  std::vector<std::byte> bytes(kPageSize);
  hot.begin_release(true);
  for (std::size_t p = 0; p < pages; ++p) hot.written(p);
  hot.begin_release(true);
  std::size_t adopted = 0;
  for (std::size_t p = 0; p < pages; ++p)
    if (hot.written(p)) {
      hot.adopt(p, bytes.data());
      ++adopted;
    }
  EXPECT_EQ(adopted, HotHomePages::kSlots);
  EXPECT_EQ(hot.pages().size(), HotHomePages::kSlots);
  const std::size_t last = pages - 1;
  EXPECT_FALSE(hot.hot(last));
  hot.drop(0);
  hot.begin_release(true);
  EXPECT_TRUE(hot.written(last));  // a slot is free again
  EXPECT_FALSE(hot.written(1));    // already hot: never adopted twice
}

TEST(HotHomePages, EachSnapshotIsItsOwnPages) {
  HotHomePages hot(100, kPageSize);
  std::vector<std::byte> a(kPageSize, std::byte{1}), b(kPageSize, std::byte{2});
  hot.begin_release(true);
  hot.written(1);
  hot.written(2);
  hot.begin_release(true);
  ASSERT_TRUE(hot.written(1));
  ASSERT_TRUE(hot.written(2));
  hot.adopt(1, a.data());
  hot.adopt(2, b.data());
  // Several checks each, interleaved: the spare buffer rotates between slots.
  for (int round = 0; round < 3; ++round) {
    EXPECT_FALSE(hot.changed(1, a.data())) << round;
    EXPECT_FALSE(hot.changed(2, b.data())) << round;
  }
  EXPECT_TRUE(hot.changed(1, b.data()));
  EXPECT_TRUE(hot.changed(2, a.data()));
}

TEST(HotHomePages, AForgottenPageStartsAfreshAndFreesItsSlot) {
  HotHomePages hot(100, kPageSize);
  std::vector<std::byte> bytes(kPageSize);
  hot.begin_release(true);
  for (std::size_t p : {4, 5, 6, 50}) hot.written(p);
  hot.begin_release(true);
  for (std::size_t p : {4, 5, 6, 50}) {
    ASSERT_TRUE(hot.written(p));
    hot.adopt(p, bytes.data());
  }
  hot.forget(50);    // another rank wrote it: tracked by faults again
  hot.forget(4, 2);  // pages 4 and 5 freed
  EXPECT_FALSE(hot.hot(4));
  EXPECT_FALSE(hot.hot(5));
  EXPECT_TRUE(hot.hot(6));
  EXPECT_FALSE(hot.hot(50));
  EXPECT_EQ(hot.pages(), std::vector<std::size_t>{6});
  hot.begin_release(true);
  for (std::size_t p : {4, 5, 50}) EXPECT_FALSE(hot.written(p)) << p;  // no past writes
}

// body(hot) with `page` hot, its snapshot `bytes`.
template <class Body>
void with_a_hot_page(std::size_t page, const std::vector<std::byte>& bytes, Body&& body) {
  HotHomePages hot(HotHomePages::kSlots + 10, kPageSize);
  make_hot(hot, page, bytes.data(), true);
  body(hot);
}

TEST(HotHomePages, ACooledPageKeepsItsSnapshotToCompareWhenRewritten) {
  std::vector<std::byte> page(kPageSize, std::byte{1});
  with_a_hot_page(3, page, [&](HotHomePages& hot) {
    page[10] = std::byte{7};
    EXPECT_TRUE(hot.changed(3, page.data()));  // the snapshot it cools with holds the 7
    hot.cool(3);
    EXPECT_FALSE(hot.hot(3));
    EXPECT_TRUE(hot.cold(3));
    EXPECT_TRUE(hot.pages().empty());
    EXPECT_EQ(hot.cold_pages(), std::vector<std::size_t>{3});
    hot.begin_release(true);
    EXPECT_FALSE(hot.written(3)) << "a cold page is rewarmed, never adopted";
    EXPECT_FALSE(hot.rewarm(3, page.data())) << "rewritten with the bytes it cooled with";
    EXPECT_TRUE(hot.hot(3));
    EXPECT_TRUE(hot.cold_pages().empty());
    // Rewarmed with a full idle run ahead of it, of which the rewarm's
    // comparison is the first check; and written (the written() above)
    // kCoolAfter epochs before it cools.
    EXPECT_TRUE(cools_after_idle_checks(hot, 3, page.data(), HotHomePages::kCoolAfter - 1, true));
    hot.cool(3);
    page[kPageSize - 1] = std::byte{9};
    EXPECT_TRUE(hot.rewarm(3, page.data())) << "rewritten with other bytes";
  });
}

TEST(HotHomePages, ADroppedColdPageIsAdoptedAfresh) {
  std::vector<std::byte> page(kPageSize, std::byte{1});
  with_a_hot_page(3, page, [&](HotHomePages& hot) {
    hot.cool(3);
    hot.drop(3);  // another notice of it: its snapshot is no longer what readers hold
    EXPECT_FALSE(hot.held(3));
    EXPECT_TRUE(hot.cold_pages().empty());
    hot.begin_release(true);
    EXPECT_TRUE(hot.written(3));  // written within kCoolAfter: adopted afresh
  });
}

TEST(HotHomePages, AHotPageNeedingASlotTakesTheLongestColdOnes) {
  std::vector<std::byte> bytes(kPageSize);
  constexpr std::size_t pages = HotHomePages::kSlots + 10;
  HotHomePages hot(pages, kPageSize);
  hot.begin_release(true);
  for (std::size_t p = 0; p < pages; ++p) hot.written(p);
  hot.begin_release(true);
  for (std::size_t p = 0; p < HotHomePages::kSlots; ++p) {
    ASSERT_TRUE(hot.written(p));
    hot.adopt(p, bytes.data());
  }
  hot.cool(5);
  hot.cool(2);
  EXPECT_TRUE(hot.written(pages - 1)) << "a cold slot can be taken";
  hot.adopt(pages - 1, bytes.data());
  EXPECT_FALSE(hot.held(5)) << "cold the longest: its slot went";
  EXPECT_TRUE(hot.cold(2));
  EXPECT_TRUE(hot.hot(pages - 1));
  hot.adopt(pages - 2, bytes.data());
  EXPECT_FALSE(hot.held(2));
  EXPECT_FALSE(hot.written(pages - 3)) << "every slot hot";
  hot.forget(0, pages);  // freed: hot and cold alike
  EXPECT_TRUE(hot.pages().empty());
  EXPECT_TRUE(hot.cold_pages().empty());
}

}  // namespace
}  // namespace mpidsm::detail
