// JIAJIA's load balancing (jia_divtask, jia_loadcheck with
// jia_config(LOADBAL, ON)): a loop's iterations are divided among the hosts
// in proportion to each host's computing power, which jia_loadcheck
// re-estimates from how long each host computed since the last check.
// Plain arithmetic, so unit tests drive it without MPI.
#pragma once

#include <span>
#include <utility>
#include <vector>

namespace mpidsm::jia {

// Below this relative spread of the hosts' computing times (standard
// deviation over mean, JIAJIA's Delta) the powers stay as they are: timing
// noise must not move work around.
inline constexpr double kBalancedSpread = 0.05;

// Host `host`'s part of the iterations [first, last] (inclusive, JIAJIA's
// convention) among powers.size() hosts: a share of the iterations in
// proportion to its power (the powers sum to 1, rounded down), in host
// order, the last host taking what rounding leaves. Equal powers give
// JIAJIA's even split. An empty part ends one before it begins.
std::pair<int, int> divide(int first, int last, std::span<const double> powers, int host);

// The powers after the hosts computed for `seconds` each with `powers`:
// unchanged when the times' spread is below kBalancedSpread, otherwise each
// power divided by its time, normalised to sum to 1.
std::vector<double> rebalance(std::span<const double> powers, std::span<const double> seconds);

}  // namespace mpidsm::jia
