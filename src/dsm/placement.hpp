// Which rank is home to each page of a DSM allocation. Plain arithmetic so
// unit tests drive it without MPI; O(1) per page.
#pragma once

#include <cstddef>

#include "mpidsm/placement.hpp"

namespace mpidsm {

namespace detail {

// Returned for first-touch pages: the home is decided at run time.
inline constexpr int decided_at_first_touch = -2;

// The home of page `page` (0-based inside the allocation) of an allocation of
// `pages` pages placed over `ranks` ranks.
int home_of(const Placement& placement, std::size_t page, std::size_t pages, int ranks);

}  // namespace detail
}  // namespace mpidsm
