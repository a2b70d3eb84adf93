#include "heap_allocator.hpp"

#include <algorithm>
#include <limits>

namespace mpidsm::detail {

HeapAllocator::HeapAllocator(std::size_t capacity, std::size_t alignment)
    : alignment_(alignment), capacity_(capacity / alignment * alignment) {
  if (capacity_ > 0) free_.emplace(0, capacity_);
}

std::optional<std::size_t> HeapAllocator::allocate(std::size_t bytes) {
  if (bytes == 0 || bytes > std::numeric_limits<std::size_t>::max() - alignment_) return {};
  const std::size_t length = (bytes + alignment_ - 1) / alignment_ * alignment_;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < length) continue;
    const std::size_t offset = it->first;
    const std::size_t rest = it->second - length;
    free_.erase(it);
    if (rest > 0) free_.emplace(offset + length, rest);
    used_blocks_.emplace(offset, length);
    used_ += length;
    return offset;
  }
  return {};
}

void HeapAllocator::free(std::size_t offset) {
  auto block = used_blocks_.find(offset);
  if (block == used_blocks_.end()) return;
  std::size_t start = block->first, length = block->second;
  used_ -= length;
  used_blocks_.erase(block);
  auto next = free_.lower_bound(start);
  if (next != free_.end() && start + length == next->first) {
    length += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      length += prev->second;
      free_.erase(prev);
    }
  }
  free_.emplace(start, length);
}

std::optional<std::size_t> HeapAllocator::length_of(std::size_t offset) const {
  auto block = used_blocks_.find(offset);
  if (block == used_blocks_.end()) return {};
  return block->second;
}

std::size_t HeapAllocator::largest_free() const {
  std::size_t largest = 0;
  for (const auto& [offset, length] : free_) largest = std::max(largest, length);
  return largest;
}

}  // namespace mpidsm::detail
