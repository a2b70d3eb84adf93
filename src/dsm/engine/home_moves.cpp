// Home migration, the engine's side (the decision and the moved homes are
// HomeMoves', protocol/home_moves.hpp). A move changes no bytes: the writer's
// copy is the page (its notice says it held it since before the barrier), so
// the writer maps its copy as the master, the old home gives its view up, and
// every other rank drops its copy, uncounting it at the old home before the
// page's home changes.
#include <sys/mman.h>

#include "engine.hpp"

namespace mpidsm {

void Dsm::Engine::set_home_migration(HomeMigration mode) {
  detail::EngineLock guard(mutex_);
  moves_.set_mode(mode);
}

// Against moves while a page is pinned (its view cannot change hands) or once
// a second thread used the DSM (its writes during the barrier could reach
// the old home after the move).
unsigned Dsm::Engine::home_move_vote() const {
  // A wait abandoned in a failed barrier keeps its place in a lock's queue:
  // no lock may move (lock_homes.hpp) while one does.
  return moves_.vote(pins_.pinned_pages() > 0 || several_threads_.load(std::memory_order_relaxed) ||
                     locks_.any_abandoned());
}

// Those not noticed since (with a change) join the barrier's notices.
void Dsm::Engine::append_unchanged_notices(BarrierScratch& x) {
  for (std::size_t page : unchanged_) {
    listed_[page] &= static_cast<std::uint8_t>(~kInUnchanged);
    if (!(listed_[page] & kInNotices))
      x.outgoing.push_back(static_cast<std::int64_t>(page) | detail::ReleaseNotice::unchanged);
  }
  unchanged_.clear();
}

// Copies cached (not dirty: the release just diffed them) and not pinned,
// of adaptive allocations (no other policy moves homes).
void Dsm::Engine::mark_copies_held(BarrierScratch& x) {
  if (moves_.mode() == HomeMigration::off) return;
  for (std::int64_t& notice : x.outgoing) {
    const std::size_t page = detail::ReleaseNotice::page(notice);
    if (state_[page] == PageState::cached && !pinned(page) &&
        policy_of_page(page) == Coherence::adaptive)
      notice |= detail::ReleaseNotice::writer_holds_copy;
  }
}

void Dsm::Engine::move_homes(std::span<const detail::HomeMoves::Move> moves) {
  for (const detail::HomeMoves::Move& move : moves) {
    sync_.record_change(move.page);  // a copy fetched from now on may be newer than a push
    if (move.from == rank_)
      give_home(move);
    else if (move.to == rank_)
      take_home(move);
    else
      drop_for_move(move);
  }
}

// The old home's view goes; its bytes stay until a free zeroes them.
void Dsm::Engine::give_home(const detail::HomeMoves::Move& move) {
  const std::size_t page = move.page;
  if (!pinned(page) && protection_.at(page) != PROT_NONE) protect(page, 1, PROT_NONE);
  state_[page] = PageState::invalid;
  listed_[page] &= static_cast<std::uint8_t>(~kUnwatched);
  sharing_.note_local_data(page);
  moves_.record(move, placed_home_of_page(page));
  ++stats_.homes_lost;
}

void Dsm::Engine::take_home(const detail::HomeMoves::Move& move) {
  const std::size_t page = move.page;
  const bool was_dirty = state_[page] == PageState::dirty;
  if (cache_.contains(page)) {
    drop_twin(page);
    leave_cache(page);
  }
  drop_registration(page);  // at the old home
  moves_.record(move, placed_home_of_page(page));
  ++stats_.homes_gained;
  if (pinned(page)) {
    // Its view must not become more restrictive: tracked as it is.
    if (protection_.at(page) == (PROT_READ | PROT_WRITE))
      set_dirty(page, PageState::home_dirty);
    else
      state_[page] = PageState::home_clean;
  } else if (was_dirty) {
    set_dirty(page, PageState::home_dirty);  // written since the barrier began: a notice is due
  } else {
    map_home(page, false);
  }
}

// The copy is uncounted at the old home first; then it goes as any
// invalidated copy does (its changes, if another thread wrote it since this
// rank's release began, to the new home). A copy pinned meanwhile stays
// mapped and is counted at the new home instead.
void Dsm::Engine::drop_for_move(const detail::HomeMoves::Move& move) {
  const std::size_t page = move.page;
  drop_registration(page);
  moves_.record(move, placed_home_of_page(page));
  if (!pinned(page) || state_[page] == PageState::invalid)
    invalidate(page);
  else if (sharing_.add_copies(move.to, &page, 1))
    transport_.flush(move.to);
}

}  // namespace mpidsm
