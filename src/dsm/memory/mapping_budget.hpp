// How many mappings the DSM's views may add to the process, shared by every
// Dsm in it: half of what vm.max_map_count leaves once the process is set up
// (MPI, UCX and the libraries keep the rest for their own mmap calls). A view
// that would exceed it first gives mappings back (Dsm::Engine::coalesce).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpidsm::detail {

// The mappings of this process (lines of /proc/self/maps) that overlap
// [begin, end); all of them by default.
std::size_t count_mappings(std::uintptr_t begin = 0, std::uintptr_t end = UINTPTR_MAX);

class MappingBudget {
 public:
  // The process-wide budget; computed from /proc the first time.
  static MappingBudget& process();

  std::size_t limit() const { return limit_; }
  // Takes `delta` (may be negative) when the total stays within the limit,
  // or in any case when `force`.
  bool try_take(std::ptrdiff_t delta, bool force = false);

 private:
  explicit MappingBudget(std::size_t limit) : limit_(limit) {}
  std::size_t limit_;
};

}  // namespace mpidsm::detail
