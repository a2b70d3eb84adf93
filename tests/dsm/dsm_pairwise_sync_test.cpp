// The pairwise sync's protocol driven without MPI or UCX: two ranks' syncs
// with their messages handed across by the test, and what each acquire
// drops, installs from a push, or fetches afresh.
#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "dsm/protocol/pairwise_sync.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

constexpr std::size_t kPages = 8;
constexpr std::size_t kPageSize = 64;

// One rank's pages: page p is homed on rank p % 2; its home's bytes are all
// 10 * p + writes (a write changes them).
class Pages final : public PairwiseSync::PageSide {
 public:
  explicit Pages(int rank) : rank_(rank) {
    for (std::size_t p = 0; p < kPages; ++p) write(p);
  }
  bool copied(std::size_t page) const override { return home_of(page) != rank_; }
  int home_of(std::size_t page) const override { return static_cast<int>(page % 2); }
  const std::byte* home_bytes(std::size_t page) const override { return bytes_[page].data(); }
  bool used(std::size_t page) override { return !unused.count(page); }
  void invalidate(std::size_t page) override { invalidated.push_back(page); }
  void changed_at_home(std::size_t page) override { changed_here.push_back(page); }
  void install(std::size_t page, const std::byte* bytes) override {
    installed.emplace_back(page, static_cast<int>(bytes[0]));
  }
  void write(std::size_t page) {
    bytes_[page].fill(static_cast<std::byte>(10 * page + writes_[page]++));
  }

  std::set<std::size_t> unused;
  std::vector<std::size_t> invalidated;
  std::vector<std::size_t> changed_here;
  std::vector<std::pair<std::size_t, int>> installed;

 private:
  int rank_;
  std::array<std::array<std::byte, kPageSize>, kPages> bytes_{};
  std::array<int, kPages> writes_{};
};

struct Rank {
  explicit Rank(int r) : rank(r), sync(r, 2, kPages, kPageSize), pages(r) {}
  // Releases `page` (this rank wrote it).
  void release(std::size_t page) {
    const auto notice = static_cast<std::int64_t>(page);
    sync.record_release(notice);
    since_barrier.push_back(notice);
    if (pages.home_of(page) == rank) pages.write(page);
  }
  int rank;
  PairwiseSync sync;
  Pages pages;
  std::vector<std::int64_t> since_barrier;
  std::vector<std::size_t> refresh;
};

// One sync_with between ranks 0 and 1, messages handed across.
void sync_pair(Rank& a, Rank& b) {
  const int to_b[] = {1}, to_a[] = {0};
  for (Rank* r : {&a, &b}) {
    r->sync.check_peers(r == &a ? std::span<const int>(to_b) : std::span<const int>(to_a));
    r->sync.begin();
  }
  a.sync.compose(to_b, 0, a.since_barrier, a.pages);
  b.sync.compose(to_a, 0, b.since_barrier, b.pages);
  ASSERT_TRUE(a.sync.accept(0, b.sync.outgoing(0)));
  ASSERT_TRUE(b.sync.accept(0, a.sync.outgoing(0)));
  a.sync.acquire(to_b, a.pages, a.refresh);
  b.sync.acquire(to_a, b.pages, b.refresh);
}

TEST(PairwiseSync, PeersMustBeOtherRanksListedOnce) {
  PairwiseSync sync(0, 4, kPages, kPageSize);
  auto code_of = [&](std::vector<int> peers) -> std::optional<Errc> {
    try {
      sync.check_peers(peers);
    } catch (const Error& e) {
      return e.code();
    }
    return std::nullopt;
  };
  EXPECT_EQ(code_of({1, 3}), std::nullopt);
  EXPECT_EQ(code_of({0}), Errc::invalid_argument) << "this rank itself";
  EXPECT_EQ(code_of({2, 2}), Errc::invalid_argument) << "listed twice";
  EXPECT_EQ(code_of({4}), Errc::invalid_rank);
  EXPECT_EQ(code_of({-1}), Errc::invalid_rank);
}

TEST(PairwiseSync, AnUnusedPageIsDroppedAndAUsedOneFetched) {
  Rank a(0), b(1);
  a.release(2);  // homed on rank 0
  a.release(4);
  b.pages.unused.insert(4);
  sync_pair(a, b);
  EXPECT_EQ(b.pages.invalidated, std::vector<std::size_t>{4});
  EXPECT_EQ(b.refresh, std::vector<std::size_t>{2}) << "no push was asked for yet";
  EXPECT_TRUE(b.pages.installed.empty());
  EXPECT_TRUE(a.refresh.empty() && a.pages.invalidated.empty()) << "b released nothing";
}

TEST(PairwiseSync, APeersChangeToAPageHomedHereReachesTheHome) {
  Rank a(0), b(1);
  b.release(2);  // homed on rank 0: b's diff is in a's copy
  b.release(3);  // homed on rank 1
  sync_pair(a, b);
  EXPECT_EQ(a.pages.changed_here, std::vector<std::size_t>{2});
  EXPECT_EQ(a.refresh, std::vector<std::size_t>{3}) << "a's copy of page 3 is fetched afresh";
  EXPECT_TRUE(b.pages.changed_here.empty()) << "a released nothing";
}

TEST(PairwiseSync, AHomePushesWhatTheReaderUsedLastTime) {
  Rank a(0), b(1);
  a.release(2);
  sync_pair(a, b);  // b fetches page 2 and asks for it to be pushed next time
  b.refresh.clear();
  sync_pair(a, b);  // b's request reaches a
  a.release(2);
  sync_pair(a, b);  // a pushes page 2 with its notice
  ASSERT_EQ(b.pages.installed.size(), 1u);
  EXPECT_EQ(b.pages.installed[0], (std::pair<std::size_t, int>{2, 22}))
      << "the bytes of a's second write to page 2";
  EXPECT_TRUE(b.refresh.empty());
}

TEST(PairwiseSync, APushThatMayLackALaterChangeIsNotInstalled) {
  Rank a(0), b(1);
  a.release(2);
  sync_pair(a, b);
  b.refresh.clear();
  sync_pair(a, b);
  a.release(2);
  // Another rank's change to page 2 reached b after b's last message to a:
  // a's copy, taken as a entered this sync, may lack it.
  b.sync.record_change(2);
  sync_pair(a, b);
  EXPECT_TRUE(b.pages.installed.empty());
  EXPECT_EQ(b.refresh, std::vector<std::size_t>{2});
}

TEST(PairwiseSync, AFailedReleaseSendsItsStatusAndNoNotices) {
  Rank a(0), b(1);
  a.release(2);
  const int to_b[] = {1}, to_a[] = {0};
  a.sync.begin();
  b.sync.begin();
  a.sync.compose(to_b, static_cast<std::int64_t>(Errc::no_memory), a.since_barrier, a.pages);
  b.sync.compose(to_a, 0, b.since_barrier, b.pages);
  ASSERT_TRUE(b.sync.accept(0, a.sync.outgoing(0)));
  EXPECT_EQ(b.sync.status(0), static_cast<std::int64_t>(Errc::no_memory));
  b.sync.acquire(to_a, b.pages, b.refresh);
  EXPECT_TRUE(b.refresh.empty() && b.pages.invalidated.empty());
}

TEST(PairwiseSync, AMalformedMessageIsRefused) {
  PairwiseSync sync(0, 2, kPages, kPageSize);
  const int peers[] = {1};
  Pages pages(0);
  sync.compose(peers, 0, {}, pages);
  const std::vector<std::int64_t> short_message{0, 5};
  EXPECT_FALSE(sync.accept(0, short_message));
  std::vector<std::int64_t> claims_a_push(sync.outgoing(0).begin(), sync.outgoing(0).end());
  claims_a_push[SyncMessage::kPushed] = 1;  // nothing was asked for
  claims_a_push.resize(claims_a_push.size() + 1 + kPageSize / 8);
  EXPECT_FALSE(sync.accept(0, claims_a_push)) << "a push nobody asked for";
}

}  // namespace
}  // namespace mpidsm::detail
