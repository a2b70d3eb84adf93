// Where the pages of a DSM allocation have their home.
#pragma once

#include <cstddef>

namespace mpidsm {

// How an allocation's pages are spread over the ranks.
struct Placement {
  enum class Kind { block, cyclic, on_rank, first_touch };
  Kind kind = Kind::block;
  std::size_t pages_per_block = 1;  // cyclic: consecutive pages per rank
  int rank = 0;                     // on_rank: the home of every page; cyclic: the first block's

  // One contiguous slab per rank (the last rank's may be shorter).
  static Placement block() { return {Kind::block, 1, 0}; }
  // Blocks of `pages` consecutive pages dealt to the ranks in turn, the first
  // to `first_rank` (then first_rank + 1, ..., wrapping to rank 0).
  static Placement cyclic(std::size_t pages, int first_rank = 0) {
    return {Kind::cyclic, pages, first_rank};
  }
  // Every page homed on `home`.
  static Placement on(int home) { return {Kind::on_rank, 1, home}; }
  // Each page homed on the first rank that reads or writes it (one remote
  // compare-and-swap decides, so concurrent first touches agree).
  static Placement first_touch() { return {Kind::first_touch, 1, 0}; }
};

}  // namespace mpidsm
