// The engine's side of a pairwise sync (Dsm::sync_with; the protocol and
// its messages are PairwiseSync's, protocol/pairwise_sync.hpp): the release before
// it, the pages its acquire drops, installs or fetches afresh.
#include <algorithm>
#include <cstring>
#include <string>

#include "dsm/protocol/page_runs.hpp"
#include "dsm/test_hooks.hpp"
#include "engine.hpp"
#include "ticks.hpp"
#include "transport/progress/progress_control.hpp"

namespace mpidsm {

// The engine's pages as the sync's acquire sees them (mutex_ held).
class Dsm::Engine::SyncPages final : public detail::PairwiseSync::PageSide {
 public:
  explicit SyncPages(Engine& engine) : e_(engine) {}
  bool copied(std::size_t page) const override { return !is_home(e_.state_[page]); }
  int home_of(std::size_t page) const override { return e_.home_of_page(page); }
  const std::byte* home_bytes(std::size_t page) const override { return e_.master(page); }
  // A noticed copy this rank keeps (update, read_mostly, a recurrent
  // adaptive page) is judged as at any other acquire: a recurrent page
  // whose updates go unread goes back to invalidation, and its reads
  // counted let watch_updated watch it less.
  bool used(std::size_t page) override {
    return (!e_.keeps_copies(page) || e_.keeps_copy_now(page)) && e_.used_since_updated(page);
  }
  void invalidate(std::size_t page) override { e_.invalidate(page); }
  void changed_at_home(std::size_t page) override { e_.demote_hot_page(page); }
  void install(std::size_t page, const std::byte* bytes) override {
    std::memcpy(e_.master(page), bytes, e_.page_size_);
    e_.watch_updated(page, 1);
    ++e_.stats_.sync_refetches;
  }

 private:
  Engine& e_;
};

void Dsm::Engine::sync_with(std::span<const int> peers) {
  detail::check_not_forked(rank_, "Dsm::sync_with");
  note_thread(this_thread());
  const std::uint64_t start = detail::TickClock::now();
  const std::lock_guard<std::mutex> one_call(sync_.one_call());
  // This thread's polls serve the peers until it returns (as in a barrier):
  // they are inside their own sync_with.
  detail::DrivingProgress driving(transport_);
  std::optional<Error> failure;
  SyncPages pages(*this);
  {
    detail::EngineLock guard(mutex_);
    sync_.check_peers(peers);
    ++stats_.syncs;
    sync_.begin();
    try {
      detail::fail_if_injected(detail::FailurePoint::sync_release, rank_);
      release(ReleaseKind::barrier_or_sync);
    } catch (const Error& e) {
      failure = e;  // the notices stay owed (the log keeps them)
    }
    sync_.compose(peers, failure ? static_cast<std::int64_t>(failure->code()) : 0, notices_, pages);
  }
  const int failed_peer = sync_.exchange(transport_, peers);
  // The notices that did arrive are valid whatever failed (their senders
  // will not send them again): a page they name left alone would stay stale.
  {
    detail::EngineLock guard(mutex_);
    const DropBatch drops(*this);
    acquired_since_barrier_ = true;
    sync_.acquire(peers, pages, refresh_);
    stats_.sync_refetches += refresh_copies(refresh_);
  }
  if (failure) throw *failure;
  if (failed_peer >= 0) {
    const std::size_t i = static_cast<std::size_t>(
        std::find(peers.begin(), peers.end(), failed_peer) - peers.begin());
    throw Error(static_cast<Errc>(sync_.status(i)), rank_,
                "Dsm::sync_with: the release of rank " + std::to_string(failed_peer) +
                    " failed, so its writes are not visible here; the other peers' are");
  }
  sync_ticks_.fetch_add(detail::TickClock::now() - start, std::memory_order_relaxed);
}

std::size_t Dsm::Engine::refresh_copies(std::vector<std::size_t>& pages) {
  if (pages.empty()) return 0;
  std::sort(pages.begin(), pages.end(),
            [this](std::size_t a, std::size_t b) { return home_then_page(a, b); });
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  // Only cached copies are brought up to date (and watched): one dropped
  // since it was listed has no cache entry to write.
  std::erase_if(pages, [&](std::size_t page) { return state_[page] != PageState::cached; });
  // Calls f(home, first page, length) for each run of consecutive pages of one home.
  auto for_each_run = [&](auto&& f) {
    for (std::size_t i = 0; i < pages.size();) {
      const int home = home_of_page(pages[i]);
      std::size_t j = i + 1;
      while (j < pages.size() && home_of_page(pages[j]) == home) ++j;
      detail::for_each_run(&pages[i], j - i,
                           [&](std::size_t first, std::size_t count) { f(home, first, count); });
      i = j;
    }
  };
  try {
    for_each_run([&](int home, std::size_t first, std::size_t count) {
      if (const std::byte* direct = mapped_master_[static_cast<std::size_t>(home)])
        std::memcpy(master(first), direct + first * page_size_, count * page_size_);
      else if (page_calls_.used())
        page_calls_.ask(home, first, count, false, false, gets_);
      else
        gets_.push_back(transport_.get_nb(home, master_, first * page_size_, master(first),
                                          count * page_size_));
    });
    for (Request& get : gets_) get.wait();
    page_calls_.check_answers(gets_);
    gets_.clear();
  } catch (...) {
    gets_.clear();  // each waits for its get: the pages are not written after this
    page_calls_.clear();
    for (std::size_t page : pages) drop_cached(page);  // half-written copies go
    pages.clear();
    throw;
  }
  for_each_run([&](int, std::size_t first, std::size_t count) { watch_updated(first, count); });
  const std::size_t refreshed = pages.size();
  pages.clear();
  return refreshed;
}

}  // namespace mpidsm
