// Cheap timestamps for the statistics: the TSC on x86-64 (a few ns, against
// ~25 ns for clock_gettime in a VM, which showed in the barrier's cost),
// converted to nanoseconds with a rate measured between the clock's creation
// and each conversion. Elsewhere, steady_clock in nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace mpidsm::detail {

inline std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

class TickClock {
 public:
  TickClock() : start_ticks_(now()), start_ns_(steady_ns()) {}

  static std::uint64_t now() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return steady_ns();
#endif
  }

  // Nanoseconds in `ticks` (a sum of differences of now()).
  std::uint64_t to_ns(std::uint64_t ticks) const {
#if defined(__x86_64__)
    const double elapsed_ticks = static_cast<double>(now() - start_ticks_);
    const double elapsed_ns = static_cast<double>(steady_ns() - start_ns_);
    if (elapsed_ticks <= 0) return 0;
    return static_cast<std::uint64_t>(static_cast<double>(ticks) * elapsed_ns / elapsed_ticks);
#else
    return ticks;
#endif
  }

 private:
  std::uint64_t start_ticks_;
  std::uint64_t start_ns_;
};

}  // namespace mpidsm::detail
