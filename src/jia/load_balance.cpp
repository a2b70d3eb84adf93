#include "load_balance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace mpidsm::jia {

std::pair<int, int> divide(int first, int last, std::span<const double> powers, int host) {
  const std::int64_t iterations = std::int64_t{last} - first + 1;
  std::int64_t begin = first;
  for (int h = 0;; ++h) {
    const bool final_host = h + 1 == static_cast<int>(powers.size());
    // Rounded down (equal powers then give JIAJIA's even split, the last
    // host taking the remainder); the epsilon keeps 9 x 1/3 from becoming 2.
    const auto exact = static_cast<std::int64_t>(
        std::floor(powers[static_cast<std::size_t>(h)] * static_cast<double>(iterations) + 1e-9));
    const std::int64_t share = final_host ? last - begin + 1 : std::min(exact, last - begin + 1);
    if (h == host) return {static_cast<int>(begin), static_cast<int>(begin + share - 1)};
    begin += share;
  }
}

std::vector<double> rebalance(std::span<const double> powers, std::span<const double> seconds) {
  const double n = static_cast<double>(seconds.size());
  double mean = 0, square = 0;
  for (double s : seconds) {
    mean += s / n;
    square += s * s / n;
  }
  const double variance = std::max(0.0, square - mean * mean);
  std::vector<double> next(powers.begin(), powers.end());
  if (mean <= 0 || variance < kBalancedSpread * kBalancedSpread * mean * mean) return next;
  // A host that measured no time at all is treated as the fastest measurable.
  const double floor = mean * 1e-6;
  double total = 0;
  for (std::size_t h = 0; h < next.size(); ++h) total += next[h] /= std::max(seconds[h], floor);
  for (double& p : next) p /= total;
  return next;
}

}  // namespace mpidsm::jia
