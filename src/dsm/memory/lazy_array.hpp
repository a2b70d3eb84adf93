// A zero-initialised array over the whole DSM region whose memory the kernel
// provides only where it is touched: an anonymous MAP_NORESERVE mapping. Used
// for the page table: entries are written only for pages homed or cached
// here, so the memory behind the table follows those pages, not the size of
// the region. Some kernels back even a read of an untouched part with fresh
// memory (no shared zero page), so the array also records which chunks were
// reached for writing (used_chunks.hpp): scans and resets visit only those.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

#include "used_chunks.hpp"

namespace mpidsm::detail {

// Zeroes [begin, end): the whole pages inside go to `drop(pages, bytes)`,
// which gives their memory back (they read as zero after), and the parts of
// pages at either end are cleared by hand. With the system's page size: with
// a guess too small, dropping fails on larger pages and the middle of the
// range would keep its values.
template <class Drop>
void zero_range(std::byte* begin, std::byte* end, Drop&& drop) {
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  auto* inner_begin = reinterpret_cast<std::byte*>(
      (reinterpret_cast<std::uintptr_t>(begin) + page - 1) / page * page);
  auto* inner_end =
      reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(end) / page * page);
  if (inner_begin >= inner_end) {
    std::memset(begin, 0, static_cast<std::size_t>(end - begin));
    return;
  }
  std::memset(begin, 0, static_cast<std::size_t>(inner_begin - begin));
  drop(inner_begin, static_cast<std::size_t>(inner_end - inner_begin));
  std::memset(inner_end, 0, static_cast<std::size_t>(end - inner_end));
}

template <class T>
class LazyArray {
  static_assert(std::is_trivially_copyable_v<T>, "zero bytes must be a valid T");

 public:
  explicit LazyArray(std::size_t count) : count_(count), used_(count) {
    void* memory = mmap(nullptr, bytes(), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(memory);
  }
  ~LazyArray() { munmap(data_, bytes()); }
  LazyArray(const LazyArray&) = delete;
  LazyArray& operator=(const LazyArray&) = delete;

  // A writable reference marks its chunk used: the entry may change.
  T& operator[](std::size_t i) {
    used_.mark(i);
    return data_[i];
  }
  const T& operator[](std::size_t i) const { return data_[i]; }
  std::size_t size() const { return count_; }
  const UsedChunks& used() const { return used_; }

  // Back to zero, giving whole pages of the range back to the kernel. Only
  // the chunks ever written are touched: the rest are zero already.
  void reset(std::size_t first, std::size_t count) {
    for_each_used_range(first, count, {&used_}, [&](std::size_t begin, std::size_t end) {
      zero_range(reinterpret_cast<std::byte*>(data_ + begin),
                 reinterpret_cast<std::byte*>(data_ + end),
                 [](std::byte* pages, std::size_t bytes) { madvise(pages, bytes, MADV_DONTNEED); });
    });
    // Chunks wholly inside the range are zero now.
    const std::size_t whole_first = (first + UsedChunks::kEntries - 1) >> UsedChunks::kShift;
    const std::size_t whole_end = (first + count) >> UsedChunks::kShift;
    const std::size_t last = first + count == count_ ? used_.chunks() : whole_end;
    for (std::size_t chunk = whole_first; chunk < last; ++chunk)
      if (used_.used(chunk)) used_.clear(chunk);
  }

 private:
  std::size_t bytes() const { return count_ * sizeof(T) > 0 ? count_ * sizeof(T) : 1; }

  std::size_t count_;
  UsedChunks used_;
  T* data_ = nullptr;
};

}  // namespace mpidsm::detail
