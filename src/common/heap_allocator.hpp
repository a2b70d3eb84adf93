// First-fit allocator over offsets in a symmetric space (the PGAS heap in
// bytes, the DSM region in pages). Every rank runs the same sequence of
// collective allocations and frees, so every rank computes the same offsets:
// that is what makes the space symmetric. Plain code, no MPI or UCX.
#pragma once

#include <cstddef>
#include <map>
#include <optional>

namespace mpidsm::detail {

class HeapAllocator {
 public:
  // The PGAS heap's unit: a cache line, so allocations never share one.
  static constexpr std::size_t cache_line = 64;

  // Blocks start at multiples of `alignment` units and are rounded up to it.
  explicit HeapAllocator(std::size_t capacity, std::size_t alignment = cache_line);

  // Offset of a new block of at least `bytes` (rounded up to the alignment), or
  // nullopt when no free block is large enough.
  std::optional<std::size_t> allocate(std::size_t bytes);
  // Returns the block at `offset` (which allocate() returned) to the free list,
  // merging it with free neighbours.
  void free(std::size_t offset);

  std::size_t capacity() const { return capacity_; }
  std::size_t used() const { return used_; }
  // The length (rounded to the alignment) of the block allocate() returned at
  // `offset`, or nullopt when no block starts there.
  std::optional<std::size_t> length_of(std::size_t offset) const;
  // The largest block allocate() could return now.
  std::size_t largest_free() const;

 private:
  std::size_t alignment_;
  std::size_t capacity_;
  std::size_t used_ = 0;
  std::map<std::size_t, std::size_t> free_;  // offset -> length
  std::map<std::size_t, std::size_t> used_blocks_;
};

}  // namespace mpidsm::detail
