// Per page: how many transfers and DsmAccess handles use it. A pinned page
// is never unmapped or made read-only, since the kernel or UCX may be
// reading or writing it. A remote page's first pin also counts it among the
// cache slots that cannot be evicted (remote_pinned). Lock-free: a pin ends
// when its transfer completes, on whichever thread completes it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "lazy_array.hpp"

namespace mpidsm::detail {

class PinCounts {
 public:
  explicit PinCounts(std::size_t pages) : counts_(pages) {}

  bool pinned(std::size_t page) const {
    return std::atomic_ref<const std::uint32_t>(counts_[page]).load(std::memory_order_acquire) != 0;
  }
  // One more pin of `page` (`remote`: homed elsewhere, so it holds a cache
  // slot); false, and nothing changed, when the page has 2^31 - 1 pins.
  bool add(std::size_t page, bool remote);
  void remove(std::size_t page);
  // The chunks of the region whose pages were ever pinned.
  const UsedChunks& used() const { return counts_.used(); }
  // Remote pages pinned: cache slots no fetch may use.
  std::size_t remote_pinned() const { return remote_pinned_.load(std::memory_order_relaxed); }
  // Pages pinned, homed here or not.
  std::size_t pinned_pages() const { return pinned_pages_.load(std::memory_order_relaxed); }

 private:
  // A count's top bit: the page is remote and counted in remote_pinned_.
  static constexpr std::uint32_t kRemote = 0x80000000u;
  static constexpr std::uint32_t kCount = kRemote - 1;

  LazyArray<std::uint32_t> counts_;
  std::atomic<std::size_t> remote_pinned_{0};
  std::atomic<std::size_t> pinned_pages_{0};
};

}  // namespace mpidsm::detail
