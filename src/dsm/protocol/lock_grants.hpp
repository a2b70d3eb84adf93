// Pages that ride with a lock's grant. Where a lock's home is reached
// through calls (lock_table.hpp) and is also home to pages the lock
// protects, the acquiring call names those pages, and the home answers their
// bytes with the log whenever the log's new entries say another rank wrote
// them. The acquirer brings its copies up to date in place: no fetch of its
// own, so a lock that hands a page back and forth costs one round trip per
// acquire instead of two (the acquire, then the refresh or the fault's fetch).
//
// Per lock, a rank remembers the last kPages pages it wrote under the lock,
// or that an acquire of it found written, whose home is the lock's home
// (the engine decides which; this type only keeps them). At each acquire it
// wishes for them: a page it holds a copy of comes only when written since
// (a refresh); one it holds no copy of always comes (kFetch), counted by
// the home as this rank's copy before it is read (kCountCopy, unless the
// home counts this rank already: sharing.hpp), as a fetch would.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "dsm/memory/lazy_array.hpp"

namespace mpidsm::detail {

class LockGrantWishes {
 public:
  static constexpr std::size_t kPages = 4;
  // A wish on the wire: page + 1, and these marks.
  static constexpr std::uint64_t kFetch = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kCountCopy = std::uint64_t{1} << 62;
  static constexpr std::uint64_t kPageMask = kCountCopy - 1;

  explicit LockGrantWishes(std::size_t locks) : pages_(locks * kPages) {}

  // The pages wished for `id`, each as page + 1, oldest first; 0: an empty slot.
  std::span<const std::uint64_t, kPages> of(std::size_t id) const {
    return std::span<const std::uint64_t, kPages>(&pages_[id * kPages], kPages);
  }
  // `page` becomes the newest wish of `id`; the oldest drops out when all
  // slots are taken.
  void remember(std::size_t id, std::size_t page) {
    std::uint64_t* const slots = &pages_[id * kPages];
    std::uint64_t* const end = slots + kPages;
    const std::uint64_t wish = static_cast<std::uint64_t>(page) + 1;
    std::fill(std::remove(slots, end, wish), end, std::uint64_t{0});
    auto taken = static_cast<std::size_t>(std::find(slots, end, std::uint64_t{0}) - slots);
    if (taken == kPages) {
      std::copy(slots + 1, end, slots);
      taken = kPages - 1;
    }
    slots[taken] = wish;
  }

 private:
  LazyArray<std::uint64_t> pages_;
};

}  // namespace mpidsm::detail
