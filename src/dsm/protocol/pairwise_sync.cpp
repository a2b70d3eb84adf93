#include "pairwise_sync.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "agreed_keys.hpp"
#include "transport/library_messaging.hpp"

namespace mpidsm::detail {

PairwiseSync::PairwiseSync(int rank, int ranks, std::size_t pages, std::size_t page_size)
    : rank_(rank),
      pages_(pages),
      page_words_(page_size / sizeof(std::int64_t)),
      log_(ranks),
      peers_(static_cast<std::size_t>(ranks)),
      changed_(pages) {}

void PairwiseSync::check_peers(std::span<const int> peers) {
  const int ranks = static_cast<int>(peers_.size());
  listed_.assign(peers_.size(), false);
  for (const int peer : peers) {
    if (peer < 0 || peer >= ranks)
      throw Error(Errc::invalid_rank, rank_,
                  "Dsm::sync_with: peer " + std::to_string(peer) + " is not a rank of this " +
                      std::to_string(ranks) + "-rank runtime; nothing was sent");
    if (peer == rank_ || listed_[static_cast<std::size_t>(peer)])
      throw Error(Errc::invalid_argument, rank_,
                  "Dsm::sync_with: peer " + std::to_string(peer) +
                      (peer == rank_ ? " is this rank itself" : " is listed twice") +
                      "; nothing was sent");
    listed_[static_cast<std::size_t>(peer)] = true;
  }
}

void PairwiseSync::compose(std::span<const int> peers, std::int64_t status,
                           std::span<const std::int64_t> since_barrier, const PageSide& pages) {
  const std::size_t n = peers.size();
  outgoing_.resize(n);
  notices_.resize(n);
  previous_stamp_.resize(n);
  expected_pushes_.resize(n);
  keys_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    Peer& peer = peers_[static_cast<std::size_t>(peers[i])];
    std::vector<std::int64_t>& out = outgoing_[i];
    std::vector<std::int64_t>& notices = notices_[i];
    out.assign(SyncMessage::kHead, 0);
    notices.clear();
    previous_stamp_[i] = peer.stamp;
    peer.stamp = stamp_;
    keys_[i] = 2 * peer.count++;  // this sync's two messages, whatever becomes of them
    // The peer pushes what this rank asked for last time; what it asks for now
    // comes with the next sync.
    expected_pushes_[i] = peer.asked.size();
    peer.asked.clear();
    out[SyncMessage::kStatus] = status;
    if (status == 0) {
      log_.take(peers[i], since_barrier, notices);
      out.insert(out.end(), notices.begin(),
                 notices.begin() + static_cast<std::ptrdiff_t>(
                                       std::min(notices.size(), SyncMessage::kInlineNotices)));
      peer.asked.swap(peer.wanted);
      out.insert(out.end(), peer.asked.begin(), peer.asked.end());
      // Pushed: the pages it asked for that these notices name.
      pushed_.clear();
      for (std::int64_t page : peer.push_to)
        if (std::any_of(notices.begin(), notices.end(), [&](std::int64_t notice) {
              return ReleaseNotice::page(notice) == static_cast<std::size_t>(page);
            }))
          pushed_.push_back(page);
      out.insert(out.end(), pushed_.begin(), pushed_.end());
      const std::size_t bytes_at = out.size();
      out.resize(bytes_at + pushed_.size() * page_words_);
      for (std::size_t k = 0; k < pushed_.size(); ++k)
        std::memcpy(out.data() + bytes_at + k * page_words_,
                    pages.home_bytes(static_cast<std::size_t>(pushed_[k])),
                    page_words_ * sizeof(std::int64_t));
      out[SyncMessage::kWanted] = static_cast<std::int64_t>(peer.asked.size());
      out[SyncMessage::kPushed] = static_cast<std::int64_t>(pushed_.size());
    }
    peer.wanted.clear();  // rebuilt from the peer's notices this time
    out[SyncMessage::kNotices] = static_cast<std::int64_t>(notices.size());
  }
  ++stamp_;  // what this rank learns from here on came after its messages
}

bool PairwiseSync::accept(std::size_t i, std::span<const std::int64_t> words) {
  if (views_.size() <= i) views_.resize(i + 1);
  if (overflow_.size() <= i) overflow_.resize(i + 1);
  overflow_[i].clear();
  SyncMessage::View& view = views_[i];
  return view.parse(words, page_words_) && view.pushed.size() <= expected_pushes_[i];
}

int PairwiseSync::exchange(Transport& transport, std::span<const int> peers) {
  LibraryMessaging messaging(transport);
  const std::size_t n = peers.size();
  incoming_.resize(n);
  overflow_.resize(n);
  views_.assign(n, {});
  auto key = [&](std::size_t i, unsigned part) { return sync_key(keys_[i] + part); };
  try {
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::int64_t>& in = incoming_[i];
      in.resize(SyncMessage::capacity(expected_pushes_[i], page_words_));
      requests_.push_back(messaging.receive_agreed(peers[i], key(i, 0), in.data(),
                                                   in.size() * sizeof(std::int64_t)));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::vector<std::int64_t>& notices = notices_[i];
      requests_.push_back(messaging.send_agreed(peers[i], key(i, 0), outgoing_[i].data(),
                                                outgoing_[i].size() * sizeof(std::int64_t)));
      if (notices.size() > SyncMessage::kInlineNotices)
        requests_.push_back(messaging.send_agreed(
            peers[i], key(i, 1), notices.data() + SyncMessage::kInlineNotices,
            (notices.size() - SyncMessage::kInlineNotices) * sizeof(std::int64_t)));
    }
    for (std::size_t i = 0; i < n; ++i) {
      requests_[i].wait();
      const std::size_t words = requests_[i].message().size / sizeof(std::int64_t);
      if (!accept(i, {incoming_[i].data(), words}))
        throw Error(Errc::transport, rank_,
                    "Dsm::sync_with: malformed message from rank " + std::to_string(peers[i]));
      // The rest of a long list of notices.
      if (views_[i].notices > SyncMessage::kInlineNotices) {
        std::vector<std::int64_t>& rest = overflow_[i];
        rest.resize(views_[i].notices - SyncMessage::kInlineNotices);
        requests_.push_back(messaging.receive_agreed(peers[i], key(i, 1), rest.data(),
                                                     rest.size() * sizeof(std::int64_t)));
      }
    }
    for (Request& r : requests_) r.wait();
  } catch (...) {
    requests_.clear();  // nothing is left writing into the scratch
    throw;
  }
  requests_.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (views_[i].status != 0) return peers[i];
  return -1;
}

template <class F>
void PairwiseSync::for_each_notice(std::size_t i, F&& f) const {
  for (std::int64_t notice : views_[i].inline_notices) f(ReleaseNotice::page(notice));
  for (std::int64_t notice : overflow_[i]) f(ReleaseNotice::page(notice));
}

template <class F>
void PairwiseSync::for_each_noticed(std::size_t i, const PageSide& pages, F&& f) const {
  for_each_notice(i, [&](std::size_t page) {
    if (page < pages_ && pages.copied(page)) f(page);
  });
}

void PairwiseSync::acquire(std::span<const int> peers, PageSide& pages,
                           std::vector<std::size_t>& refresh) {
  // First every change another rank made: no push of a page homed
  // elsewhere from any home is installed in this sync, and the engine
  // learns of the pages homed here.
  for (std::size_t i = 0; i < peers.size(); ++i)
    for_each_notice(i, [&](std::size_t page) {
      if (page >= pages_) return;
      if (!pages.copied(page))
        pages.changed_at_home(page);
      else if (pages.home_of(page) != peers[i])
        changed_[page] = stamp_;
    });
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const int q = peers[i];
    Peer& peer = peers_[static_cast<std::size_t>(q)];
    const SyncMessage::View& view = views_[i];
    peer.push_to.clear();
    for (std::int64_t page : view.wanted)
      if (page >= 0 && static_cast<std::size_t>(page) < pages_ &&
          pages.home_of(static_cast<std::size_t>(page)) == rank_)
        peer.push_to.push_back(page);
    for_each_noticed(i, pages, [&](std::size_t page) {
      if (!pages.used(page)) return pages.invalidate(page);
      const bool from_home = pages.home_of(page) == q;
      if (from_home && peer.wanted.size() < SyncMessage::kMaxWanted &&
          std::find(peer.wanted.begin(), peer.wanted.end(), page) == peer.wanted.end())
        peer.wanted.push_back(static_cast<std::int64_t>(page));
      const auto pushed =
          std::find(view.pushed.begin(), view.pushed.end(), static_cast<std::int64_t>(page));
      if (from_home && pushed != view.pushed.end() && changed_[page] <= previous_stamp_[i]) {
        const auto k = static_cast<std::size_t>(pushed - view.pushed.begin());
        pages.install(page, reinterpret_cast<const std::byte*>(view.bytes + k * page_words_));
      } else {
        refresh.push_back(page);
      }
    });
  }
}

}  // namespace mpidsm::detail
