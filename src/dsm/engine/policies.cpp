// What an allocation's coherence policy (mpidsm::Coherence) changes in the
// engine. adaptive and invalidate share the protocol of every other file
// (invalidate only never moves homes or subscribes to barrier updates);
// this file holds what update, read_mostly and single_writer add, and
// adaptive's write-update of the pages a rank keeps fetching again.
//
// Adaptive write-update, per page and rank: a copy an acquire dropped
// (invalidate) and this rank then fetched again within a few barriers,
// twice in a row, is recurrent: from
// then on acquires keep it up to date as update's copies are. An update
// is unread when its copy's view was not touched before the next notice
// (watch_updated drops the view's page-table entries, touched_since_mapped
// looks). After two unread updates in a row the page goes back to
// invalidation, and needs two more losses and fetches to come back. So
// updates cost at most two pages per page read (what the faults would have
// fetched: one): a page written every interval and read every other one
// stays updated, and saves the fault's round trip; a page written often
// and read rarely stays on invalidation.
//
// update and read_mostly keep copies: a notice another rank released names
// a clean copy here, and instead of leaving the cache it is fetched afresh
// from its home once the acquire has read every notice (refresh_copies: a
// memcpy from a home mapped on this node, else one get or call per run of
// pages per home, all in flight together). Across nodes a barrier's
// subscriptions (barrier_updates.hpp) carry most of them sooner, pushed by
// their homes inside the barrier; refresh_copies takes the rest.
//
// single_writer pages have no twin: a release writes the whole page home,
// which is right only while one rank writes a page between synchronisations.
// A write fault before any acquire since the last barrier marks its page,
// and the barrier's notices carry the mark: two marked notices of one page
// are writes nothing ordered, which every rank sees alike and reports.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "engine.hpp"

namespace mpidsm {

bool Dsm::Engine::keeps_copy_now(std::size_t page) {
  if (!keeps_copies(page)) return false;
  if (policy_of_page(page) != Coherence::adaptive || state_[page] != PageState::cached ||
      !cache_.entry(page).refetched)
    return true;
  std::uint8_t& reuse = reuse_[page];
  if (read_since_updated(page)) {
    reuse &= static_cast<std::uint8_t>(~kUnreadUpdate);
    return true;
  }
  if (!(reuse & kUnreadUpdate)) {
    reuse |= kUnreadUpdate;
    // Judged: another notice of this acquire (several writers) must get
    // the same answer, not drop a copy already listed for a refresh.
    cache_.entry(page).refetched = false;
    return true;
  }
  reuse &= static_cast<std::uint8_t>(~(kScoreMask | kUnreadUpdate));
  ++stats_.updates_dropped;
  return false;
}

void Dsm::Engine::note_loss(std::size_t page) {
  reuse_[page] |= kLostToNotice;
  lost_in_[page] = static_cast<std::uint8_t>(epoch_.load(std::memory_order_relaxed));
}

// Only a fetch soon after the loss scores: a copy read again many barriers
// later was not wanted in between, and updates would have gone unread
// there. jia_lu's reader of a block column fetches it once per
// factorisation (65 barriers apart): scored, it became recurrent after two,
// and every later notice refreshed and watched a copy its reader was done
// with (two wasted updates per page per two factorisations). A wrapped
// byte may take an old loss for a recent one: one score too many, which
// unread updates take back.
void Dsm::Engine::note_refetch(std::size_t page) {
  std::uint8_t& reuse = reuse_[page];
  if (!(reuse & kLostToNotice) || !adaptive_updates_) return;
  reuse &= static_cast<std::uint8_t>(~kLostToNotice);
  const auto since_loss = static_cast<std::uint8_t>(
      static_cast<std::uint8_t>(epoch_.load(std::memory_order_relaxed)) - lost_in_[page]);
  if (since_loss > kSoonAfterLoss) {
    reuse &= static_cast<std::uint8_t>(~kScoreMask);
    return;
  }
  if ((reuse & kScoreMask) == kScoreMask) return;
  reuse = static_cast<std::uint8_t>(reuse + kScoreStep);
  if ((reuse & kScoreMask) == kRecurrent && policy_of_page(page) == Coherence::adaptive)
    ++stats_.updates_adopted;
}

bool Dsm::Engine::refresh_later(std::size_t page) {
  if (state_[page] != PageState::cached || pinned(page) || !keeps_copy_now(page)) return false;
  sync_.record_change(page);  // a copy fetched from now on may be newer than a push
  refresh_.push_back(page);
  return true;
}

void Dsm::Engine::refresh_barrier_copies() {
  std::erase_if(refresh_, [&](std::size_t page) { return state_[page] != PageState::cached; });
  for (std::size_t page : refresh_) count_as_fetched_next(page);
  stats_.updates_received += refresh_copies(refresh_);
}

void Dsm::Engine::drop_refreshes() {
  for (std::size_t page : refresh_) invalidate(page);
  refresh_.clear();
}

void Dsm::Engine::mark_unsynchronised(BarrierScratch& x) {
  if (unsynced_.empty()) return;
  for (std::int64_t& notice : x.outgoing) {
    const std::size_t page = detail::ReleaseNotice::page(notice);
    if (!(listed_[page] & kUnsynced)) continue;
    listed_[page] &= static_cast<std::uint8_t>(~kUnsynced);
    notice |= detail::ReleaseNotice::unsynchronised;
  }
  for (std::size_t page : unsynced_) {
    if (!(listed_[page] & kUnsynced)) continue;
    listed_[page] &= static_cast<std::uint8_t>(~kUnsynced);
    x.outgoing.push_back(static_cast<std::int64_t>(page) | detail::ReleaseNotice::unchanged |
                         detail::ReleaseNotice::unsynchronised);
  }
  unsynced_.clear();
}

void Dsm::Engine::find_write_races(const BarrierScratch& x) {
  if (allocations_.all_adaptive()) return;
  unsynced_writes_.clear();
  for (std::size_t writer = 0; writer < x.sizes.size(); ++writer) {
    const auto first = x.incoming.begin() + x.offsets[writer];
    for (auto it = first; it != first + x.sizes[writer]; ++it)
      if (*it & detail::ReleaseNotice::unsynchronised)  // a write fault: surely a write
        unsynced_writes_.emplace_back(detail::ReleaseNotice::page(*it), writer);
  }
  std::sort(unsynced_writes_.begin(), unsynced_writes_.end());
  for (std::size_t i = 1; i < unsynced_writes_.size(); ++i) {
    const auto [page, writer] = unsynced_writes_[i];
    if (page != unsynced_writes_[i - 1].first || writer == unsynced_writes_[i - 1].second) continue;
    std::ostringstream what;
    what << "Dsm::barrier: ranks " << unsynced_writes_[i - 1].second << " and " << writer
         << " both wrote page " << page << " (address " << static_cast<const void*>(view(page))
         << ") of a single_writer allocation since the previous barrier, with no lock, flag "
            "or sync_with ordering their writes; the page holds one rank's whole page, and "
            "the other's writes to it are lost (use Coherence::adaptive or invalidate for "
            "pages several ranks write at once)";
    race_ = Error(Errc::invalid_state, rank_, what.str());
    return;
  }
}

// `bytes` (the page's view, read-only until the release's flush completes
// the put, or a twin) cannot change before then.
detail::DiffShape Dsm::Engine::write_whole_page(std::size_t page, const std::byte* bytes) {
  const std::size_t base = page * page_size_;
  const int home = home_of_page(page);
  if (std::byte* direct = mapped_master_[static_cast<std::size_t>(home)]) {
    const detail::HeldPage held(guards_, home, page);
    std::memcpy(direct + base, bytes, page_size_);
  } else {
    transport_.put_nbi(home, master_, base, bytes, page_size_);
    homes_written_[static_cast<std::size_t>(home)] = true;
    ++stats_.diff_messages;
  }
  return {1, page_size_};
}

}  // namespace mpidsm
