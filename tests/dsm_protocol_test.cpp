// Protocol arithmetic of the DSM, driven without MPI or UCX: page placement
// (diffs: dsm_diff_test.cpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

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

}  // namespace
}  // namespace mpidsm::detail
