// Who currently holds copies of the pages homed on each rank. A home page no
// other rank holds needs no write notices, so the home writes it with no
// page protection at all (PageState::home_exclusive): most of a rank's own
// data in SPMD codes (its rows of a matrix, the interior of its grid block)
// never faults, and a page goes back to that state as soon as the last copy
// elsewhere is dropped (JIAJIA's adaptive write detection, without its
// re-protection of every home page at each barrier).
//
// Per rank, in shared words (shared_words.hpp: same-node peers use CPU
// atomics on them): a 32-bit sharer count per region page, and the copy
// log (copy_log.hpp) naming pages that gained a copy. A fetcher counts itself
// and logs the page before reading it; a rank dropping a copy (invalidation,
// eviction) uncounts itself: through UCX with a remote atomic, or, where the
// homes count fetched copies in their handlers (page_calls.hpp), in one call
// per home for all the copies an acquire or a release dropped. The home
// reads only its log at release, so the cost follows the pages fetched, not
// the pages homed.
//
// Ordering: the home writes, then reads the log counter with a locked
// read-modify-write (or a page's count). A fetcher's count lands before it
// reserves a log slot, and its log entry before its read of the page. So
// either the home sees the copy (and sends a notice), or the fetcher's read
// comes after the home's writes; and a page whose entry the home has read,
// or whose slot lies below the counter it read, is already counted.
//
// Counts are exact sums of +1 (fetch) and -1 (drop) and are never reset: a
// rank's -1 may land late (it completes at its next flush of the home), but
// always after its own +1, so a count can be high for a while, never low.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "copy_log.hpp"
#include "dsm/memory/lazy_array.hpp"
#include "dsm/memory/shared_words.hpp"

namespace mpidsm::detail {

class SharingRecord {
 public:
  // Collective.
  SharingRecord(MPI_Comm comm, Transport& transport, std::size_t pages, std::size_t max_batch,
                const MappablePeers& mappable);
  ~SharingRecord();  // collective
  SharingRecord(const SharingRecord&) = delete;
  SharingRecord& operator=(const SharingRecord&) = delete;

  // Fetcher side, before reading `pages` (count of them, increasing) from
  // `home`: this rank now holds copies of them. Through UCX, returns true:
  // the updates reach the home before any operation issued to it after the
  // return (a fence), so a get of the pages may follow at once: once it has
  // completed, so have they (and their source buffers are free again).
  // Mapped here, they are done on return (false).
  bool add_copies(int home, const std::size_t* pages, std::size_t count);
  // Fetcher side, when the home counts the copy itself (count_copies_here):
  // whether this rank did not hold a copy of `page` yet (it does now).
  bool take_copy(std::size_t page);
  bool holds_copy(std::size_t page) const { return (local_[page] & kHolds) != 0; }
  // Home side, for a fetcher whose take_copy was true, before the fetcher
  // reads the pages (from a remote handler, beside this rank's threads).
  void count_copies_here(std::size_t first, std::size_t count);
  // Fetcher side: this rank dropped its copy of `page`. Through UCX the
  // update completes at the next flush of `home` (after send_drops, where
  // drops go through calls); returns whether one is due.
  bool drop_copy(int home, std::size_t page);
  // Where every home counts copies in its own handlers (PageCalls::used):
  // drops are gathered and go as one call per home (send_drops), not as a
  // remote atomic each. Collective, right after construction.
  void drop_through_calls() { drops_through_calls_ = true; }
  // The gathered drops, one call per home (each completes at the next
  // flush of its home, which drop_copy said was due).
  void send_drops();
  // Whether this rank ever fetched `page` (its local copy may hold data).
  bool fetched_here(std::size_t page) const { return (local_[page] & kEverFetched) != 0; }
  // The chunks of the region whose pages this rank ever held or fetched.
  const UsedChunks& used() const { return local_.used(); }
  // This rank's local copy of `page` holds data although it fetched none:
  // the page was homed here and moved (home_moves.hpp).
  void note_local_data(std::size_t page) { local_[page] |= kEverFetched; }

  // Home side: how many other ranks hold a copy of `page` (homed here) now.
  std::uint32_t sharers(std::size_t page) const;
  // Home side: calls f(page) for every page that gained a copy since the last
  // call; false when more were logged than the ring keeps (the caller must
  // then look at every page it homes). A slot reserved but not yet written
  // is looked at again next time; the slots after it are read now, as their
  // fetchers may have read their pages already.
  template <class F>
  bool for_each_new_copy(F&& f);
  // Fetcher side, collective context (free, after dropping its copies with
  // drop_copy): the pages are new again.
  void forget(std::size_t first, std::size_t count);
  void abandon_transport() {
    words_.abandon_transport();
    transport_abandoned_ = true;
  }
  // Every rank's words are mapped here: no access reaches UCX.
  bool direct() const { return words_.direct(); }

 private:
  static constexpr std::uint8_t kHolds = 1, kEverFetched = 2;
  static constexpr std::size_t kCounter = 0;
  static constexpr std::size_t kRing = 8;  // slots of two words: entry, check
  static constexpr std::size_t kSlot = 16;
  static constexpr std::size_t kCounts = kRing + CopyLog::entries * kSlot;
  static std::size_t count_offset(std::size_t page) { return kCounts + page * 4; }
  std::uint64_t log_counter() const;
  // Whether slot `index` holds a whole entry for it; then `page` is set.
  bool log_entry(std::uint64_t index, std::size_t& page) const;
  bool append_through_ucx(int home, const std::size_t* pages, std::size_t count);
  // One more copy of `page` in a home's words (mapped here, or this rank's
  // own): counted, then logged.
  static void count_and_log(std::byte* words, std::size_t page);
  // One copy of `page` fewer in a home's words (mapped here, or this rank's own).
  static void uncount(std::byte* words, std::size_t page);

  // At the home, in its progress: a call's drops, (home, page) entries.
  static void take_drops(void* context, int source, std::uint64_t, const std::byte* bytes,
                         std::size_t size);
  static std::uint64_t drop_entry(int home, std::size_t page) {
    return static_cast<std::uint64_t>(home) << kDropHomeShift | page;
  }
  static constexpr unsigned kDropHomeShift = 40;
  static constexpr std::size_t kMostDrops = 512;  // gathered; one more sends them

  Transport& transport_;
  SharedWords words_;
  std::uint32_t drop_handler_;
  bool drops_through_calls_ = false;
  bool transport_abandoned_ = false;
  std::vector<std::uint64_t> drops_;   // drop_entry()s not sent yet
  LazyArray<std::uint8_t> local_;      // per page: kHolds, kEverFetched
  std::vector<std::uint64_t> staged_;  // log slots (entry, check) on their way to a home
  std::uint64_t consumed_ = 0;         // log indices this home has looked at
  // Indices below consumed_ whose slots were still unwritten, increasing;
  // at most one fetch per rank is in flight, so ranks x max_batch of them.
  std::vector<std::uint64_t> unwritten_;
};

template <class F>
bool SharingRecord::for_each_new_copy(F&& f) {
  const std::uint64_t end = log_counter();
  auto overflow = [&] {  // the caller looks at every page instead
    unwritten_.clear();
    consumed_ = end;
    return false;
  };
  const std::uint64_t oldest = unwritten_.empty() ? consumed_ : unwritten_.front();
  if (end - oldest > CopyLog::entries) return overflow();  // a slot may hold a later lap's entry
  std::size_t page = 0;
  std::erase_if(unwritten_, [&](std::uint64_t index) {
    if (!log_entry(index, page)) return false;
    f(page);
    return true;
  });
  for (; consumed_ < end; ++consumed_) {
    if (log_entry(consumed_, page)) {
      f(page);
    } else if (unwritten_.size() < unwritten_.capacity()) {
      unwritten_.push_back(consumed_);
    } else {
      return overflow();  // more fetches in flight than ranks can have
    }
  }
  return true;
}

}  // namespace mpidsm::detail
