// Protocol arithmetic of the DSM, driven without MPI or UCX: page placement
// (diffs: dsm_diff_test.cpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "dsm/placement/placement.hpp"

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

// Blocks of 1.5 pages, 0.25 page, 2 pages and 0.25 page with 4 KiB pages:
// a page goes with the block holding its first byte.
TEST(Placement, BlocksHomeThePagesWhoseFirstByteTheyHold) {
  const std::size_t page = 4096;
  const auto p =
      Placement::blocks({{page + page / 2, 3}, {page / 4, 1}, {2 * page, 2}, {page / 4, 0}});
  const BlockStarts starts = block_starts(*p.block_list, page);
  // Block 1 ([1.5, 1.75) pages) holds no page start; block 3 ([3.75, 4)) neither.
  EXPECT_EQ(starts, (BlockStarts{{0, 3}, {2, 2}}));
  std::vector<int> homes;
  for (std::size_t i = 0; i < 4; ++i) homes.push_back(home_of(p, i, 4, 4, starts));
  EXPECT_EQ(homes, (std::vector<int>{3, 3, 2, 2}));
}

}  // namespace
}  // namespace mpidsm::detail
