// The log through which a home learns which of its pages other ranks copied.
// Each rank keeps a ring of entries in shared memory; a fetcher reserves slots
// by advancing the ring's counter with a remote (or CPU) atomic and writes
// one entry per page it copied. The home reads what was appended since its
// last release, so its release costs what others fetched, never the number
// of pages it homes.
//
// An entry carries the lap of the ring it was written in, so the reader tells
// a slot written for index i from a stale one (an older lap) without anyone
// clearing slots, and a slot reserved but not yet written stops the reader
// there (the fetcher has not read the page yet, so it will see every write
// the home made before reading the counter; the next release resumes there).
// Each slot holds the entry and its complement: UCX writes puts with no
// promise of atomicity (an emulated put is a memcpy by the target's progress
// thread), so a half-written slot must read as "not yet written".
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpidsm::detail {

struct CopyLog {
  static constexpr std::size_t entries = 16384;  // 256 KiB per rank (two words a slot)
  static constexpr unsigned page_bits = 40;
  static constexpr std::uint64_t lap_mask = (std::uint64_t{1} << (64 - page_bits)) - 1;

  // Never 0, so a slot nobody wrote (zeroed memory) never matches.
  static constexpr std::uint64_t lap(std::uint64_t index) {
    return (index / entries) % lap_mask + 1;
  }
  static constexpr std::size_t slot(std::uint64_t index) {
    return static_cast<std::size_t>(index % entries);
  }
  static constexpr std::uint64_t encode(std::uint64_t index, std::size_t page) {
    return (lap(index) << page_bits) | page;
  }
  // The second word of a slot.
  static constexpr std::uint64_t check(std::uint64_t entry) { return ~entry; }
  // Whether the slot holding `entry` and `check_word` was written, whole,
  // for `index`.
  static constexpr bool written_for(std::uint64_t entry, std::uint64_t check_word,
                                    std::uint64_t index) {
    return check_word == check(entry) && (entry >> page_bits) == lap(index);
  }
  static constexpr std::size_t page(std::uint64_t entry) {
    return static_cast<std::size_t>(entry & ((std::uint64_t{1} << page_bits) - 1));
  }
};

}  // namespace mpidsm::detail
