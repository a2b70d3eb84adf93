// Runs of consecutive pages in a sorted list: one get, call or mprotect each.
#pragma once

#include <cstddef>

namespace mpidsm::detail {

// Calls f(first page, length) for each run of consecutive pages of
// [pages, pages+count), which is increasing.
template <class F>
void for_each_run(const std::size_t* pages, std::size_t count, F&& f) {
  for (std::size_t i = 0; i < count;) {
    std::size_t j = i + 1;
    while (j < count && pages[j] == pages[j - 1] + 1) ++j;
    f(pages[i], j - i);
    i = j;
  }
}

}  // namespace mpidsm::detail
