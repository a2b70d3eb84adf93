// What a pairwise sync (Dsm::sync_with) owes each peer: the write notices
// this rank released since it last synced with that peer. A barrier
// delivers every notice to every rank, so nothing is owed after one, and a
// peer not synced with since the last barrier is owed the barrier's own
// list (every page released since then, each once).
//
// The log keeps releases in order, a page once per release that wrote it,
// and each peer a cursor into it. It is kept only once a sync happened
// since the last barrier (a program that never syncs logs nothing), and
// bounded: past kMaxEntries every peer falls back to the barrier's list.
// Its room is reserved when it starts, so recording never allocates: a
// release may run inside the fault handler (evicting a written page).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace mpidsm::detail {

class SyncLog {
 public:
  explicit SyncLog(int ranks) : cursor_(static_cast<std::size_t>(ranks), kUnsynced) {}

  // Entries the log keeps at most before every peer is reset.
  static constexpr std::size_t kMaxEntries = std::size_t{1} << 16;

  // A release recorded `notice`.
  void record(std::int64_t notice) {
    if (!active_) return;
    if (log_.size() < log_.capacity())
      log_.push_back(notice);
    else
      overflowed_ = true;
  }

  // Appends to `out` what `peer` is owed (`since_barrier`: this rank's
  // notices since the last barrier) and marks it delivered.
  void take(int peer, std::span<const std::int64_t> since_barrier, std::vector<std::int64_t>& out) {
    if (overflowed_) reset();
    if (log_.capacity() < kMaxEntries) log_.reserve(kMaxEntries);
    active_ = true;
    std::size_t& cursor = cursor_[static_cast<std::size_t>(peer)];
    if (cursor == kUnsynced)
      out.insert(out.end(), since_barrier.begin(), since_barrier.end());
    else
      out.insert(out.end(), log_.begin() + static_cast<std::ptrdiff_t>(cursor), log_.end());
    cursor = log_.size();
  }

  // A barrier delivered every notice: nothing is owed, nothing is logged.
  void reset() {
    if (!active_) return;  // nothing was logged or sent: a barrier-only program pays nothing
    log_.clear();
    cursor_.assign(cursor_.size(), kUnsynced);
    active_ = overflowed_ = false;
  }

  std::size_t entries() const { return log_.size(); }

 private:
  static constexpr std::size_t kUnsynced = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> cursor_;  // per rank: log_ entries already sent it, or kUnsynced
  std::vector<std::int64_t> log_;
  bool active_ = false;
  bool overflowed_ = false;  // a notice found no room: every peer gets the barrier's list
};

}  // namespace mpidsm::detail
