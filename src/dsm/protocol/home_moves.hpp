// Home migration (JIAJIA's HMIG): at a barrier, a page that one rank alone
// wrote in the ending interval moves home to that rank, so its next writes
// are home writes: no twin, no diff, and no notice while nobody else holds a
// copy (sharing.hpp). Pages dealt without regard to who computes them (round
// robin, as jia_alloc deals them) end up homed at their writers.
//
// Every rank learns every move without a message: a barrier gives every rank
// every rank's notices, so each decides the same moves from the same facts.
// A page moves from its home H to W when, in the barrier's notices,
// - W's notice is the page's only one (nobody else wrote it, H included: a
//   home that may have written a page it shares sends a notice too), and
// - it says W still held its copy when its barrier began
//   (ReleaseNotice::writer_holds_copy). W's copy was counted at H from its
//   fetch on, so H noticed any write of its own since: the copy holds the
//   page's bytes, and the move needs no data to travel.
// Adaptive mode also asks that the same rank was the page's only writer at
// the previous barrier, so a page whose writer changes every interval stays.
//
// Every rank votes in its barrier count (BarrierExchange::with_vote) and the
// barrier uses the most restrictive mode voted. A rank votes off while it has
// a pinned page (a transfer or DsmAccess may be reading or writing it, so its
// view cannot change hands), or once a second thread of it has used the DSM
// (another thread's write during the barrier would reach the old home after
// the move).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "dsm/memory/lazy_array.hpp"
#include "dsm/memory/lazy_vector.hpp"
#include "mpidsm/config.hpp"

namespace mpidsm::detail {

class HomeMoves {
 public:
  struct Move {
    std::size_t page;
    int from, to;
  };
  // The mode whose vote is 0 (Config's default), so a clean barrier on one
  // node stores no count.
  static constexpr HomeMigration kUsual = HomeMigration::adaptive;

  HomeMoves(std::size_t pages, HomeMigration mode);

  HomeMigration mode() const { return mode_; }
  void set_mode(HomeMigration mode) { mode_ = mode; }
  // This rank's vote: its mode, or off when `against` (pins, threads).
  unsigned vote(bool against) const;
  // The mode a vote stands for; a barrier uses the strictest of every rank's.
  static HomeMigration mode_of(unsigned vote);
  static HomeMigration stricter(HomeMigration a, HomeMigration b);

  // The home a move gave `page`, or -1 when it has the home it was placed at.
  int moved_home(std::size_t page) const {
    return moved_[page] == 0 ? -1 : static_cast<int>(moved_[page]) - 1;
  }
  // After barrier number `barrier`'s exchange, in `mode`: the pages that
  // move, by page. `incoming` holds writer r's notices at offsets[r], sizes[r]
  // of them; home_of gives each page's home before the barrier (-1: none).
  std::span<const Move> decide(std::uint64_t barrier, HomeMigration mode,
                               std::span<const std::int64_t> incoming, std::span<const int> sizes,
                               std::span<const int> offsets,
                               const std::function<int(std::size_t)>& home_of);
  // Whether the last decide() moves `page`.
  bool moving(std::size_t page) const;
  // `move` took place: its page is homed at move.to from now on; `placed` is
  // the home its placement gave it.
  void record(const Move& move, int placed) {
    moved_[move.page] = move.to == placed ? 0 : static_cast<std::uint32_t>(move.to) + 1;
  }
  // Collective context (free): the pages are placed afresh.
  void forget(std::size_t first, std::size_t count);

 private:
  // Per page, during decide(): its first writer + 1 and whether that notice
  // allows a move, or kSeveral.
  static constexpr std::uint32_t kMovable = 1u << 31, kSeveral = ~0u;
  // Per page, for adaptive mode: the last barrier and writer that alone wrote it.
  static std::uint64_t sole(std::uint64_t barrier, int writer) {
    return barrier << 24 | (static_cast<std::uint64_t>(writer) + 1);
  }

  HomeMigration mode_;
  LazyArray<std::uint32_t> moved_;      // per page: home + 1 given by a move, or 0
  LazyArray<std::uint64_t> last_sole_;  // per page: sole(barrier, writer)
  LazyArray<std::uint32_t> writers_;    // per page: decide()'s scratch
  LazyVector<std::size_t> noticed_;     // decide()'s pages, each once
  LazyVector<Move> moves_;              // the last decide()'s, by page
};

}  // namespace mpidsm::detail
