// DSM bookkeeping driven without MPI or UCX: the LRU page cache, prefetch
// selection, twins, pin counts, the lock notice ring, and which chunks of a
// lazy table were used.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "dsm/engine/prefetch.hpp"
#include "dsm/memory/lazy_array.hpp"
#include "dsm/memory/page_cache.hpp"
#include "dsm/memory/pin_counts.hpp"
#include "dsm/memory/twin_slots.hpp"
#include "dsm/protocol/notice_log.hpp"

namespace mpidsm::detail {
namespace {

std::vector<std::size_t> contents(const PageCache& cache) {
  std::vector<std::size_t> pages;
  cache.for_each([&](std::size_t page) { pages.push_back(page); });
  return pages;
}

TEST(PageCache, EvictsTheLeastRecentlyTouchedPage) {
  PageCache cache(3, 100);
  cache.insert(10);
  cache.insert(20);
  cache.insert(30);
  EXPECT_TRUE(cache.full());
  EXPECT_EQ(cache.oldest(), 10u);
  cache.touch(10);  // now 20 is the oldest
  EXPECT_EQ(cache.oldest(), 20u);
  EXPECT_EQ(contents(cache), (std::vector<std::size_t>{10, 30, 20}));
  cache.erase(cache.oldest());
  EXPECT_FALSE(cache.contains(20));
  cache.insert(40);
  EXPECT_EQ(contents(cache), (std::vector<std::size_t>{40, 10, 30}));
  EXPECT_EQ(cache.oldest(), 30u);
}

TEST(PageCache, ErasingDuringForEachVisitsEveryPageOnce) {
  PageCache cache(4, 16);
  for (std::size_t p : {1, 2, 3, 4}) cache.insert(p);
  std::vector<std::size_t> seen;
  cache.for_each([&](std::size_t page) {
    seen.push_back(page);
    cache.erase(page);
  });
  EXPECT_EQ(seen, (std::vector<std::size_t>{4, 3, 2, 1}));
  EXPECT_EQ(cache.size(), 0u);
  cache.insert(7);  // slots are reusable
  EXPECT_EQ(cache.oldest(), 7u);
}

TEST(Prefetch, TakesWantedPagesWithinTheCheckingWindow) {
  std::size_t out[8];
  // Pages 11..20 wanted only when even: from a miss at 10, look 6 ahead, take up to 2.
  const std::size_t n = select_prefetch(
      10, 100, 2, 6, [](std::size_t q) { return q % 2 == 0; }, out);
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(out[0], 10u);
  EXPECT_EQ(out[1], 12u);
  EXPECT_EQ(out[2], 14u);
  // The window bounds the search: nothing wanted within 3 pages.
  EXPECT_EQ(select_prefetch(
                10, 100, 4, 3, [](std::size_t q) { return q > 13; }, out),
            1u);
  // The region's end bounds it too.
  EXPECT_EQ(select_prefetch(
                98, 100, 4, 10, [](std::size_t) { return true; }, out),
            2u);
}

TEST(Prefetch, StreamsOfReadsAndWritesContinueApart) {
  MissStreams streams;
  EXPECT_TRUE(streams.continues(0, false)) << "the region's start begins a stream";
  streams.advance(false, 5, 13);  // a read batch from page 5 ended at page 12
  EXPECT_TRUE(streams.continues(13, false));
  EXPECT_FALSE(streams.continues(14, false)) << "a gap ends the stream";
  EXPECT_FALSE(streams.continues(13, true)) << "a read stream is not a write stream";
  streams.advance(true, 39, 40);
  EXPECT_TRUE(streams.continues(40, true));
  EXPECT_TRUE(streams.continues(13, false)) << "a write keeps the read stream's place";
  streams.advance(false, 13, 20);
  EXPECT_TRUE(streams.continues(20, false));
  EXPECT_FALSE(streams.continues(13, false)) << "a continued stream moves on";
}

// A scatter into several buckets interleaves one write stream per bucket:
// each continues although the others' misses come between its own.
TEST(Prefetch, InterleavedStreamsEachContinue) {
  MissStreams streams;
  constexpr std::size_t kBuckets = MissStreams::kStreams;
  for (std::size_t b = 0; b < kBuckets; ++b) streams.advance(true, 1000 * b + 1, 1000 * b + 2);
  for (std::size_t step = 2; step < 6; ++step)
    for (std::size_t b = 0; b < kBuckets; ++b) {
      EXPECT_TRUE(streams.continues(1000 * b + step, true)) << "bucket " << b << " step " << step;
      streams.advance(true, 1000 * b + step, 1000 * b + step + 1);
    }
  // One stream more replaces the one advanced least recently: bucket 0's.
  streams.advance(true, 99999, 100000);
  EXPECT_TRUE(streams.continues(100000, true));
  EXPECT_FALSE(streams.continues(6, true));
  EXPECT_TRUE(streams.continues(1006, true));
}

TEST(TwinSlots, EverySlotIsItsOwnPageAndComesBack) {
  TwinSlots twins(3, 64);
  const std::int32_t a = twins.take(), b = twins.take(), c = twins.take();
  EXPECT_EQ(twins.free_slots(), 0u);
  EXPECT_EQ(a, 0) << "handed out from the lowest slot";
  std::memset(twins.at(a), 1, 64);
  std::memset(twins.at(b), 2, 64);
  std::memset(twins.at(c), 3, 64);
  EXPECT_EQ(twins.at(b) - twins.at(a), 64);
  EXPECT_EQ(static_cast<int>(twins.at(a)[63]), 1) << "a neighbour's twin overlapped";
  twins.give_back(b);
  EXPECT_EQ(twins.take(), b);
}

TEST(PinCounts, RemotePagesAreCountedOnceWhilePinned) {
  PinCounts pins(8);
  EXPECT_FALSE(pins.pinned(2));
  ASSERT_TRUE(pins.add(2, true));
  ASSERT_TRUE(pins.add(2, true));
  ASSERT_TRUE(pins.add(5, false));  // homed here: holds no cache slot
  EXPECT_TRUE(pins.pinned(2));
  EXPECT_TRUE(pins.pinned(5));
  EXPECT_EQ(pins.remote_pinned(), 1u);
  pins.remove(2);
  EXPECT_TRUE(pins.pinned(2));
  EXPECT_EQ(pins.remote_pinned(), 1u) << "one pin of page 2 is left";
  pins.remove(2);
  pins.remove(5);
  EXPECT_FALSE(pins.pinned(2));
  EXPECT_FALSE(pins.pinned(5));
  EXPECT_EQ(pins.remote_pinned(), 0u);
}

TEST(NoticeLog, RingSpansWrapAroundTheEnd) {
  RingSpan spans[2];
  ASSERT_EQ(ring_spans(3, 3, 10, spans), 0);
  ASSERT_EQ(ring_spans(3, 7, 10, spans), 1);
  EXPECT_EQ(spans[0].index, 3u);
  EXPECT_EQ(spans[0].length, 4u);
  ASSERT_EQ(ring_spans(8, 13, 10, spans), 2);  // 8, 9 then 0, 1, 2
  EXPECT_EQ(spans[0].index, 8u);
  EXPECT_EQ(spans[0].length, 2u);
  EXPECT_EQ(spans[1].index, 0u);
  EXPECT_EQ(spans[1].length, 3u);
}

TEST(NoticeLog, NoticesCarryPageAndWriter) {
  const std::uint64_t notice = encode_notice(123456789, 4242);
  EXPECT_EQ(notice_page(notice), 123456789u);
  EXPECT_EQ(notice_writer(notice), 4242);
  EXPECT_EQ(LockRecordLayout::bytes, 1024u);
}

// Scans visit only the chunks a write reached: runs of neighbouring used
// chunks merged, clipped to the range asked for.
TEST(LazyArray, ScansVisitOnlyTheChunksWritten) {
  constexpr std::size_t kChunk = UsedChunks::kEntries;
  LazyArray<std::uint32_t> table(10 * kChunk);
  const LazyArray<std::uint32_t>& reader = table;
  EXPECT_EQ(reader[5 * kChunk], 0u);  // a read marks nothing
  table[2 * kChunk + 7] = 1;
  table[3 * kChunk] = 2;
  table[8 * kChunk + 100] = 3;  // beyond the range's end: clipped
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  for_each_used_range(kChunk + 5, 7 * kChunk, {&table.used()},
                      [&](std::size_t begin, std::size_t end) { runs.emplace_back(begin, end); });
  const std::vector<std::pair<std::size_t, std::size_t>> expected = {{2 * kChunk, 4 * kChunk},
                                                                     {8 * kChunk, 8 * kChunk + 5}};
  EXPECT_EQ(runs, expected);
  // Another table's chunks join the union.
  LazyArray<std::uint8_t> other(10 * kChunk);
  other[9 * kChunk] = 1;
  std::size_t visited = 0;
  for_each_used_range(0, 10 * kChunk, {&table.used(), &other.used()},
                      [&](std::size_t begin, std::size_t end) { visited += end - begin; });
  EXPECT_EQ(visited, 4 * kChunk);
}

// A reset zeroes the entries written and forgets the chunks it covered
// whole; a chunk it covers in part stays used, with its other entries kept.
TEST(LazyArray, ResetZeroesAndForgetsWholeChunks) {
  constexpr std::size_t kChunk = UsedChunks::kEntries;
  LazyArray<std::uint64_t> table(4 * kChunk);
  for (std::size_t i = 0; i < 4 * kChunk; i += 97) table[i] = i + 1;
  table.reset(kChunk, 2 * kChunk + 10);
  const LazyArray<std::uint64_t>& reader = table;
  for (std::size_t i = 0; i < 4 * kChunk; i += 97)
    EXPECT_EQ(reader[i], i >= kChunk && i < 3 * kChunk + 10 ? 0u : i + 1) << i;
  EXPECT_TRUE(table.used().used(0));
  EXPECT_FALSE(table.used().used(1));
  EXPECT_FALSE(table.used().used(2));
  EXPECT_TRUE(table.used().used(3));
  table.reset(0, 4 * kChunk);
  for (std::size_t chunk = 0; chunk < 4; ++chunk) EXPECT_FALSE(table.used().used(chunk));
  for (std::size_t i = 0; i < 4 * kChunk; i += 97) EXPECT_EQ(reader[i], 0u) << i;
}

}  // namespace
}  // namespace mpidsm::detail
