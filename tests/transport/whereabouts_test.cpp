// The hang report's lines: ranks grouped by where they are, in rank ranges.
#include "transport/whereabouts.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace mpidsm::detail {
namespace {

TEST(Whereabouts, RanksInTheSamePlaceShareOneLineOfRanges) {
  std::vector<Place> places(6);
  std::vector<char> answered(6, 1);
  for (int r : {0, 1, 2, 4}) {
    Whereabouts at;
    at.open(&places[static_cast<std::size_t>(r)]);
    at.entered_collective("Dsm::barrier");
    at.waiting("Dsm::barrier", 1);
  }
  Whereabouts skipped;
  skipped.open(&places[3]);
  skipped.entered_collective("Dsm::allocate");
  skipped.waiting("Dsm::allocate", 1);
  answered[5] = 0;
  EXPECT_EQ(Whereabouts::describe(places, answered),
            "  ranks 0-2, 4: waiting in Dsm::barrier (collective #1, Dsm::barrier)\n"
            "  rank 3: waiting in Dsm::allocate (collective #1, Dsm::allocate)\n"
            "  rank 5: did not answer (its place could not be read)\n");
}

TEST(Whereabouts, AWaitThatEndsLeavesTheLastCollective) {
  Place place;
  Whereabouts at;
  at.open(&place);
  EXPECT_EQ(Whereabouts::describe({&place, 1}, std::vector<char>{1}),
            "  rank 0: not waiting in mpidsm (collective #0)\n");
  at.entered_collective("Pgas::barrier");
  at.entered_collective("a name longer than the twenty-three characters kept");
  at.waiting("Pgas::wait_until", 5);
  at.stopped_waiting();
  EXPECT_EQ(Whereabouts::describe({&place, 1}, std::vector<char>{1}),
            "  rank 0: not waiting in mpidsm (collective #2, a name longer than the )\n");
}

}  // namespace
}  // namespace mpidsm::detail
