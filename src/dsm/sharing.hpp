// Which pages homed on a rank have ever been copied by another rank. A home
// page nobody else has copied needs no write notices, so the home may write
// it with no page protection at all (PageState::home_exclusive): most of a
// rank's own data in SPMD codes (its rows of a matrix, the interior of its
// grid block) then never faults.
//
// Each rank keeps, in memory UCX allocated, one 32-bit flag per region page
// (set once by the first rank that fetches a page it homes) and a counter of
// such first fetches. A fetcher sets the flag, bumps the counter, then reads
// the page; the home, at release, reads the counter after its writes and,
// only when it moved, scans its exclusive pages for flags. Either the home
// sees the flag (and sends a notice), or the fetcher's read comes after the
// home's writes: both sides order with sequentially consistent atomics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lazy_array.hpp"
#include "shared_words.hpp"

namespace mpidsm::detail {

class SharingRecord {
 public:
  // Collective.
  SharingRecord(Transport& transport, std::size_t pages, bool direct_access);

  // Fetcher side, before reading pages [first, first+count) from `home`.
  void mark_copied(int home, std::size_t first, std::size_t count);

  // Whether this rank ever fetched `page` (its local copy holds data).
  bool fetched_here(std::size_t page) const { return known_copied_[page] != 0; }

  // Home side: true when some first fetch happened since the last call.
  bool new_copies_since_last_check();
  bool copied(std::size_t page) const;  // a page homed here
  // Home side, collective context (free): the pages are new again.
  void forget(std::size_t first, std::size_t count);

 private:
  static constexpr std::size_t kCounter = 0;  // then the flags, 4 bytes per page
  static std::size_t flag_offset(std::size_t page) { return 8 + page * 4; }

  SharedWords words_;
  LazyArray<std::uint8_t> known_copied_;  // per page: this rank already set the flag
  std::uint64_t last_counter_ = 0;
};

}  // namespace mpidsm::detail
