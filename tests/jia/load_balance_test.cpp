// JIAJIA's load balancing arithmetic (jia_divtask, jia_loadcheck), without MPI.
#include <gtest/gtest.h>

#include <vector>

#include "jia/load_balance.hpp"

namespace mpidsm::jia {
namespace {

TEST(LoadBalance, EqualPowersSplitEvenlyAndTheLastHostTakesTheRest) {
  const std::vector<double> quarters(4, 0.25);
  EXPECT_EQ(divide(0, 9, quarters, 0), (std::pair{0, 1}));
  EXPECT_EQ(divide(0, 9, quarters, 1), (std::pair{2, 3}));
  EXPECT_EQ(divide(0, 9, quarters, 2), (std::pair{4, 5}));
  EXPECT_EQ(divide(0, 9, quarters, 3), (std::pair{6, 9}));
  const std::vector<double> thirds(3, 1.0 / 3);
  EXPECT_EQ(divide(1, 9, thirds, 1), (std::pair{4, 6})) << "9 x 1/3 must not round to 2";
}

TEST(LoadBalance, FewerIterationsThanHostsLeaveEmptyParts) {
  const std::vector<double> quarters(4, 0.25);
  const auto part = divide(5, 6, quarters, 1);
  EXPECT_EQ(part.second, part.first - 1) << "an empty part";
  EXPECT_EQ(divide(5, 6, quarters, 3), (std::pair{5, 6}));
}

TEST(LoadBalance, PartsFollowThePowersAndCoverTheRange) {
  const std::vector<double> powers{0.5, 0.25, 0.25};
  EXPECT_EQ(divide(0, 99, powers, 0), (std::pair{0, 49}));
  EXPECT_EQ(divide(0, 99, powers, 1), (std::pair{50, 74}));
  EXPECT_EQ(divide(0, 99, powers, 2), (std::pair{75, 99}));
}

TEST(LoadBalance, ASlowHostLosesPowerInProportionToItsTime) {
  const std::vector<double> even{0.5, 0.5};
  const std::vector<double> seconds{3.0, 1.0};  // host 0 took three times as long
  const auto next = rebalance(even, seconds);
  EXPECT_NEAR(next[0], 0.25, 1e-12);
  EXPECT_NEAR(next[1], 0.75, 1e-12);
}

TEST(LoadBalance, NoiseBelowTheSpreadMovesNothing) {
  const std::vector<double> powers{0.6, 0.4};
  const std::vector<double> seconds{1.00, 1.04};  // 2% apart
  EXPECT_EQ(rebalance(powers, seconds), powers);
  const std::vector<double> none{0.0, 0.0};
  EXPECT_EQ(rebalance(powers, none), powers) << "nothing measured yet";
}

}  // namespace
}  // namespace mpidsm::jia
