// Where the pages of a DSM allocation have their home.
#pragma once

#include "mpidsm/language.hpp"

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace mpidsm {

/// \addtogroup dsm
/// @{

/// One block of an allocation placed block by block (Placement::blocks).
struct PlacementBlock {
  /// Length of the block (a multiple of the page size, except the last).
  std::size_t bytes;
  /// The block's home rank.
  int home;
};

/// How an allocation's pages are spread over the ranks.
struct Placement {
  /// Which placement: see the factory functions.
  enum class Kind { block, cyclic, on_rank, first_touch, blocks };
  /// Which placement this is.
  Kind kind = Kind::block;
  std::size_t pages_per_block = 1;  ///< cyclic: consecutive pages per rank
  int rank = 0;                     ///< on_rank: the home of every page; cyclic: the first block's
  std::shared_ptr<const std::vector<PlacementBlock>> block_list;  ///< blocks: in address order

  /// One contiguous slab per rank (the last rank's may be shorter).
  static Placement block() { return {Kind::block, 1, 0, nullptr}; }
  /// Blocks of `pages` consecutive pages dealt to the ranks in turn, the first
  /// to `first_rank` (then first_rank + 1, ..., wrapping to rank 0).
  static Placement cyclic(std::size_t pages, int first_rank = 0) {
    return {Kind::cyclic, pages, first_rank, nullptr};
  }
  /// Every page homed on `home`.
  static Placement on(int home) { return {Kind::on_rank, 1, home, nullptr}; }
  /// Each page homed on the first rank that reads or writes it (one remote
  /// compare-and-swap decides, so concurrent first touches agree).
  static Placement first_touch() { return {Kind::first_touch, 1, 0, nullptr}; }
  /// Consecutive blocks of the given sizes in bytes, each homed on the rank
  /// it names (as JIAJIA's jia_alloc4 places blocks). Homes are per page: a
  /// page goes with the block that holds its first byte, so a block smaller
  /// than a page may home none. The blocks must cover the allocation.
  static Placement blocks(std::vector<PlacementBlock> list) {
    return {Kind::blocks, 1, 0,
            std::make_shared<const std::vector<PlacementBlock>>(std::move(list))};
  }
};

/// @}

}  // namespace mpidsm
