// A write notice as barriers and pairwise syncs carry it (64 bits): the page
// a rank released, and a mark for a notice whose home cannot tell whether
// the page changed (it was writable without faults when a copy was taken):
// readers drop their copy but do not refetch it, as the home rewrote it or
// only gained a sharer, which the copy log cannot tell apart.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpidsm::detail {

struct ReleaseNotice {
  static constexpr std::int64_t possibly_written = std::int64_t{1} << 62;
  static constexpr std::size_t page(std::int64_t notice) {
    return static_cast<std::size_t>(notice & ~possibly_written);
  }
};

}  // namespace mpidsm::detail
