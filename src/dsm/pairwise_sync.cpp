// Pairwise synchronisation (Dsm::sync_with): a release, then one message
// each way with every listed peer (sync_message.hpp) carrying the write
// notices that peer is owed (sync_log.hpp), then the acquire of what the
// peers' messages name. A stencil code syncs with its neighbours only, as
// its MPI twin exchanges halos with them only: no rank waits for ranks it
// shares nothing with, which a barrier makes it do.
//
// A noticed page this rank used keeps its copy (and its home's count of it)
// and is brought up to date in place; the other noticed pages leave the
// cache. Up to date how:
//   - Pushed: a home sends, with its notices, the bytes of the pages it
//     wrote that the peer asked for (the pages it used when they last
//     changed: a stencil's halo rows). No round trip.
//   - Fetched: every other used page, from its home, all at once (one call
//     or get per run). Every diff is complete at its home before its
//     writer's message leaves, so the fetch holds the writes of the peers.
//
// A push is a copy of the home's page taken as the home entered this sync,
// so it may lack changes that reached the home since: another rank's diff,
// or this rank's own. Installing it would then hide writes this rank has
// already acquired (or made). So this rank stamps each page when it learns
// of such a change (it releases the page, or a notice from a rank other
// than the home invalidates or updates it), with a counter it advances at
// each sync as its messages leave. A push from home q is installed only if
// the page's stamp is no later than this rank's previous sync with q: every
// such change then reached q before this rank's previous message did, and
// so before q's copy was taken. Otherwise the page is fetched.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "agreed_keys.hpp"
#include "engine.hpp"
#include "page_runs.hpp"
#include "sync_message.hpp"
#include "test_hooks.hpp"
#include "ticks.hpp"
#include "transport/library_messaging.hpp"
#include "transport/progress/progress_control.hpp"

namespace mpidsm {

using detail::DrivingProgress;
using detail::LibraryMessaging;
using detail::SyncMessage;

void Dsm::Engine::sync_with(std::span<const int> peers) {
  detail::check_not_forked(rank_, "Dsm::sync_with");
  const std::uint64_t start = detail::TickClock::now();
  const std::lock_guard<std::mutex> one_call(sync_calls_);
  // This thread's polls serve the peers until it returns (as in a barrier):
  // they are inside their own sync_with.
  DrivingProgress driving(transport_);
  std::optional<Error> failure;
  {
    detail::EngineLock guard(mutex_);
    check_sync_peers(peers);
    ++stats_.syncs;
    ++sync_stamp_;  // this sync's release
    try {
      detail::fail_if_injected(detail::FailurePoint::sync_release, rank_);
      release();
    } catch (const Error& e) {
      failure = e;  // the notices stay owed (the log keeps them)
    }
    compose_sync_messages(peers, failure ? static_cast<std::int64_t>(failure->code()) : 0);
    ++sync_stamp_;  // what this rank learns from here on came after its messages
  }
  const int failed_peer = exchange_sync_messages(peers);
  // The notices that did arrive are valid whatever failed (their senders
  // will not send them again): a page they name left alone would stay stale.
  acquire_sync_notices(peers);
  if (failure) throw *failure;
  if (failed_peer >= 0) {
    const std::size_t i = static_cast<std::size_t>(
        std::find(peers.begin(), peers.end(), failed_peer) - peers.begin());
    throw Error(static_cast<Errc>(sync_scratch_.views[i].status), rank_,
                "Dsm::sync_with: the release of rank " + std::to_string(failed_peer) +
                    " failed, so its writes are not visible here; the other peers' are");
  }
  sync_ticks_.fetch_add(detail::TickClock::now() - start, std::memory_order_relaxed);
}

void Dsm::Engine::check_sync_peers(std::span<const int> peers) {
  std::vector<bool>& listed = sync_scratch_.listed;
  listed.assign(static_cast<std::size_t>(runtime_.size()), false);
  for (const int peer : peers) {
    if (peer < 0 || peer >= runtime_.size())
      throw Error(Errc::invalid_rank, rank_,
                  "Dsm::sync_with: peer " + std::to_string(peer) + " is not a rank of this " +
                      std::to_string(runtime_.size()) + "-rank runtime; nothing was sent");
    if (peer == rank_ || listed[static_cast<std::size_t>(peer)])
      throw Error(Errc::invalid_argument, rank_,
                  "Dsm::sync_with: peer " + std::to_string(peer) +
                      (peer == rank_ ? " is this rank itself" : " is listed twice") +
                      "; nothing was sent");
    listed[static_cast<std::size_t>(peer)] = true;
  }
}

void Dsm::Engine::compose_sync_messages(std::span<const int> peers, std::int64_t status) {
  SyncScratch& s = sync_scratch_;
  const std::size_t n = peers.size(), page_words = page_size_ / sizeof(std::int64_t);
  s.outgoing.resize(n);
  s.notices.resize(n);
  s.previous_stamp.resize(n);
  s.expected_pushes.resize(n);
  s.keys.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    SyncPeer& peer = sync_peers_[static_cast<std::size_t>(peers[i])];
    std::vector<std::int64_t>& out = s.outgoing[i];
    std::vector<std::int64_t>& notices = s.notices[i];
    out.assign(SyncMessage::kHead, 0);
    notices.clear();
    s.previous_stamp[i] = peer.stamp;
    peer.stamp = sync_stamp_;
    s.keys[i] = 2 * peer.count++;  // this sync's two messages, whatever becomes of them
    // The peer pushes what this rank asked for last time; what it asks for now
    // comes with the next sync.
    s.expected_pushes[i] = peer.asked.size();
    peer.asked.clear();
    out[SyncMessage::kStatus] = status;
    if (status == 0) {
      sync_log_.take(peers[i], notices_, notices);
      out.insert(out.end(), notices.begin(),
                 notices.begin() + static_cast<std::ptrdiff_t>(
                                       std::min(notices.size(), SyncMessage::kInlineNotices)));
      peer.asked.swap(peer.wanted);
      out.insert(out.end(), peer.asked.begin(), peer.asked.end());
      // Pushed: the pages it asked for that these notices name.
      s.pushed.clear();
      for (std::int64_t page : peer.push_to)
        if (std::any_of(notices.begin(), notices.end(), [&](std::int64_t notice) {
              return notice_page(notice) == static_cast<std::size_t>(page);
            }))
          s.pushed.push_back(page);
      out.insert(out.end(), s.pushed.begin(), s.pushed.end());
      const std::size_t bytes_at = out.size();
      out.resize(bytes_at + s.pushed.size() * page_words);
      for (std::size_t k = 0; k < s.pushed.size(); ++k)
        std::memcpy(out.data() + bytes_at + k * page_words,
                    master(static_cast<std::size_t>(s.pushed[k])), page_size_);
      out[SyncMessage::kWanted] = static_cast<std::int64_t>(peer.asked.size());
      out[SyncMessage::kPushed] = static_cast<std::int64_t>(s.pushed.size());
    }
    peer.wanted.clear();  // rebuilt from the peer's notices this time
    out[SyncMessage::kNotices] = static_cast<std::int64_t>(notices.size());
  }
}

int Dsm::Engine::exchange_sync_messages(std::span<const int> peers) {
  SyncScratch& s = sync_scratch_;
  const std::size_t n = peers.size(), page_words = page_size_ / sizeof(std::int64_t);
  s.incoming.resize(n);
  s.overflow.resize(n);
  s.views.assign(n, {});
  auto key = [&](std::size_t i, unsigned part) { return detail::sync_key(s.keys[i] + part); };
  try {
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::int64_t>& in = s.incoming[i];
      in.resize(SyncMessage::capacity(s.expected_pushes[i], page_words));
      s.requests.push_back(
          LibraryMessaging(transport_)
              .receive_agreed(peers[i], key(i, 0), in.data(), in.size() * sizeof(std::int64_t)));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::vector<std::int64_t>& notices = s.notices[i];
      s.requests.push_back(LibraryMessaging(transport_)
                               .send_agreed(peers[i], key(i, 0), s.outgoing[i].data(),
                                            s.outgoing[i].size() * sizeof(std::int64_t)));
      if (notices.size() > SyncMessage::kInlineNotices)
        s.requests.push_back(LibraryMessaging(transport_)
                                 .send_agreed(peers[i], key(i, 1),
                                              notices.data() + SyncMessage::kInlineNotices,
                                              (notices.size() - SyncMessage::kInlineNotices) *
                                                  sizeof(std::int64_t)));
    }
    for (std::size_t i = 0; i < n; ++i) {
      s.requests[i].wait();
      const std::size_t words = s.requests[i].message().size / sizeof(std::int64_t);
      SyncMessage::View& view = s.views[i];
      if (!view.parse({s.incoming[i].data(), words}, page_words) ||
          view.pushed.size() > s.expected_pushes[i])
        throw Error(Errc::transport, rank_,
                    "Dsm::sync_with: malformed message from rank " + std::to_string(peers[i]));
      // The rest of a long list of notices.
      if (view.notices > SyncMessage::kInlineNotices) {
        std::vector<std::int64_t>& rest = s.overflow[i];
        rest.resize(view.notices - SyncMessage::kInlineNotices);
        s.requests.push_back(LibraryMessaging(transport_)
                                 .receive_agreed(peers[i], key(i, 1), rest.data(),
                                                 rest.size() * sizeof(std::int64_t)));
      } else {
        s.overflow[i].clear();
      }
    }
    for (Request& r : s.requests) r.wait();
  } catch (...) {
    s.requests.clear();  // nothing is left writing into the scratch
    throw;
  }
  s.requests.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (s.views[i].status != 0) return peers[i];
  return -1;
}

void Dsm::Engine::acquire_sync_notices(std::span<const int> peers) {
  SyncScratch& s = sync_scratch_;
  detail::EngineLock guard(mutex_);
  // Calls f(page) for each valid page peer i's notices name, but those homed here.
  auto for_each_noticed = [&](std::size_t i, auto&& f) {
    const SyncMessage::View& view = s.views[i];
    auto each = [&](std::int64_t notice) {
      const std::size_t page = notice_page(notice);
      if (page < pages_ && !is_home(state_[page])) f(page);
    };
    for (std::int64_t notice : view.inline_notices) each(notice);
    for (std::int64_t notice : s.overflow[i]) each(notice);
  };
  // First every change another rank made to a page homed elsewhere: no
  // push of such a page from any home is installed in this sync.
  for (std::size_t i = 0; i < peers.size(); ++i)
    for_each_noticed(i, [&](std::size_t page) {
      if (home_of_page(page) != peers[i]) changed_stamp_[page] = sync_stamp_;
    });
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const int q = peers[i];
    SyncPeer& peer = sync_peers_[static_cast<std::size_t>(q)];
    const SyncMessage::View& view = s.views[i];
    peer.push_to.clear();
    for (std::int64_t page : view.wanted)
      if (page >= 0 && static_cast<std::size_t>(page) < pages_ && home_of_page(page) == rank_)
        peer.push_to.push_back(page);
    for_each_noticed(i, [&](std::size_t page) {
      if (!used_since_updated(page)) return invalidate(page);
      const bool from_home = home_of_page(page) == q;
      if (from_home && peer.wanted.size() < SyncMessage::kMaxWanted &&
          std::find(peer.wanted.begin(), peer.wanted.end(), page) == peer.wanted.end())
        peer.wanted.push_back(static_cast<std::int64_t>(page));
      const auto pushed =
          std::find(view.pushed.begin(), view.pushed.end(), static_cast<std::int64_t>(page));
      if (from_home && pushed != view.pushed.end() && changed_stamp_[page] <= s.previous_stamp[i]) {
        const auto k = static_cast<std::size_t>(pushed - view.pushed.begin());
        std::memcpy(master(page), view.bytes + k * (page_size_ / sizeof(std::int64_t)), page_size_);
        watch_updated(page, 1);
        ++stats_.sync_refetches;
      } else {
        s.refresh.push_back(page);
      }
    });
  }
  refresh_copies(s.refresh);
}

void Dsm::Engine::refresh_copies(std::vector<std::size_t>& pages) {
  if (pages.empty()) return;
  std::sort(pages.begin(), pages.end(),
            [this](std::size_t a, std::size_t b) { return home_then_page(a, b); });
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
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
      if (page_calls_.used())
        page_calls_.ask(home, first, count, false, gets_);
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
  stats_.sync_refetches += pages.size();
  pages.clear();
}

}  // namespace mpidsm
