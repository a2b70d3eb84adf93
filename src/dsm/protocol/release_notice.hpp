// A write notice as barriers and pairwise syncs carry it (64 bits): the page
// a rank released, and marks:
// - possibly_written: its home cannot tell whether the page changed (it was
//   writable without faults when a copy was taken): readers drop their copy
//   but do not refetch it, as the home rewrote it or only gained a sharer,
//   which the copy log cannot tell apart;
// - unchanged (barriers only): the writer wrote the page (a write of its own
//   twinned it, not a stream's write-ahead) but changed no byte: nobody
//   drops a copy; it counts as a write only where barriers decide who alone
//   writes a page (home_moves.hpp);
// - writer_holds_copy (barriers only): the writer, not the page's home, still
//   held its copy when its barrier began, so the copy is the page's bytes if
//   nobody else wrote it, and the page may move home to the writer
//   (home_moves.hpp);
// - unsynchronised (barriers only, single_writer pages): the writer's first
//   write to the page since the barrier began came before any acquire, so
//   two such notices of one page are writes no synchronisation ordered.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpidsm::detail {

struct ReleaseNotice {
  static constexpr std::int64_t possibly_written = std::int64_t{1} << 62;
  static constexpr std::int64_t writer_holds_copy = std::int64_t{1} << 61;
  static constexpr std::int64_t unchanged = std::int64_t{1} << 60;
  static constexpr std::int64_t unsynchronised = std::int64_t{1} << 59;
  static constexpr std::int64_t marks =
      possibly_written | writer_holds_copy | unchanged | unsynchronised;
  static constexpr std::size_t page(std::int64_t notice) {
    return static_cast<std::size_t>(notice & ~marks);
  }
  // The writer surely changed the page.
  static constexpr bool definite(std::int64_t notice) {
    return (notice & (possibly_written | unchanged)) == 0;
  }
};

}  // namespace mpidsm::detail
