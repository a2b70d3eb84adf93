// What a DSM with given settings needs, checked on every rank before any of
// it is allocated, so that a size that cannot be served is refused with the
// setting to change instead of failing half-built (where the other ranks
// would wait in a collective) or being killed by the kernel later.
#pragma once

#include <cstddef>
#include <optional>

#include "mpidsm/dsm.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {

// Pages a cache can hold at most: slots are 32-bit indices.
inline constexpr std::size_t max_cache_pages = (std::size_t{1} << 31) - 2;

// The refusal for `settings` on this rank, or nothing when they can be served.
std::optional<Error> refuse_unservable(const DsmSettings& settings, int rank, int ranks,
                                       std::size_t page_size);

}  // namespace mpidsm::detail
