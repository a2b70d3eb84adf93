// Which rank is home to each page of a DSM allocation. Plain arithmetic so
// unit tests drive it without MPI; O(1) per page.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "mpidsm/placement.hpp"

namespace mpidsm {

namespace detail {

// Returned for first-touch pages: the home is decided at run time.
inline constexpr int decided_at_first_touch = -2;

// Where each block of a Placement::blocks allocation starts homing pages:
// (first page inside the allocation, home), in page order, for the blocks
// that home at least one page.
using BlockStarts = std::vector<std::pair<std::size_t, int>>;
BlockStarts block_starts(const std::vector<PlacementBlock>& blocks, std::size_t page_size);

// The home of page `page` (0-based inside the allocation) of an allocation of
// `pages` pages placed over `ranks` ranks; `starts` for Kind::blocks.
int home_of(const Placement& placement, std::size_t page, std::size_t pages, int ranks,
            const BlockStarts& starts = {});

}  // namespace detail
}  // namespace mpidsm
