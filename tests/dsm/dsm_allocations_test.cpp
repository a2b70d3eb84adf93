// The DSM region's allocation bookkeeping, driven without MPI or UCX: pages
// taken and given back, placed homes, gaps, and the checks of a placement.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "dsm/placement/allocations.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

constexpr std::size_t kPage = 4096;

TEST(Allocations, PlacedHomesFollowEachAllocationsPlacement) {
  Allocations allocations(64, kPage, 4, 0);
  EXPECT_EQ(allocations.add(5 * kPage, Placement::cyclic(1, 1)).first, 0u);
  const Allocations::Allocation on_two = allocations.add(kPage + 1, Placement::on(2));
  EXPECT_EQ(on_two.first, 5u);
  EXPECT_EQ(on_two.pages, 2u) << "a byte past a page takes another";
  const std::vector<int> homes{1, 2, 3, 0, 1, 2, 2};
  for (std::size_t page = 0; page < homes.size(); ++page)
    EXPECT_EQ(allocations.placed_home(page), homes[page]) << "page " << page;
  EXPECT_EQ(allocations.placed_home(7), -1) << "past every allocation";
  const std::size_t touched = allocations.add(kPage, Placement::first_touch()).first;
  EXPECT_EQ(allocations.placed_home(touched), decided_at_first_touch);
}

TEST(Allocations, EachAllocationKeepsItsCoherencePolicy) {
  Allocations allocations(16, kPage, 2, 0);
  allocations.add(2 * kPage, Placement::block());
  EXPECT_TRUE(allocations.all_adaptive());
  allocations.add(3 * kPage, Placement::on(1), Coherence::single_writer);
  EXPECT_FALSE(allocations.all_adaptive());
  EXPECT_EQ(allocations.coherence_of(1), Coherence::adaptive);
  EXPECT_EQ(allocations.coherence_of(4), Coherence::single_writer);
  EXPECT_FALSE(allocations.coherence_of(5)) << "past every allocation";
  EXPECT_NE(Allocations::digest(kPage, Placement::block(), Coherence::update),
            Allocations::digest(kPage, Placement::block(), Coherence::invalidate));
  allocations.remove(2);
  EXPECT_TRUE(allocations.all_adaptive());
  EXPECT_FALSE(allocations.coherence_of(3));
}

TEST(Allocations, FreedPagesAreReusedAndLeaveAGap) {
  Allocations allocations(16, kPage, 2, 0);
  allocations.add(4 * kPage, Placement::block());  // pages 0..3
  allocations.add(4 * kPage, Placement::block());  // pages 4..7
  EXPECT_EQ(allocations.pages_at(4), 4u);
  EXPECT_FALSE(allocations.pages_at(5)) << "no allocation starts inside another";
  EXPECT_FALSE(allocations.first_unallocated(0, 7)) << "two allocations with no gap";
  EXPECT_EQ(allocations.first_unallocated(2, 9), 8u);
  allocations.remove(0);
  EXPECT_EQ(allocations.placed_home(1), -1);
  EXPECT_EQ(allocations.first_unallocated(0, 7), 0u);
  EXPECT_EQ(allocations.list().size(), 1u);
  EXPECT_EQ(allocations.add(2 * kPage, Placement::block()).first, 0u) << "first fit";
}

// What a report of a stray access names (Dsm::Engine::report_stray_access).
TEST(Allocations, TheNearestAllocationOfAStrayPageIsTheFreedOneThatHeldIt) {
  Allocations allocations(64, kPage, 2, 0);
  EXPECT_FALSE(allocations.nearest(3)) << "an empty region has none";
  const std::size_t kept = allocations.add(2 * kPage, Placement::first_touch()).first;  // 0-1
  const std::size_t freed = allocations.add(3 * kPage, Placement::first_touch()).first;  // 2-4
  allocations.remove(freed);
  const auto inside = allocations.nearest(3);
  ASSERT_TRUE(inside);
  EXPECT_TRUE(inside->freed);
  EXPECT_EQ(inside->first, freed);
  EXPECT_EQ(inside->pages, 3u);
  const auto beyond = allocations.nearest(40);
  ASSERT_TRUE(beyond);
  EXPECT_TRUE(beyond->freed) << "pages 2-4 end nearer to page 40 than pages 0-1";
  // Reused pages: the live allocation covering them is not stray; past it,
  // the nearest is the live one when it is closer.
  const std::size_t reused = allocations.add(4 * kPage, Placement::first_touch()).first;  // 2-5
  EXPECT_EQ(reused, freed);
  const auto after = allocations.nearest(7);
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->freed);
  EXPECT_EQ(after->first, reused);
  EXPECT_EQ(kept, 0u);
}

TEST(Allocations, AFullRegionIsRefusedNamingItsSize) {
  Allocations allocations(4, kPage, 2, 1);
  allocations.add(3 * kPage, Placement::block());
  try {
    allocations.add(2 * kPage, Placement::block());
    FAIL() << "two pages fitted in one";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::no_memory);
    EXPECT_NE(std::string(e.what()).find("largest free 4096 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(allocations.list().size(), 1u) << "a refused allocation leaves no record";
}

TEST(Allocations, PlacementsThatCannotHomeTheAllocationAreRefused) {
  Allocations allocations(16, kPage, 2, 0);
  // The code of the error check() throws, or nullopt when it accepts.
  auto code_of = [&](std::size_t bytes, const Placement& placement) -> std::optional<Errc> {
    try {
      allocations.check(bytes, placement);
    } catch (const Error& e) {
      return e.code();
    }
    return std::nullopt;
  };
  EXPECT_EQ(code_of(kPage, Placement::block()), std::nullopt);
  EXPECT_EQ(code_of(0, Placement::block()), Errc::invalid_argument);
  EXPECT_EQ(code_of(kPage, Placement::on(2)), Errc::invalid_rank);
  EXPECT_EQ(code_of(kPage, Placement::cyclic(0, 0)), Errc::invalid_argument);
  const std::vector<PlacementBlock> short_blocks{{kPage, 0}};
  EXPECT_EQ(code_of(2 * kPage, Placement::blocks(short_blocks)), Errc::invalid_argument);
  const std::vector<PlacementBlock> bad_home{{kPage, 5}};
  EXPECT_EQ(code_of(kPage, Placement::blocks(bad_home)), Errc::invalid_rank);
}

TEST(Allocations, TheDigestTellsPlacementsApart) {
  const std::vector<PlacementBlock> a{{kPage, 0}, {kPage, 1}}, b{{kPage, 1}, {kPage, 0}};
  EXPECT_EQ(Allocations::digest(kPage, Placement::blocks(a)),
            Allocations::digest(kPage, Placement::blocks(a)));
  EXPECT_NE(Allocations::digest(kPage, Placement::blocks(a)),
            Allocations::digest(kPage, Placement::blocks(b)));
  EXPECT_NE(Allocations::digest(kPage, Placement::cyclic(0, 1)),
            Allocations::digest(kPage, Placement::cyclic(1, 1)));
  EXPECT_NE(Allocations::digest(kPage, Placement::block()),
            Allocations::digest(2 * kPage, Placement::block()));
}

}  // namespace
}  // namespace mpidsm::detail
