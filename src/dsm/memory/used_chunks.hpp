// Which chunks of a lazily backed table were ever reached for writing. A
// table over the whole region (lazy_array.hpp) costs memory only where it is
// touched, but on a kernel that does not map its shared zero page on a read
// (measured: Linux 6.18 in a VM; docs/consistency.md), even *reading* an
// untouched part allocates it. So a scan over a range (free, allocate, the
// view's coalescing) asks this summary first and reads only the chunks some
// write reached: untouched entries are zero, which every scan skips anyway.
// A bit per kEntries entries: 128 KiB for a table of 2^32 entries (a 16 TiB
// region), kept eagerly so that asking it never allocates either.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>

namespace mpidsm::detail {

class UsedChunks {
 public:
  static constexpr unsigned kShift = 12;
  static constexpr std::size_t kEntries = std::size_t{1} << kShift;

  explicit UsedChunks(std::size_t entries)
      : chunks_((entries + kEntries - 1) >> kShift),
        words_(std::make_unique<std::uint64_t[]>((chunks_ + 63) / 64)) {}

  // Entry `index` is about to be written (or read through a writable
  // reference). A plain load first: after the first write of a chunk this
  // costs one read of a cached word. Threads may mark concurrently.
  void mark(std::size_t index) {
    const std::size_t chunk = index >> kShift;
    std::atomic_ref<std::uint64_t> word(words_[chunk / 64]);
    const std::uint64_t bit = std::uint64_t{1} << (chunk % 64);
    if ((word.load(std::memory_order_relaxed) & bit) == 0)
      word.fetch_or(bit, std::memory_order_relaxed);
  }
  bool used(std::size_t chunk) const {
    return (std::atomic_ref<std::uint64_t>(words_[chunk / 64]).load(std::memory_order_relaxed) >>
            (chunk % 64)) &
           1;
  }
  // The chunk's entries are all zero again.
  void clear(std::size_t chunk) {
    std::atomic_ref<std::uint64_t>(words_[chunk / 64])
        .fetch_and(~(std::uint64_t{1} << (chunk % 64)), std::memory_order_relaxed);
  }
  std::size_t chunks() const { return chunks_; }

 private:
  std::size_t chunks_;
  std::unique_ptr<std::uint64_t[]> words_;
};

// Calls f(begin, end) for each maximal run of [first, first+count) whose
// chunks some table of `tables` used: the only entries a scan that skips
// zero entries must read. Runs are clipped to [first, first+count).
template <class F>
void for_each_used_range(std::size_t first, std::size_t count,
                         std::initializer_list<const UsedChunks*> tables, F&& f) {
  const std::size_t end = first + count;
  auto used = [&](std::size_t chunk) {
    for (const UsedChunks* table : tables)
      if (chunk < table->chunks() && table->used(chunk)) return true;
    return false;
  };
  std::size_t chunk = first >> UsedChunks::kShift;
  const std::size_t last = count == 0 ? chunk : ((end - 1) >> UsedChunks::kShift) + 1;
  while (chunk < last) {
    if (!used(chunk)) {
      ++chunk;
      continue;
    }
    std::size_t stop = chunk + 1;
    while (stop < last && used(stop)) ++stop;
    const std::size_t begin =
        chunk << UsedChunks::kShift > first ? chunk << UsedChunks::kShift : first;
    const std::size_t finish = stop << UsedChunks::kShift < end ? stop << UsedChunks::kShift : end;
    f(begin, finish);
    chunk = stop;
  }
}

}  // namespace mpidsm::detail
