// First-fit allocator over the symmetric heap's offsets. Every rank runs the
// same sequence of collective allocations and frees, so every rank computes
// the same offsets: that is what makes the heap symmetric. Plain code, no
// MPI or UCX, so unit tests drive it directly.
#pragma once

#include <cstddef>
#include <map>
#include <optional>

namespace mpidsm::detail {

class HeapAllocator {
 public:
  static constexpr std::size_t alignment =
      64;  // a cache line: no false sharing between allocations

  explicit HeapAllocator(std::size_t capacity);

  // Offset of a new block of at least `bytes` (rounded up to the alignment), or
  // nullopt when no free block is large enough.
  std::optional<std::size_t> allocate(std::size_t bytes);
  // Returns the block at `offset` (which allocate() returned) to the free list,
  // merging it with free neighbours.
  void free(std::size_t offset);

  std::size_t capacity() const { return capacity_; }
  std::size_t used() const { return used_; }
  // The largest block allocate() could return now.
  std::size_t largest_free() const;

 private:
  std::size_t capacity_;
  std::size_t used_ = 0;
  std::map<std::size_t, std::size_t> free_;  // offset -> length
  std::map<std::size_t, std::size_t> used_blocks_;
};

}  // namespace mpidsm::detail
