#include "barrier_updates.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {

BarrierUpdates::BarrierUpdates(Transport& transport, std::size_t page_size, std::size_t candidates)
    : transport_(transport),
      messaging_(transport),
      page_size_(page_size),
      peers_(static_cast<std::size_t>(transport.size())) {
  candidates_.reserve(candidates);
}

bool BarrierUpdates::PageList::contains(std::uint64_t page) const {
  for (std::size_t i = 0; i < count(); ++i)
    if (words[1 + i] == page) return true;
  return false;
}

bool BarrierUpdates::subscribe(int home, std::size_t page) {
  if (subscriptions_.empty() || subscriptions_.back().home != home)
    subscriptions_.push_back({home, outgoing_.size(), outgoing_.size(), 0, true});
  Subscription& s = subscriptions_.back();
  const std::size_t runs = (s.end - s.begin) / 2;
  if (runs > 0 && outgoing_[s.end - 2] + outgoing_[s.end - 1] == page) {
    ++outgoing_[s.end - 1];
  } else {
    if (runs == kMaxRuns) return false;
    outgoing_.push_back(page);
    outgoing_.push_back(1);
    s.end += 2;
  }
  ++s.pages;
  subscribed_.push_back(page);
  return true;
}

void BarrierUpdates::fill(PageList& list, const std::vector<std::uint64_t>& pages,
                          const BytesOf& bytes_of) const {
  list.words.resize(list_words(pages.size()));
  list.words[0] = pages.size();
  std::copy(pages.begin(), pages.end(), list.words.begin() + 1);
  auto* data = reinterpret_cast<std::byte*>(list.words.data() + 1 + pages.size());
  for (std::size_t i = 0; i < pages.size(); ++i)
    std::memcpy(data + i * page_size_, bytes_of(pages[i]), page_size_);
}

void BarrierUpdates::prepare_pushes(std::span<const std::int64_t> released, const HomeOf& home_of,
                                    const BytesOf& bytes_of) {
  const int rank = transport_.rank();
  written_.clear();
  for (std::int64_t notice : released)
    if (ReleaseNotice::definite(notice) && home_of(ReleaseNotice::page(notice)) == rank)
      written_.push_back(ReleaseNotice::page(notice));
  if (written_.empty()) return;
  std::sort(written_.begin(), written_.end());
  for (Peer& reader : peers_) {
    scratch_.clear();
    for (std::size_t r = 0; r + 1 < reader.standing.size() && scratch_.size() < kMaxPages; r += 2)
      for (std::uint64_t page = reader.standing[r];
           page < reader.standing[r] + reader.standing[r + 1] && scratch_.size() < kMaxPages;
           ++page)
        if (std::binary_search(written_.begin(), written_.end(), page)) scratch_.push_back(page);
    if (scratch_.empty()) continue;
    fill(reader.push_out, scratch_, bytes_of);
  }
}

void BarrierUpdates::mark(std::uint64_t* masks, std::size_t words) {
  auto set = [&](std::size_t mask, std::size_t rank) {
    masks[mask * words + rank / 64] |= std::uint64_t{1} << (rank % 64);
  };
  for (Subscription& s : subscriptions_) {
    const auto home = static_cast<std::size_t>(s.home);
    const std::vector<std::uint64_t>& held = peers_[home].held;
    s.renewed = !std::equal(outgoing_.begin() + static_cast<std::ptrdiff_t>(s.begin),
                            outgoing_.begin() + static_cast<std::ptrdiff_t>(s.end), held.begin(),
                            held.end());
    set(0, home);
    if (s.renewed) set(1, home);
  }
  for (std::size_t r = 0; r < peers_.size(); ++r)
    if (!peers_[r].push_out.words.empty()) set(2, r);
}

std::span<const std::uint64_t> BarrierUpdates::push_riding_to(int reader) {
  if (reader < 0) return {};
  Peer& peer = peers_[static_cast<std::size_t>(reader)];
  if (peer.push_out.words.empty()) return {};
  peer.push_rides = true;
  pages_sent_ += peer.push_out.count();
  return peer.push_out.words;
}

std::size_t BarrierUpdates::push_capacity_from(int home) const {
  if (home < 0) return 0;
  const std::size_t pages = peers_[static_cast<std::size_t>(home)].last_pages;
  return pages == 0 ? 0 : list_words(std::min(pages, kMaxPages));
}

void BarrierUpdates::push_rode_from(int home, std::span<const std::uint64_t> words) {
  if (words.empty()) return;
  check_push(home, words[0], words.size_bytes());
  Peer& peer = peers_[static_cast<std::size_t>(home)];
  peer.push_in.words.assign(words.begin(), words.end());
  peer.push_rode = true;
}

void BarrierUpdates::check_push(int home, std::uint64_t pages, std::size_t bytes) const {
  if (pages <= kMaxPages && bytes == list_words(pages) * sizeof(std::uint64_t)) return;
  throw Error(Errc::transport, transport_.rank(),
              "Dsm::barrier: rank " + std::to_string(home) + " pushed " + std::to_string(bytes) +
                  " bytes, which is no list of pages");
}

void BarrierUpdates::send() {
  for (const Subscription& s : subscriptions_)
    if (s.renewed)
      sends_.push_back(messaging_.send_agreed(s.home, key(kSubscription),
                                              outgoing_.data() + s.begin,
                                              (s.end - s.begin) * sizeof(std::uint64_t)));
  for (std::size_t r = 0; r < peers_.size(); ++r)
    if (!peers_[r].push_out.words.empty() && !peers_[r].push_rides) {
      const PageList& push = peers_[r].push_out;
      pages_sent_ += push.count();
      sends_.push_back(messaging_.send_agreed(static_cast<int>(r), key(kPush), push.words.data(),
                                              push.words.size() * sizeof(std::uint64_t)));
    }
}

void BarrierUpdates::learn_notices(std::span<const std::int64_t> incoming,
                                   std::span<const int> sizes, std::span<const int> offsets,
                                   const HomeOf& home_of) {
  noticed_.clear();
  for (std::size_t writer = 0; writer < sizes.size(); ++writer) {
    const auto first = incoming.begin() + offsets[writer];
    for (auto it = first; it != first + sizes[writer]; ++it)
      if (ReleaseNotice::definite(*it))
        noticed_.emplace_back(ReleaseNotice::page(*it),
                              home_of(ReleaseNotice::page(*it)) == static_cast<int>(writer));
  }
  std::sort(noticed_.begin(), noticed_.end());
}

BarrierUpdates::Noticed BarrierUpdates::noticed(std::size_t page) const {
  auto it = std::lower_bound(noticed_.begin(), noticed_.end(), std::pair{page, false});
  if (it == noticed_.end() || it->first != page) return Noticed::no;
  for (; it != noticed_.end() && it->first == page; ++it)
    if (!it->second) return Noticed::by_others;
  return Noticed::by_home_only;
}

template <class F>
void BarrierUpdates::late_pages(const std::uint64_t* runs, std::size_t run_words,
                                const PageList& push, F&& f) const {
  std::size_t taken = 0;
  for (std::size_t r = 0; r + 1 < run_words; r += 2)
    for (std::uint64_t page = runs[r]; page < runs[r] + runs[r + 1]; ++page) {
      const Noticed n = noticed(page);
      if (n == Noticed::no || (n == Noticed::by_home_only && push.contains(page))) continue;
      if (taken++ == kMaxPages) return;
      f(page);
    }
}

void BarrierUpdates::wait_all() {
  for (Request& r : requests_) r.wait();
  requests_.clear();
  for (Request& r : sends_) r.wait();
  sends_.clear();
}

void BarrierUpdates::finish(std::uint64_t barrier, const std::vector<int>& subscribers,
                            const std::vector<int>& renewers, const std::vector<int>& pushers,
                            bool failed, const BytesOf& bytes_of) {
  barrier_ = barrier;
  // A push has at most the pages of the runs its home held of this rank's
  // (last_pages, as of the last barrier): its receives go first.
  for (int h : pushers) {
    Peer& home = peers_[static_cast<std::size_t>(h)];
    if (home.push_rode) continue;
    home.push_in.words.resize(list_words(std::min(home.last_pages, kMaxPages)));
    requests_.push_back(
        messaging_.receive_agreed(h, key(kPush), home.push_in.words.data(),
                                  home.push_in.words.size() * sizeof(std::uint64_t)));
  }
  for (Peer& p : peers_) {
    p.last_pages = 0;
    p.held.clear();  // a home forgets the runs of a reader that did not subscribe
  }
  for (const Subscription& s : subscriptions_) {
    Peer& home = peers_[static_cast<std::size_t>(s.home)];
    home.last_pages = s.pages;
    home.held.assign(outgoing_.begin() + static_cast<std::ptrdiff_t>(s.begin),
                     outgoing_.begin() + static_cast<std::ptrdiff_t>(s.end));
  }
  // As a home: readers that did not subscribe lose their runs; new runs
  // replace the old.
  for (std::size_t r = 0, next = 0; r < peers_.size(); ++r) {
    const bool subscribed = next < subscribers.size() && subscribers[next] == static_cast<int>(r);
    if (subscribed)
      ++next;
    else
      peers_[r].standing.clear();
  }
  for (int r : renewers) {
    Peer& reader = peers_[static_cast<std::size_t>(r)];
    reader.standing.resize(2 * kMaxRuns);
    requests_.push_back(messaging_.receive_agreed(r, key(kSubscription), reader.standing.data(),
                                                  reader.standing.size() * sizeof(std::uint64_t)));
  }
  // Each message's length comes from its request (pushes first, as posted).
  std::vector<Request> arrived;
  arrived.swap(requests_);
  std::size_t i = 0;
  for (int h : pushers) {
    const Peer& home = peers_[static_cast<std::size_t>(h)];
    if (home.push_rode) continue;
    Request& request = arrived[i++];
    request.wait();
    check_push(h, home.push_in.count(), request.message().size);
  }
  for (int r : renewers) {
    Request& request = arrived[i++];
    request.wait();
    const std::size_t size = request.message().size;
    if (size == 0 || size % (2 * sizeof(std::uint64_t)) != 0)
      throw Error(Errc::transport, transport_.rank(),
                  "Dsm::barrier: rank " + std::to_string(r) + " sent a subscription of " +
                      std::to_string(size) + " bytes, which is no list of runs");
    peers_[static_cast<std::size_t>(r)].standing.resize(size / sizeof(std::uint64_t));
  }
  arrived.clear();
  if (failed) return wait_all();  // no late answers

  // As a home: a late answer to each subscriber that needs one.
  for (int r : subscribers) {
    Peer& reader = peers_[static_cast<std::size_t>(r)];
    scratch_.clear();
    late_pages(reader.standing.data(), reader.standing.size(), reader.push_out,
               [&](std::uint64_t page) { scratch_.push_back(page); });
    if (scratch_.empty()) continue;
    fill(reader.late_out, scratch_, bytes_of);
    pages_sent_ += reader.late_out.count();
    requests_.push_back(
        messaging_.send_agreed(r, key(kLate), reader.late_out.words.data(),
                               reader.late_out.words.size() * sizeof(std::uint64_t)));
  }
  // As a reader: the late answers the homes send, each exactly the pages
  // this rank expects (a larger one fails as truncated).
  const std::size_t sends = requests_.size();
  for (const Subscription& s : subscriptions_) {
    Peer& home = peers_[static_cast<std::size_t>(s.home)];
    std::size_t pages = 0;
    late_pages(outgoing_.data() + s.begin, s.end - s.begin, home.push_in,
               [&](std::uint64_t) { ++pages; });
    if (pages == 0) continue;
    home.late_in.words.resize(list_words(pages));
    requests_.push_back(
        messaging_.receive_agreed(s.home, key(kLate), home.late_in.words.data(),
                                  home.late_in.words.size() * sizeof(std::uint64_t)));
  }
  std::size_t k = sends;
  for (const Subscription& s : subscriptions_) {
    const PageList& late = peers_[static_cast<std::size_t>(s.home)].late_in;
    if (late.words.empty()) continue;
    Request& request = requests_[k++];
    request.wait();
    if (request.message().size != late.words.size() * sizeof(std::uint64_t) ||
        late.words.size() != list_words(late.count()))
      throw Error(Errc::transport, transport_.rank(),
                  "Dsm::barrier: rank " + std::to_string(s.home) +
                      " sent a late answer of other pages than subscribed and noticed");
  }
  wait_all();
}

void BarrierUpdates::for_each_update(
    const std::function<void(std::size_t, const std::byte*)>& f) const {
  for (const Peer& home : peers_)
    for (std::size_t i = 0; i < home.late_in.count(); ++i)
      f(home.late_in.page(i), home.late_in.bytes(i, page_size_));
  for (const Peer& home : peers_)
    for (std::size_t i = 0; i < home.push_in.count(); ++i)
      if (noticed(home.push_in.page(i)) == Noticed::by_home_only)
        f(home.push_in.page(i), home.push_in.bytes(i, page_size_));
}

void BarrierUpdates::forget(bool resend) {
  requests_.clear();  // a request still in flight is cancelled
  sends_.clear();
  if (resend)
    for (Peer& p : peers_) p.held.clear();
  subscriptions_.clear();
  outgoing_.clear();
  subscribed_.clear();
  awaited_.clear();
  for (Peer& p : peers_) {
    p.push_rides = p.push_rode = false;
    p.push_out.words.clear();
    p.push_in.words.clear();
    p.late_out.words.clear();
    p.late_in.words.clear();
  }
}

}  // namespace mpidsm::detail
