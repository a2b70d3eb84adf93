// Where each rank of a runtime is, for the report of a wait that makes no
// progress (MPIDSM_HANG_REPORT): every rank keeps its place in 64 bytes of
// registered memory, which the reporting rank reads from every peer. Kept
// off the hot path: a collective adds one count and copies its name, and a
// wait publishes itself only at its first look at the peers (after 256
// polls), so short waits never touch it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace mpidsm::detail {

struct Place {
  std::uint64_t collectives = 0;    // collectives this rank has entered
  std::uint64_t waiting_since = 0;  // CLOCK_REALTIME ns its current wait began; 0: not waiting
  char waiting_in[24] = {};         // the call its current wait is in
  char last_collective[24] = {};    // the name of its last collective
};
static_assert(sizeof(Place) == 64);

class Whereabouts {
 public:
  // `place`: this rank's, in the registered region peers read.
  void open(Place* place) noexcept { place_ = place; }
  bool opened() const noexcept { return place_ != nullptr; }
  // Each collective, on every rank alike, counts once.
  void entered_collective(const char* name) noexcept;
  void waiting(const char* call, std::uint64_t since_ns) noexcept;
  void stopped_waiting() noexcept;

  // The report's lines: one per group of ranks in the same place ("ranks
  // 0-2, 5: waiting in Dsm::barrier (collective #12, Dsm::barrier)").
  // `answered[r]` is 0 for a rank whose place could not be read.
  static std::string describe(std::span<const Place> places, std::span<const char> answered);

 private:
  Place* place_ = nullptr;
};

// CLOCK_REALTIME in nanoseconds: comparable between the hosts' clocks.
std::uint64_t wall_clock_ns() noexcept;

}  // namespace mpidsm::detail
