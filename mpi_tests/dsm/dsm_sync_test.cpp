// Pairwise synchronisation (Dsm::sync_with): what a peer wrote before its
// matching call is visible after it, through every path a page takes (left
// to fault back, fetched afresh in the call, pushed by its home with the
// notices), and bad peer lists and failed releases are errors that leave
// the runtime usable.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "dsm/test_hooks.hpp"
#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

// The ranks before and after `me` in a chain of `n` (a 1-D stencil's neighbours).
std::vector<int> chain_neighbours(int me, int n) {
  std::vector<int> peers;
  if (me > 0) peers.push_back(me - 1);
  if (me + 1 < n) peers.push_back(me + 1);
  return peers;
}

void sync(Dsm& d, std::initializer_list<int> peers) {
  d.sync_with({peers.begin(), peers.size()});
}

// body(page, round) for rounds 1 to 12, with `page` a page homed at rank 0.
template <class Body>
void rounds_on_a_page_of_rank_0(Dsm& d, Body&& body) {
  long* page = d.allocate<long>(d.page_size() / sizeof(long), Placement::on(0));
  d.barrier();
  for (long round = 1; round <= 12; ++round) body(page, round);
  d.barrier();
  d.free(page);
}

// Remote homes are reached through UCX (not mapped here): a page a rank used
// and a peer changed must then be brought up to date inside the sync.
bool homes_through_ucx() {
  const char* direct = std::getenv("MPIDSM_DIRECT_ACCESS");
  return direct && std::string(direct) == "off";
}

// A 1-D stencil over pages: each rank rewrites its block every round and
// syncs with its neighbours, which read the block's edge pages. Halfway, a
// barrier (after which the syncs owe nothing from before it).
TEST_F(DsmTest, NeighboursSeeEachOthersWritesAfterEverySync) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t page_longs = d.page_size() / sizeof(long), block = 4 * page_longs;
  long* grid = d.allocate<long>(block * static_cast<std::size_t>(n));
  const std::vector<int> peers = chain_neighbours(me, n);
  const std::uint64_t refetches_before = d.stats().sync_refetches;
  d.barrier();
  constexpr int rounds = 40;
  for (int round = 1; round <= rounds; ++round) {
    long* mine = grid + static_cast<std::size_t>(me) * block;
    for (std::size_t i = 0; i < block; ++i) mine[i] = round * 100000 + me * 1000 + long(i % 997);
    d.sync_with(peers);
    for (int peer : peers) {
      // The edge page next to this rank's block, and one word elsewhere in the block.
      const long* theirs = grid + static_cast<std::size_t>(peer) * block;
      const std::size_t edge = peer < me ? block - page_longs : 0;
      std::size_t wrong = 0;
      for (std::size_t i = edge; i < edge + page_longs; ++i)
        wrong += theirs[i] != round * 100000 + peer * 1000 + long(i % 997);
      EXPECT_EQ(wrong, 0u) << "rank " << me << " reading rank " << peer << ", round " << round;
      EXPECT_EQ(theirs[block / 2], round * 100000 + peer * 1000 + long((block / 2) % 997));
    }
    // Nobody rewrites a block before its readers have read it.
    d.sync_with(peers);
    if (round == rounds / 2) d.barrier();
  }
  if (homes_through_ucx() && n > 1) {
    EXPECT_GT(d.stats().sync_refetches, refetches_before);
  }
  d.barrier();
  d.free(grid);
}

// The previous and next ranks of a ring of `n` (one of them when n is 2).
std::vector<int> ring_neighbours(int me, int n) {
  std::vector<int> ring;
  if (n > 1) ring.push_back((me + n - 1) % n);
  if (n > 2) ring.push_back((me + 1) % n);
  return ring;
}

// A page per rank, homed at that rank: this rank's, and the previous rank's
// (which this rank reads).
struct PagePerRank {
  PagePerRank(Dsm& d, int me, int n)
      : d(d),
        page_longs(d.page_size() / sizeof(long)),
        pages(d.allocate<long>(page_longs * static_cast<std::size_t>(n))),
        mine(pages + page_longs * static_cast<std::size_t>(me)),
        previous(pages + page_longs * static_cast<std::size_t>((me + n - 1) % n)),
        policy(d.coherence_of(pages)) {}
  ~PagePerRank() { d.free(pages); }
  Dsm& d;
  const std::size_t page_longs;
  long* const pages;
  long* const mine;
  const long* const previous;
  const Coherence policy;
};

// A page its home rewrites in every interval stays writable (its writes
// found by comparison at each release, not by a fault each), and its
// reader still sees every write; once the home stops writing, the page
// stops being noticed within two intervals; a write after that faults
// and is seen. Through syncs with the ring's neighbours, then barriers.
void home_page_rewritten_every_interval(Dsm& d, const Runtime& runtime,
                                        const std::function<void()>& synchronise) {
  const int me = runtime.rank(), n = runtime.size();
  const PagePerRank p(d, me, n);
  ASSERT_EQ(d.home_of(p.mine), me);
  d.barrier();
  constexpr long rounds = 30;
  // From round 10 on the reader's copy and the home's count of it have
  // settled (an adaptive copy is dropped at notices until its reader has
  // fetched it again twice, and while nobody holds a copy the page is
  // exclusive, shared again at the next fetch: one fault each time).
  constexpr long settled = 10;
  std::uint64_t faults_when_settled = 0;
  for (long round = 1; round <= rounds; ++round) {
    if (round == settled) faults_when_settled = d.stats().write_faults;
    p.mine[0] = round;                                                       // the same word...
    p.mine[p.page_longs - 1 - static_cast<std::size_t>(round) % 8] = round;  // ...and others
    synchronise();
    EXPECT_EQ(p.previous[0], round) << "rank " << me;
    EXPECT_EQ(p.previous[p.page_longs - 1 - static_cast<std::size_t>(round) % 8], round);
    synchronise();  // nobody writes before its reader has read
  }
  // Under single_writer every write faults (its races are found there).
  // Under invalidate the reader's copy comes and goes, and the home's count
  // of it with it: the page is exclusive for a while, then shared and
  // tracked by a fault again, as often as the timing of the drops has it.
  const std::uint64_t faults = d.stats().write_faults - faults_when_settled;
  if (p.policy != Coherence::single_writer && p.policy != Coherence::invalidate) {
    EXPECT_EQ(faults, 0u) << "rank " << me << ": the page rewritten in every interval still faults";
  }
  // The home stops writing: after two intervals, nothing about the page
  // reaches its reader any more.
  for (int idle = 0; idle < 2; ++idle) {
    synchronise();
    EXPECT_EQ(p.previous[0], rounds);
  }
  const DsmStats quiet = d.stats();
  for (int idle = 0; idle < 6; ++idle) {
    synchronise();
    EXPECT_EQ(p.previous[0], rounds);
  }
  // Under invalidate the copy that comes and goes makes the page exclusive
  // and shared again, noticed as possibly written each time, written or not.
  const bool copies_stay = p.policy != Coherence::invalidate;
  if (copies_stay) {
    EXPECT_EQ(d.stats().invalidations, quiet.invalidations) << "rank " << me;
    EXPECT_EQ(d.stats().sync_refetches, quiet.sync_refetches) << "rank " << me;
    EXPECT_EQ(d.stats().barrier_refetches, quiet.barrier_refetches) << "rank " << me;
  }
  // Read-only again: the next write faults, and is seen.
  p.mine[1] = -1;
  if (n > 1 && copies_stay) {
    EXPECT_EQ(d.stats().write_faults, quiet.write_faults + 1) << "rank " << me;
  }
  synchronise();
  EXPECT_EQ(p.previous[1], -1) << "rank " << me;
  d.barrier();
}

TEST_F(DsmTest, AHomePageRewrittenEveryIntervalStaysWritableThroughSyncs) {
  const std::vector<int> ring = ring_neighbours(runtime_->rank(), runtime_->size());
  home_page_rewritten_every_interval(*dsm_, *runtime_, [&] { dsm_->sync_with(ring); });
}

TEST_F(DsmTest, AHomePageRewrittenEveryIntervalStaysWritableThroughBarriers) {
  home_page_rewritten_every_interval(*dsm_, *runtime_, [&] { dsm_->barrier(); });
}

// A page its home rewrites in every interval with the bytes it already
// holds (a stencil's boundary the heat has not reached): once settled, its
// reader is told nothing of it, however the page goes between hot (its
// snapshot finds no change) and read-only (its writes fault, and compare
// unchanged with the snapshot it cooled with). Then a real change is seen.
void home_page_rewritten_unchanged(Dsm& d, const Runtime& runtime,
                                   const std::function<void()>& synchronise) {
  const int me = runtime.rank(), n = runtime.size();
  const PagePerRank p(d, me, n);
  ASSERT_EQ(d.home_of(p.mine), me);
  // Under single_writer every write faults and is noticed (its races are
  // found there); under invalidate the copy that comes and goes makes the
  // page exclusive and shared again, noticed as possibly written each time.
  const bool settles = p.policy != Coherence::single_writer && p.policy != Coherence::invalidate;
  d.barrier();
  constexpr long rounds = 40, settled = 10;
  DsmStats at_settled{};
  for (long round = 1; round <= rounds; ++round) {
    if (round == settled) at_settled = d.stats();
    for (std::size_t i = 0; i < p.page_longs; i += 64) p.mine[i] = 7;  // 0 to 7 once, then 7 again
    synchronise();
    EXPECT_EQ(p.previous[0], 7) << "rank " << me << ", round " << round;
    synchronise();  // nobody writes before its reader has read
  }
  const DsmStats now = d.stats();
  if (n > 1 && settles) {
    EXPECT_EQ(now.invalidations, at_settled.invalidations) << "rank " << me;
    EXPECT_EQ(now.sync_refetches, at_settled.sync_refetches) << "rank " << me;
    EXPECT_EQ(now.barrier_refetches, at_settled.barrier_refetches) << "rank " << me;
    EXPECT_EQ(now.updates_received, at_settled.updates_received) << "rank " << me;
  }
  p.mine[p.page_longs / 2] = -1;
  synchronise();
  EXPECT_EQ(p.previous[p.page_longs / 2], -1) << "rank " << me;
  d.barrier();
}

TEST_F(DsmTest, AHomePageRewrittenUnchangedIsNotNoticedThroughSyncs) {
  const std::vector<int> ring = ring_neighbours(runtime_->rank(), runtime_->size());
  home_page_rewritten_unchanged(*dsm_, *runtime_, [&] { dsm_->sync_with(ring); });
}

TEST_F(DsmTest, AHomePageRewrittenUnchangedIsNotNoticedThroughBarriers) {
  home_page_rewritten_unchanged(*dsm_, *runtime_, [&] { dsm_->barrier(); });
}

// Rank 0 rewrites a page it homes in every interval (so the page is hot:
// writable, its writes found by comparing it with a snapshot). Rank 1
// writes a word of it, then rank 0 writes that word back to the value its
// snapshot holds. The page's bytes then equal the snapshot, yet rank 0
// wrote: rank 1, which holds its own write in its copy, must see rank 0's.
// `turn(rank, body)` runs body on `rank`, then makes what it wrote visible
// to the next turn's rank (every rank calls it, in the same order).
void a_home_reverting_another_ranks_write_is_seen(
    Dsm& d, const std::function<void(int, const std::function<void()>&)>& turn) {
  long* page = d.allocate<long>(d.page_size() / sizeof(long), Placement::on(0));
  d.barrier();
  constexpr long kWarm = 8;  // intervals of rank 0 rewriting the page
  for (long round = 1; round <= kWarm; ++round) {
    turn(0, [&] { page[1] = round; });
    turn(1, [&] { EXPECT_EQ(page[1], round) << "round " << round; });
  }
  turn(1, [&] { page[0] = 1; });
  turn(0, [&] {
    EXPECT_EQ(page[0], 1);
    page[0] = 0;
  });
  turn(1, [&] { EXPECT_EQ(page[0], 0) << "rank 0 wrote back the value it held before"; });
  d.barrier();
  d.free(page);
}

TEST_F(DsmTest, AHomeRevertingAnotherRanksWriteIsSeenThroughLocks) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank();
  if (runtime_->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  constexpr std::size_t kLock = 3;
  a_home_reverting_another_ranks_write_is_seen(d, [&](int rank, const std::function<void()>& body) {
    if (me == rank) {
      d.lock(kLock);
      body();
      d.unlock(kLock);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // the next turn's lock comes after this one's
  });
}

TEST_F(DsmTest, AHomeRevertingAnotherRanksWriteIsSeenThroughSyncs) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank();
  if (runtime_->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  a_home_reverting_another_ranks_write_is_seen(d, [&](int rank, const std::function<void()>& body) {
    if (me == rank) body();
    if (me < 2) sync(d, {1 - me});
  });
}

TEST_F(DsmTest, AHomeRevertingAnotherRanksWriteIsSeenThroughBarriers) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank();
  if (runtime_->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  a_home_reverting_another_ranks_write_is_seen(d, [&](int rank, const std::function<void()>& body) {
    if (me == rank) body();
    d.barrier();
  });
}

// Rank 1 rewrites a page it homes at every other barrier (so the page would
// be hot), and rank 0 writes a word of it in the same intervals: the page
// is noticed at those barriers only. Every rank reads it in between, so
// each rank but its home loses its copy to one barrier per step. Were the
// home to keep the page hot, each of rank 0's notices would demote it, and
// the next barrier notice it, unwritten, to every copy: two losses a step.
// One loss more is allowed: the notice owed at the first demotion, which
// a slow rank (ASan) may see after the steps left unmeasured.
TEST_F(DsmTest, AHomePageAnotherRankWritesIsNoticedOnlyWhereWritten) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank();
  if (runtime_->size() < 2) GTEST_SKIP() << "needs a home and a second writer";
  const testing::FixedHomes fixed(d, *runtime_);
  constexpr int kHome = 1, kWriter = 0;
  constexpr long kSteps = 12, kWarm = 4;  // steps before those counted
  long* page =
      d.allocate<long>(d.page_size() / sizeof(long), Placement::on(kHome), Coherence::invalidate);
  d.barrier();
  std::uint64_t lost = 0;
  for (long step = 1; step <= kSteps; ++step) {
    const DsmStats before = d.stats();
    if (me == kHome) page[0] = step;
    if (me == kWriter) page[256] = step;
    d.barrier();
    EXPECT_EQ(page[0], step) << "rank " << me;
    EXPECT_EQ(page[256], step) << "rank " << me;
    d.barrier();
    if (step > kWarm) lost += d.stats().invalidations - before.invalidations;
  }
  if (me != kHome) {
    EXPECT_LE(lost, static_cast<std::uint64_t>(kSteps - kWarm + 1))
        << "rank " << me << ": the home noticed its page after intervals it did not write";
  }
  d.barrier();
  d.free(page);
}

// Rank 2 changes a page homed at rank 0 and syncs with rank 1; rank 0, the
// home, has already entered its sync with rank 1 and pushed its copy of
// the page, taken before rank 2's change arrived. Rank 1 syncs with rank 2
// first and reads the page, so the push must not hide rank 2's change.
TEST_F(DsmTest, AHomesPushNeverHidesAChangeAcquiredFromAnotherRank) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 3) GTEST_SKIP() << "needs 3 ranks";
  rounds_on_a_page_of_rank_0(d, [&](long* page, long round) {
    if (me == 0) {
      page[0] = round;
      sync(d, {1});
    } else if (me == 2) {
      usleep(20 * 1000);  // rank 0's copy for its push is taken by now
      page[1] = round;
      sync(d, {1});
    } else if (me == 1) {
      sync(d, {2});
      EXPECT_EQ(page[1], round) << "rank 2's write, just acquired, round " << round;
      sync(d, {0});
      EXPECT_EQ(page[0], round) << "rank 0's write, round " << round;
      EXPECT_EQ(page[1], round) << "rank 2's write, round " << round;
    }
    // The end of the round: nobody writes again before rank 1 has read.
    if (me == 1)
      sync(d, {0, 2});
    else if (me == 0 || me == 2)
      sync(d, {1});
  });
}

// Rank 1 writes part of a page homed at rank 0 while rank 0 writes another
// part and pushes the page: the push, taken before rank 1's diff arrived,
// must not undo rank 1's own write in its copy.
TEST_F(DsmTest, AHomesPushNeverUndoesThisRanksOwnWrite) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  rounds_on_a_page_of_rank_0(d, [&](long* page, long round) {
    if (me == 0) {
      page[0] = round;
      sync(d, {1});
      sync(d, {1});
    } else if (me == 1) {
      if (round % 2 == 0) {
        usleep(20 * 1000);  // rank 0's copy for its push is taken by now
        page[1] = round;
      }
      sync(d, {0});
      EXPECT_EQ(page[0], round);
      EXPECT_EQ(page[1], round - round % 2) << "this rank's own write, round " << round;
      sync(d, {0});
    }
  });
}

// More notices than the first message carries: the rest follow it. The
// pages are homed on every rank, and the reader holds copies of them all.
TEST_F(DsmTest, HundredsOfNoticesReachThePeer) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::size_t pages = 300, page_ints = d.page_size() / sizeof(int);
  int* data = d.allocate<int>(pages * page_ints, Placement::cyclic(1));
  d.barrier();
  long sum = 0;
  if (me == 1)
    for (std::size_t p = 0; p < pages; ++p) sum += data[p * page_ints];  // copies of every page
  EXPECT_EQ(sum, 0);
  d.barrier();
  for (int round = 1; round <= 3; ++round) {
    if (me == 0) {
      for (std::size_t p = 0; p < pages; ++p) data[p * page_ints + 7] = round * 1000 + int(p);
      sync(d, {1});
      sync(d, {1});
    } else if (me == 1) {
      sync(d, {0});
      std::size_t wrong = 0;
      for (std::size_t p = 0; p < pages; ++p)
        wrong += data[p * page_ints + 7] != round * 1000 + int(p);
      EXPECT_EQ(wrong, 0u) << "round " << round;
      sync(d, {0});
    }
  }
  d.barrier();
  d.free(data);
}

// Two threads of rank 0 sync with rank 1 at once: they take turns, and
// rank 1's two calls match them in the order they went.
TEST_F(DsmTest, ThreadsOfOneRankTakeTurnsToSync) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  long* words = d.allocate<long>(2, Placement::on(1));
  d.barrier();
  if (me == 0) {
    auto write_and_sync = [&](std::size_t i) {
      words[i] = 10 + static_cast<long>(i);
      sync(d, {1});
    };
    std::thread other(write_and_sync, 1);
    write_and_sync(0);
    other.join();
  } else if (me == 1) {
    sync(d, {0});
    sync(d, {0});
    EXPECT_EQ(words[0], 10);
    EXPECT_EQ(words[1], 11);
  }
  d.barrier();
  d.free(words);
}

// A peer that is not another rank, or is listed twice, is an error naming
// it, and nothing is sent: the next syncs still pair up.
TEST_F(DsmTest, BadPeerListsAreErrorsThatSendNothing) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  auto expect_error = [&](std::vector<int> peers, Errc code, const std::string& text) {
    try {
      d.sync_with(peers);
      ADD_FAILURE() << "no error for " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code);
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_error({n}, Errc::invalid_rank, "peer " + std::to_string(n) + " is not a rank");
  expect_error({-1}, Errc::invalid_rank, "peer -1 is not a rank");
  expect_error({me}, Errc::invalid_argument, "is this rank itself");
  if (n > 1) {
    const int other = (me + 1) % n;
    expect_error({other, other}, Errc::invalid_argument, "is listed twice");
  }
  d.sync_with({});  // a release, alone
  int* word = d.allocate<int>(1, Placement::on(0));
  d.barrier();
  if (n > 1 && me < 2) {
    if (me == 1) *word = 42;
    sync(d, {1 - me});
    EXPECT_EQ(*word, 42);
  }
  d.barrier();
  d.free(word);
}

// A release that fails at one rank fails the sync at both ends, naming that
// rank; its writes are not lost: the next sync delivers them.
TEST_F(DsmTest, AFailedReleaseFailsTheSyncAtBothEnds) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  int* words = d.allocate<int>(d.page_size() / sizeof(int), Placement::on(0));
  d.barrier();
  EXPECT_EQ(words[0], 0);  // rank 1 holds a copy
  d.barrier();
  if (me < 2) {
    if (me == 1) words[1] = 7;
    if (me == 0) {
      words[0] = 5;
      detail::inject_failure(detail::FailurePoint::sync_release);
    }
    try {
      sync(d, {1 - me});
      ADD_FAILURE() << "expected an error at rank " << me;
    } catch (const Error& e) {
      const std::string what = e.what();
      if (me == 0)
        EXPECT_NE(what.find("injected failure"), std::string::npos) << what;
      else
        EXPECT_NE(what.find("the release of rank 0 failed"), std::string::npos) << what;
    }
    EXPECT_EQ(words[1], 7);  // rank 1's release went ahead: rank 0 sees it
    sync(d, {1 - me});
    EXPECT_EQ(words[0], 5);
    EXPECT_EQ(words[1], 7);
  }
  d.barrier();
  d.free(words);
}

}  // namespace
}  // namespace mpidsm
