// A vector whose large capacity is address space, not memory: the allocator
// maps big blocks as an anonymous MAP_NORESERVE mapping, so a vector reserved
// for every page of the region up front (so faults and releases never
// allocate) takes memory only for the entries written, and a reservation
// larger than the machine's memory is not refused by the kernel's overcommit
// heuristic. Small blocks come from the ordinary heap.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace mpidsm::detail {

template <class T>
struct LazyAllocator {
  using value_type = T;
  static constexpr std::size_t mapped_from = std::size_t{1} << 20;  // bytes

  LazyAllocator() = default;
  template <class U>
  LazyAllocator(const LazyAllocator<U>&) {}

  T* allocate(std::size_t n) {
    if (n > max_size()) throw std::bad_array_new_length();
    if (n * sizeof(T) < mapped_from) return std::allocator<T>().allocate(n);
    void* at = mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(at);
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < mapped_from) return std::allocator<T>().deallocate(p, n);
    munmap(p, n * sizeof(T));
  }
  static std::size_t max_size() { return ~std::size_t{0} / sizeof(T); }
  template <class U>
  bool operator==(const LazyAllocator<U>&) const {
    return true;
  }
};

template <class T>
using LazyVector = std::vector<T, LazyAllocator<T>>;

}  // namespace mpidsm::detail
