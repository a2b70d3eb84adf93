// The bounded set of remote pages cached on this rank, in least-recently-
// faulted order, with what the engine keeps per cached page (twin and
// prefetch marks). Plain bookkeeping (no memory, no protection): the engine
// asks for a slot when it maps a remote page, touches it on every fault, and
// evicts the oldest page when no slot is free. Sized once, so faults never
// allocate; cost per operation is O(1) and nothing scans the whole cache.
// The page-to-slot index is a lazy array: its memory follows cached pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lazy_array.hpp"

namespace mpidsm::detail {

class PageCache {
 public:
  static constexpr std::int32_t none = -1;

  PageCache(std::size_t capacity, std::size_t region_pages);

  std::size_t capacity() const { return slots_.size(); }
  std::size_t size() const { return used_; }
  bool full() const { return used_ == slots_.size(); }
  bool contains(std::size_t page) const { return slot_of_[page] != 0; }
  // The chunks of the region whose pages were ever cached here.
  const UsedChunks& used() const { return slot_of_.used(); }

  // What the engine keeps per cached page; reset when the page leaves.
  struct Entry {
    std::int32_t twin = none;  // twin slot while the page is dirty
    bool prefetched = false;   // mapped by prefetch, use not yet known
    bool refetched = false;    // fetched by a barrier: used once its view was touched
    // Twinned along with a write miss or first write before it (a write
    // stream), not by a write of its own: unchanged, it was not written.
    bool twinned_ahead = false;
    // Updates in place in a row found read since (saturating; counted once
    // per update, when read_counted is still false), and updates since the
    // last one watched (Dsm::Engine::watch_updated samples a copy read often).
    std::uint8_t reads_in_a_row = 0;
    std::uint8_t unwatched_updates = 0;
    bool read_counted = false;
    std::uint64_t fetched_in = 0;  // the barrier epoch of the interval it was fetched in
  };
  Entry& entry(std::size_t page) { return slots_[slot_of_[page] - 1].entry; }

  // Adds a page as the most recent one; the cache must not be full.
  void insert(std::size_t page);
  // Makes a cached page the most recent one.
  void touch(std::size_t page);
  void erase(std::size_t page);
  // The least recent page (the cache must not be empty).
  std::size_t oldest() const { return static_cast<std::size_t>(slots_[tail_].page); }

  // Calls f(page) for every cached page, most recent first. Only for rare
  // whole-cache operations (a lock's notice log overflowed, destruction).
  template <class F>
  void for_each(F&& f) const {
    for (std::int32_t s = head_; s != none;) {
      const std::int32_t next = slots_[s].next;  // f may erase the page
      f(static_cast<std::size_t>(slots_[s].page));
      s = next;
    }
  }

 private:
  struct Slot {
    std::int64_t page = none;
    std::int32_t prev = none;
    std::int32_t next = none;
    Entry entry;
  };
  void unlink(std::int32_t slot);
  void push_front(std::int32_t slot);

  std::vector<Slot> slots_;
  LazyArray<std::int32_t> slot_of_;  // per region page: slot + 1, 0 when not cached
  std::vector<std::int32_t> free_;
  std::int32_t head_ = none;  // most recent
  std::int32_t tail_ = none;  // least recent
  std::size_t used_ = 0;
};

}  // namespace mpidsm::detail
