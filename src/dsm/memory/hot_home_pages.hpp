// Home pages written in most recent intervals, kept writable between
// releases: their writes are found by comparison instead of by faults.
//
// A home page that other ranks copied is read-only between releases, so
// that its first write in an interval faults and becomes a notice. A page
// its home keeps rewriting (a stencil's boundary row, the value a sync or
// barrier publishes) then costs a fault and two mprotects per interval it
// is written in: on one node, half of a sync with a neighbour. Such a page,
// written again within kCoolAfter releases of its last write, stays
// writable instead, with a snapshot of its bytes; each release compares
// the page with its snapshot, and a difference is the page's notice. A
// page found unchanged at kCoolAfter releases in a row cools: it is made
// read-only before its last comparison (so no write slips between the
// comparison and the protection), and tracked by faults again.
//
// A cooled page keeps its snapshot (cold) while its slot is not needed:
// a page rewritten with the bytes it held (a stencil's boundary the heat
// has not reached) faults again soon, and its release compares it with
// the cold snapshot instead of noticing it. Unchanged, it needs no
// notice, which readers would answer with a fetch of the same bytes. The
// engine keeps a cold snapshot only while it is what readers were last
// told of the page: any other notice of it, by any rank, drops it.
//
// Recency counts releases, and also epochs (barriers and syncs): a program
// that takes locks between its barriers (SPLASH Water adds its forces
// under six locks per step, between two barriers) releases eight times per
// step, so a page its home rewrites once per step (its molecules'
// positions) would never be written within kCoolAfter releases, and would
// fault at every step. A page written within kCoolAfter epochs counts as
// recent, and does not cool, unless kIdleChecks checks in a row found it
// unchanged (locks without barriers advance no epoch).
//
// The price of a hot page is a copy and a comparison of it per release,
// well under a tenth of the fault and mprotects it saves, paid at most
// kIdleChecks times in a row for nothing. At most kSlots pages are hot at
// once: their snapshots (kSlots + 1 pages, memory only for those used) are
// what this costs in memory. Which pages may be hot, and what a hot page
// that changed state elsewhere means, is the engine's concern
// (coherence.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lazy_array.hpp"

namespace mpidsm::detail {

class HotHomePages {
 public:
  static constexpr unsigned kCoolAfter = 4;
  static constexpr unsigned kIdleChecks = 16;
  static constexpr std::size_t kSlots = 64;

  HotHomePages(std::size_t pages, std::size_t page_size);

  // A release begins: the interval that ends now is the one written()
  // counts. A barrier's or a sync's (`ends_epoch`) also ends an epoch.
  void begin_release(bool ends_epoch) {
    ++release_;
    if (ends_epoch) ++epoch_;
  }
  // `page` was written in the interval the current release ends (it faulted
  // as a home page shared elsewhere). True when it was also written within
  // the kCoolAfter releases or epochs before, it holds no slot, and a slot
  // is free or cold: the caller may adopt() it.
  bool written(std::size_t page);
  // `page` becomes hot, its snapshot copied from `bytes` now (a cold
  // page's slot is taken if no slot is free).
  void adopt(std::size_t page, const std::byte* bytes);
  bool hot(std::size_t page) const { return slot_of_[page] != 0 && !cold_[slot(page)]; }
  bool cold(std::size_t page) const { return slot_of_[page] != 0 && cold_[slot(page)]; }
  // Hot or cold: holds a slot.
  bool held(std::size_t page) const { return slot_of_[page] != 0; }
  // The hot pages, or the cold ones (a copy: the caller may drop pages
  // while it walks them).
  const std::vector<std::size_t>& pages() { return listed(pages_); }
  const std::vector<std::size_t>& cold_pages() { return listed(cold_pages_); }
  // Was unchanged at the last kCoolAfter - 1 checks, and last written
  // kCoolAfter epochs ago or more (or unchanged at kIdleChecks - 1 checks):
  // make it read-only, check, then cool() it.
  bool cooling(std::size_t page) const {
    const unsigned checks = idle_[slot(page)] + 1u;
    return checks >= kCoolAfter &&
           (epochs_since_write(page) >= kCoolAfter || checks >= kIdleChecks);
  }
  // Copies `bytes` (the page as it is now: a write after the copy differs
  // from it) and compares the copy with the snapshot, which it replaces.
  // True when they differ.
  bool changed(std::size_t page, const std::byte* bytes);
  // A hot page becomes cold, keeping its snapshot.
  void cool(std::size_t page);
  // A cold page, written again, becomes hot: changed() against the
  // snapshot it cooled with.
  bool rewarm(std::size_t page, const std::byte* bytes);
  // `page` (hot or cold) leaves; its slot is free.
  void drop(std::size_t page);
  // As drop() (for a page holding a slot), and its past writes no longer count.
  void forget(std::size_t page);
  // forget() for pages [first, first+count) (freed).
  void forget(std::size_t first, std::size_t count);

 private:
  std::size_t slot(std::size_t page) const { return slot_of_[page] - 1u; }
  // Epochs since the page was last written (as last_written_ counts it).
  std::uint64_t epochs_since_write(std::size_t page) const {
    return last_written_[page] == 0 ? UINT64_MAX : epoch_ - last_epoch_[page];
  }
  void note_write(std::size_t page) {
    last_written_[page] = release_;
    last_epoch_[page] = epoch_;
  }
  // `page` (holding a slot) leaves pages_ or cold_pages_, as cold_ says.
  void leave_list(std::size_t page);
  const std::vector<std::size_t>& listed(const std::vector<std::size_t>& pages) {
    listed_.assign(pages.begin(), pages.end());
    return listed_;
  }
  std::byte* buffer(std::uint32_t index) {
    return &buffers_[static_cast<std::size_t>(index) * page_size_];
  }

  std::size_t page_size_;
  std::uint64_t release_ = 0;
  std::uint64_t epoch_ = 0;
  // Per page: release_ when a write was last seen (written(), or changed()
  // found one), or 0 (never); and epoch_ then. A hot page that leaves
  // (nobody holds a copy for a while) is adopted again at its next write
  // fault.
  LazyArray<std::uint64_t> last_written_;
  LazyArray<std::uint64_t> last_epoch_;
  LazyArray<std::uint8_t> slot_of_;  // per page: its slot + 1, or 0
  LazyArray<std::byte> buffers_;     // kSlots + 1 page-sized buffers
  // Per slot: its snapshot's buffer, how many checks in a row found the
  // page unchanged, and whether it is cold. The one buffer no slot holds
  // is the next copy's.
  std::vector<std::uint32_t> snapshot_;
  std::vector<std::uint8_t> idle_;
  std::vector<std::uint8_t> cold_;
  std::uint32_t spare_;
  std::vector<std::uint32_t> free_slots_;  // reserved: never allocates
  std::vector<std::size_t> pages_;         // hot pages, in no order
  std::vector<std::size_t> cold_pages_;    // cold pages, the longest cold first
  std::vector<std::size_t> listed_;        // pages()' or cold_pages()' copy
};

}  // namespace mpidsm::detail
