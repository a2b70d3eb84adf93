// Where each DSM lock lives (lock_table.hpp). A lock starts at its static
// home, id % ranks. Where locks are acquired through calls (every home
// reached through messages: across nodes over tcp) and every rank is alone
// on its node (LockTable decides), a lock whose critical
// sections write pages homed on one other rank moves there at a barrier: its
// acquire then brings those pages (lock_grants.hpp) and its release carries
// their diffs, one round trip each to one rank, instead of a round trip to
// the lock's home plus one to the pages' home for each.
//
// The lock's home decides: the home of the page its last release noticed,
// the same rank at two barriers in a row (so a lock whose pages have several
// homes does not move at every barrier). It proposes the move in its barrier
// record; after the exchange every rank makes every proposed move alike,
// when every lock is free (no rank holds one in a barrier, and no waiter
// can be queued: it would not have joined it). A moved lock's record lives
// in memory of its new home that only the home touches: every other rank,
// on its node or not, reaches it through calls. The home serves calls for
// it from that record as soon as they come, even before it has made the
// move itself: a record outside the static home is always a moved one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <span>
#include <vector>

#include "dsm/memory/lazy_array.hpp"
#include "notice_log.hpp"

namespace mpidsm::detail {

class LockHomes {
 public:
  // Ids below `movable` may move (the rest are flags, whose words stay put),
  // only where `moves` (locks acquired through calls).
  LockHomes(std::size_t locks, std::size_t movable, int rank, int ranks, bool moves);
  LockHomes(const LockHomes&) = delete;
  LockHomes& operator=(const LockHomes&) = delete;

  int static_home(std::size_t id) const { return static_cast<int>(id % ranks_); }
  int home(std::size_t id) const {
    const std::int32_t moved =
        std::atomic_ref<const std::int32_t>(moved_to_[id]).load(std::memory_order_relaxed);
    return moved == 0 ? static_home(id) : moved - 1;
  }
  bool moved(std::size_t id) const { return home(id) != static_home(id); }
  // The record of a lock hosted here whose static home is another rank.
  std::byte* hosted_record(std::size_t id) { return &hosted_[id * LockRecordLayout::bytes]; }
  // At the lock's home, from any thread (the handlers' too): a release of
  // `id` noticed `page`. The first since the last barrier lists the lock
  // (a barrier then looks at the locks used, not at every lock).
  void note_release(std::size_t id, std::size_t page);

  // A barrier's record entry proposing a move (negative, unlike the
  // record's other entries).
  static std::int64_t encode(std::size_t id, int home) {
    return std::numeric_limits<std::int64_t>::min() |
           static_cast<std::int64_t>(static_cast<std::uint64_t>(home) << kHomeShift) |
           static_cast<std::int64_t>(id);
  }
  static bool is_move(std::int64_t entry) { return entry < 0; }

  // At a barrier's entry: the moves this rank proposes for the locks it
  // hosts, appended to `out`; `home_of_page` gives a page's home (< 0: none).
  void propose(const std::function<int(std::size_t)>& home_of_page, std::vector<std::int64_t>& out);
  // After the exchange, on every rank alike: `moves` (every rank's
  // proposals). A malformed entry aborts (only a broken peer sends one).
  void apply(std::span<const std::int64_t> moves);

 private:
  static constexpr unsigned kHomeShift = 40;
  static constexpr std::uint64_t kIdMask = (std::uint64_t{1} << kHomeShift) - 1;
  void propose_for(std::size_t id, const std::function<int(std::size_t)>& home_of_page,
                   std::vector<std::int64_t>& out);

  std::size_t movable_;
  int rank_;
  std::size_t ranks_;
  bool moves_;
  LazyArray<std::int32_t> moved_to_;    // per id: 0 at its static home, else home + 1
  LazyArray<std::uint64_t> last_page_;  // per id hosted here: page + 1 of the last notice
  LazyArray<std::int32_t> candidate_;   // per id hosted here: home + 1 the last barrier chose
  LazyArray<std::byte> hosted_;         // records of moved locks hosted here, by id
  // Locks noted since the last barrier (each once), and the barrier's copy;
  // reserved for every movable lock, so a note never allocates.
  std::mutex noted_mutex_;
  std::vector<std::size_t> noted_, proposing_;
};

}  // namespace mpidsm::detail
