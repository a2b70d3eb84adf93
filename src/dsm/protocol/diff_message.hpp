// The wire form of diffs that travel to a home in one message instead of a
// put per run (a page of updated floats changes in hundreds of runs of 1-3
// bytes). Per page: a record header, then whichever body is smaller:
//   runs: per run its offset and length (32-bit each), then its bytes;
//   mask: one byte per 64-bit word of the page (bit i: byte i changed),
//         then every changed byte, packed in page order;
//   words: the same mask bytes, then every word with a changed byte,
//         whole. The `words` kernel sends this instead of `mask`: without
//         a byte shuffle, packing and spreading out a byte at a time cost
//         it more than the unchanged bytes of changed words cost the wire.
// The home stores only the changed bytes, so the encoding stays byte-exact
// (diff.hpp says why it must).
#pragma once

#include <cstddef>
#include <cstdint>

#include "diff_kernels.hpp"

namespace mpidsm::detail {

// Bytes one page's record takes at most.
std::size_t max_diff_record(std::size_t page_size);

// Writes the record of page `page_index`'s changes (against `twin`) at `out`,
// which has room for max_diff_record(page_size); returns its length and the
// shape of the changes in `shape`. Any kernel reads what any other wrote.
std::size_t encode_diff(const DiffKernelOps& kernel, std::uint64_t page_index,
                        const std::byte* twin, const std::byte* page, std::size_t page_size,
                        std::byte* out, DiffShape& shape);

// Held around the stores into each page a message names; acquire says how
// the page may be written (MasterGuards, at a home).
class PageGuard {
 public:
  virtual PageAccess acquire(std::size_t page) = 0;
  virtual void release(std::size_t page) = 0;

 protected:
  ~PageGuard() = default;
};

// Applies a message of records to the pages at `base` (`pages` pages), each
// page's under `guard`. False, having applied the records before it, at the
// first record that is malformed or names a page past the end.
bool apply_diffs(const DiffKernelOps& kernel, const std::byte* message, std::size_t size,
                 std::byte* base, std::size_t pages, std::size_t page_size, PageGuard& guard);

}  // namespace mpidsm::detail
