// Protocol arithmetic of the DSM, driven without MPI or UCX: page placement
// and byte-exact diffs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <utility>
#include <vector>

#include "dsm/diff.hpp"
#include "dsm/placement.hpp"

namespace mpidsm::detail {
namespace {

TEST(Placement, BlockGivesEachRankOneContiguousSlab) {
  const auto p = Placement::block();
  // 10 pages over 4 ranks: slabs of 3, 3, 3, 1.
  std::vector<int> homes;
  for (std::size_t page = 0; page < 10; ++page) homes.push_back(home_of(p, page, 10, 4));
  EXPECT_EQ(homes, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3}));
  EXPECT_EQ(home_of(p, 0, 1, 4), 0);  // fewer pages than ranks
}

TEST(Placement, CyclicDealsBlocksInTurn) {
  const auto p = Placement::cyclic(2);
  std::vector<int> homes;
  for (std::size_t page = 0; page < 10; ++page) homes.push_back(home_of(p, page, 10, 3));
  EXPECT_EQ(homes, (std::vector<int>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1}));
}

TEST(Placement, OnRankHomesEverything) {
  for (std::size_t page = 0; page < 5; ++page) EXPECT_EQ(home_of(Placement::on(2), page, 5, 4), 2);
}

std::vector<std::pair<std::size_t, std::size_t>> runs_of(const std::vector<std::byte>& twin,
                                                         const std::vector<std::byte>& page) {
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  for_each_changed_run(
      twin.data(), page.data(), twin.size(),
      [&](std::size_t offset, std::size_t length) { runs.emplace_back(offset, length); });
  return runs;
}

TEST(Diff, NoChangeNoRun) {
  std::vector<std::byte> twin(4096, std::byte{7}), page = twin;
  EXPECT_TRUE(runs_of(twin, page).empty());
}

TEST(Diff, RunsAreByteExactInsideAWord) {
  std::vector<std::byte> twin(64, std::byte{0}), page = twin;
  page[3] = std::byte{1};  // one byte inside the first word
  page[9] = std::byte{1};  // two adjacent bytes in the second word
  page[10] = std::byte{1};
  page[63] = std::byte{1};  // the last byte
  using Run = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(runs_of(twin, page), (std::vector<Run>{{3, 1}, {9, 2}, {63, 1}}));
}

TEST(Diff, RunsCrossWordBoundariesAndOddSizes) {
  std::vector<std::byte> twin(21, std::byte{0}), page = twin;
  for (std::size_t i = 6; i < 19; ++i) page[i] = std::byte{2};
  using Run = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(runs_of(twin, page), (std::vector<Run>{{6, 13}}));
}

TEST(Diff, ApplyingRunsOfTwoWritersMergesBoth) {
  // Two ranks change interleaved bytes of one page; applying both diffs to the
  // home copy must keep every change (the multiple-writer guarantee).
  std::mt19937 random(42);
  std::vector<std::byte> home(4096), a, b;
  for (auto& x : home) x = std::byte(random() & 0xff);
  a = b = home;
  for (std::size_t i = 0; i < home.size(); ++i) {
    if (i % 3 == 0) a[i] = ~home[i];
    if (i % 3 == 1) b[i] = ~home[i];
  }
  std::vector<std::byte> merged = home;
  for (const auto* writer : {&a, &b})
    for_each_changed_run(home.data(), writer->data(), home.size(),
                         [&](std::size_t offset, std::size_t length) {
                           std::copy_n(writer->begin() + offset, length, merged.begin() + offset);
                         });
  for (std::size_t i = 0; i < home.size(); ++i) {
    std::byte expected = i % 3 == 0 ? a[i] : i % 3 == 1 ? b[i] : home[i];
    ASSERT_EQ(merged[i], expected) << "byte " << i;
  }
}

}  // namespace
}  // namespace mpidsm::detail
