// Which pages a read miss fetches: the missed page, then up to `prefetch`
// later pages that `wanted` accepts (not cached here, same home), looking at
// most `max_checking` pages past the miss. Stops at the region's end.
#pragma once

#include <cstddef>

namespace mpidsm::detail {

template <class Wanted>
std::size_t select_prefetch(std::size_t page, std::size_t region_pages, std::size_t prefetch,
                            std::size_t max_checking, Wanted&& wanted, std::size_t* out) {
  std::size_t count = 0;
  out[count++] = page;
  for (std::size_t q = page + 1; q < region_pages && q <= page + max_checking && count <= prefetch;
       ++q)
    if (wanted(q)) out[count++] = q;
  return count;
}

}  // namespace mpidsm::detail
