#include "lock_homes.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace mpidsm::detail {

LockHomes::LockHomes(std::size_t locks, std::size_t movable, int rank, int ranks, bool moves)
    : movable_(std::min(movable, locks)),
      rank_(rank),
      ranks_(static_cast<std::size_t>(ranks)),
      moves_(moves && ranks > 1),
      moved_to_(locks),
      last_page_(moves_ ? movable_ : 0),
      candidate_(moves_ ? movable_ : 0),
      hosted_(moves_ ? movable_ * LockRecordLayout::bytes : 0) {
  if (!moves_) return;
  noted_.reserve(movable_);
  proposing_.reserve(movable_);
}

void LockHomes::note_release(std::size_t id, std::size_t page) {
  if (!moves_ || id >= movable_) return;
  if (std::atomic_ref<std::uint64_t>(last_page_[id]).exchange(page + 1, std::memory_order_relaxed))
    return;
  std::lock_guard<std::mutex> hold(noted_mutex_);
  noted_.push_back(id);
}

void LockHomes::propose(const std::function<int(std::size_t)>& home_of_page,
                        std::vector<std::int64_t>& out) {
  if (!moves_) return;
  {
    std::lock_guard<std::mutex> hold(noted_mutex_);
    noted_.swap(proposing_);
  }
  for (std::size_t id : proposing_) {
    if (home(id) == rank_) {
      propose_for(id, home_of_page, out);
    } else {  // moved away since: listed afresh if it comes back
      std::atomic_ref<std::uint64_t>(last_page_[id]).store(0, std::memory_order_relaxed);
    }
  }
  proposing_.clear();
}

// A lock no release noticed a page of since the last barrier is not listed
// and keeps its candidate: an iterative code's barriers between its lock
// phases say nothing against the move.
void LockHomes::propose_for(std::size_t id, const std::function<int(std::size_t)>& home_of_page,
                            std::vector<std::int64_t>& out) {
  const std::uint64_t last =
      std::atomic_ref<std::uint64_t>(last_page_[id]).exchange(0, std::memory_order_relaxed);
  if (last == 0) return;
  const int target = home_of_page(static_cast<std::size_t>(last - 1));
  if (target < 0 || target == rank_) {
    candidate_[id] = 0;
    return;
  }
  if (candidate_[id] != target + 1) {
    candidate_[id] = target + 1;
    return;
  }
  candidate_[id] = 0;
  out.push_back(encode(id, target));
}

void LockHomes::apply(std::span<const std::int64_t> moves) {
  for (const std::int64_t entry : moves) {
    const auto bits = static_cast<std::uint64_t>(entry) & ~(std::uint64_t{1} << 63);
    const std::size_t id = bits & kIdMask;
    const auto target = static_cast<std::size_t>(bits >> kHomeShift);
    if (!moves_ || id >= movable_ || target >= ranks_) {
      std::fprintf(stderr, "mpidsm: rank %d: malformed DSM lock move in a barrier record\n", rank_);
      std::abort();
    }
    const int to = static_cast<int>(target);
    std::atomic_ref<std::int32_t>(moved_to_[id])
        .store(to == static_home(id) ? 0 : to + 1, std::memory_order_relaxed);
    if (to == rank_) candidate_[id] = 0;
  }
}

}  // namespace mpidsm::detail
