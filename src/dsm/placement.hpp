// Which rank is home to each page of a DSM allocation. Plain arithmetic so
// unit tests drive it without MPI; the per-page cost is O(1) and no table
// proportional to the region is kept.
#pragma once

#include <cstddef>

namespace mpidsm {

// How an allocation's pages are spread over the ranks.
struct Placement {
  enum class Kind { block, cyclic, on_rank };
  Kind kind = Kind::block;
  std::size_t pages_per_block = 1;  // cyclic: consecutive pages per rank
  int rank = 0;                     // on_rank: the home of every page

  // One contiguous slab per rank (the last rank's may be shorter).
  static Placement block() { return {Kind::block, 1, 0}; }
  // Blocks of `pages` consecutive pages dealt to the ranks in turn.
  static Placement cyclic(std::size_t pages) { return {Kind::cyclic, pages, 0}; }
  // Every page homed on `home`.
  static Placement on(int home) { return {Kind::on_rank, 1, home}; }
};

namespace detail {

// The home of page `page` (0-based inside the allocation) of an allocation of
// `pages` pages placed over `ranks` ranks.
int home_of(const Placement& placement, std::size_t page, std::size_t pages, int ranks);

}  // namespace detail
}  // namespace mpidsm
