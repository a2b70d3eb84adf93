// Home migration (MPIDSM_HOME_MIGRATION, src/dsm/protocol/home_moves.hpp):
// a page one rank alone writes moves home to it at a barrier, every rank
// agrees on the new home, no byte is lost or goes stale across the move, and
// pins, a second thread, several writers and mixed modes keep pages where
// they are.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

class DsmHomeMoves : public DsmTest {
 protected:
  void TearDown() override { dsm_->set_home_migration(HomeMigration::adaptive); }

  int me() const { return runtime_->rank(); }
  int ranks() const { return runtime_->size(); }
  std::size_t page() const { return dsm_->page_size(); }
  // The byte rank `writer` stores at offset `i` of a page in round `round`.
  static std::uint8_t value(int writer, int round, std::size_t i) {
    return static_cast<std::uint8_t>(writer * 31 + round * 7 + static_cast<int>(i % 251) + 1);
  }
  // Pages homed round robin; this rank writes the pages homed on the next
  // rank: `round`'s value into every byte.
  void write_next_ranks_pages(std::uint8_t* pages, std::size_t count, int round) {
    for (std::size_t p = 0; p < count; ++p)
      if (static_cast<int>(p % static_cast<std::size_t>(ranks())) == (me() + 1) % ranks())
        for (std::size_t i = 0; i < page(); ++i) pages[p * page() + i] = value(me(), round, i);
  }
  // Rounds first..last of write_next_ranks_pages, a barrier after each.
  void write_rounds(std::uint8_t* pages, std::size_t count, int first, int last) {
    for (int round = first; round <= last; ++round) {
      write_next_ranks_pages(pages, count, round);
      dsm_->barrier();
    }
  }
  // Every page holds `round`'s bytes of the rank before its placed home.
  void expect_written(const std::uint8_t* pages, std::size_t count, int round) {
    std::size_t wrong = 0;
    for (std::size_t p = 0; p < count; ++p) {
      const int writer =
          (static_cast<int>(p % static_cast<std::size_t>(ranks())) + ranks() - 1) % ranks();
      for (std::size_t i = 0; i < page(); ++i)
        wrong += pages[p * page() + i] != value(writer, round, i);
    }
    EXPECT_EQ(wrong, 0u) << "rank " << me() << ", round " << round;
  }
  // How many of `count` pages dealt round robin from rank 0 are placed on
  // `rank`.
  std::size_t placed_on(int rank, std::size_t count) const {
    const auto n = static_cast<std::size_t>(ranks());
    return count / n + (static_cast<std::size_t>(rank) < count % n ? 1 : 0);
  }
  // Ranks agree on every page's home; returns how many pages are homed at
  // the rank that writes them.
  std::size_t homed_at_writer(const std::uint8_t* pages, std::size_t count) {
    std::size_t moved = 0;
    for (std::size_t p = 0; p < count; ++p) {
      const int home = dsm_->home_of(pages + p * page());
      int low = home, high = home;
      MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_EQ(low, high) << "ranks disagree on the home of page " << p;
      const int writer =
          (static_cast<int>(p % static_cast<std::size_t>(ranks())) + ranks() - 1) % ranks();
      moved += home == writer;
    }
    return moved;
  }
};

TEST_F(DsmHomeMoves, APageOneRankAloneWritesMovesToItAndStaysCoherent) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(HomeMigration::on);
  constexpr std::size_t kPages = 16;
  auto* pages = d.allocate<std::uint8_t>(kPages * page(), Placement::cyclic(1));
  const DsmStats before = d.stats();
  // A copy taken before its home's release makes the home notice the page
  // ("possibly written": it was writable without faults when copied), so
  // such pages move after the second interval, the others after the first.
  write_next_ranks_pages(pages, kPages, 1);
  d.barrier();
  expect_written(pages, kPages, 1);  // every rank reads every page (copies everywhere)
  d.barrier();
  write_next_ranks_pages(pages, kPages, 2);
  d.barrier();
  EXPECT_EQ(homed_at_writer(pages, kPages), kPages);
  expect_written(pages, kPages, 2);
  const DsmStats moved = d.stats();
  // Each rank gained the pages it writes, those placed on the next rank,
  // and lost those placed on it (16 pages dealt to 3 ranks: 6, 5, 5).
  EXPECT_EQ(moved.homes_gained - before.homes_gained, placed_on((me() + 1) % ranks(), kPages));
  EXPECT_EQ(moved.homes_lost - before.homes_lost, placed_on(me(), kPages));
  // The new homes write again: readers that copied the pages see the bytes.
  d.barrier();
  for (int round = 3; round <= 5; ++round) {
    write_next_ranks_pages(pages, kPages, round);
    d.barrier();
    expect_written(pages, kPages, round);
    d.barrier();
  }
  // A page homed at its writer needs no twin or diff: home writes.
  const DsmStats after = d.stats();
  EXPECT_EQ(after.diffs, moved.diffs) << "writes after the move were diffed";
  EXPECT_EQ(homed_at_writer(pages, kPages), kPages);
  d.free(pages);
}

// Written but left unchanged (the same bytes again): still the page's only
// writer, so the page moves, and nobody drops a good copy for it.
TEST_F(DsmHomeMoves, UnchangedWritesCountAsWrites) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(HomeMigration::on);
  constexpr std::size_t kPages = 8;
  auto* pages = d.allocate<std::uint8_t>(kPages * page(), Placement::cyclic(1));
  for (int round = 1; round <= 2; ++round) {
    for (std::size_t p = 0; p < kPages; ++p)
      if (static_cast<int>(p % static_cast<std::size_t>(ranks())) == (me() + 1) % ranks())
        pages[p * page()] = 0;  // a store of the value already there
    d.barrier();
  }
  EXPECT_EQ(homed_at_writer(pages, kPages), kPages);
  d.free(pages);
}

// A stream of write misses fetches the pages after it with twins, ahead of
// their writes (MPIDSM_PREFETCH_PAGES). One the stream never reached is
// unchanged and was not written: its home stays. (Counted as a write, it
// moved to whichever rank streamed past it: across 2+1+1 hosts a page then
// went to the node peer of its only writer in 2 of 120 runs of
// MemoryAllocatedAfterMovesReadsZero, as that peer's stream reached it.)
TEST_F(DsmHomeMoves, PagesTwinnedAheadOfAWriteStreamButNotWrittenKeepTheirHome) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(HomeMigration::on);
  constexpr std::size_t kPages = 6, kWritten = 3;
  const int home = ranks() - 1;
  auto* pages = d.allocate<std::uint8_t>(kPages * page(), Placement::on(home));
  const DsmStats before = d.stats();
  // As in the first test, pages copied before their home's release move
  // after the second interval.
  for (int round = 1; round <= 2; ++round) {
    if (me() == 0) std::memset(pages, round, kWritten * page());
    d.barrier();
  }
  if (me() == 0) {
    ASSERT_GT(d.stats().prefetched, before.prefetched) << "no page fetched ahead: nothing to test";
  }
  for (std::size_t p = 0; p < kPages; ++p)
    EXPECT_EQ(d.home_of(pages + p * page()), p < kWritten ? 0 : home)
        << "rank " << me() << ", page " << p;
  d.barrier();
  d.free(pages);
}

// Ranks other than the home write different bytes of the same pages: the
// pages stay home, and every byte lands. (A home's own writes before a copy
// was taken are in the copy, so with two ranks a page may move to the
// other: only the bytes are checked then.)
TEST_F(DsmHomeMoves, PagesWrittenBySeveralRanksKeepTheirHome) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(HomeMigration::on);
  auto* shared = d.allocate<std::uint8_t>(2 * page(), Placement::on(0));
  const bool home_writes = ranks() == 2;
  const auto writers = static_cast<std::size_t>(home_writes ? ranks() : ranks() - 1);
  auto writer_of = [&](std::size_t i) { return static_cast<int>(i % writers) + !home_writes; };
  for (int round = 1; round <= 3; ++round) {
    for (std::size_t i = 0; i < 2 * page(); ++i)
      if (writer_of(i) == me()) shared[i] = value(me(), round, i);
    d.barrier();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < 2 * page(); ++i)
      wrong += shared[i] != value(writer_of(i), round, i);
    EXPECT_EQ(wrong, 0u);
    if (!home_writes) {
      EXPECT_EQ(d.home_of(shared), 0);
    }
    d.barrier();
  }
  d.free(shared);
}

TEST_F(DsmHomeMoves, AdaptiveWaitsForTheSameOnlyWriterTwiceAndOffNeverMoves) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  constexpr std::size_t kPages = 8;
  d.set_home_migration(HomeMigration::off);
  auto* pages = d.allocate<std::uint8_t>(kPages * page(), Placement::cyclic(1));
  write_rounds(pages, kPages, 1, 3);
  EXPECT_EQ(homed_at_writer(pages, kPages), 0u);
  d.set_home_migration(HomeMigration::adaptive);
  write_next_ranks_pages(pages, kPages, 4);
  d.barrier();
  EXPECT_EQ(homed_at_writer(pages, kPages), 0u) << "adaptive moved after one interval";
  write_next_ranks_pages(pages, kPages, 5);
  d.barrier();
  EXPECT_EQ(homed_at_writer(pages, kPages), kPages);
  expect_written(pages, kPages, 5);
  d.barrier();
  d.free(pages);
}

// A rank that leaves a mode stricter than the others' decides the barrier.
TEST_F(DsmHomeMoves, TheStrictestModeAnyRankSetWins) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(me() == 1 ? HomeMigration::off : HomeMigration::on);
  constexpr std::size_t kPages = 8;
  auto* pages = d.allocate<std::uint8_t>(kPages * page(), Placement::cyclic(1));
  write_next_ranks_pages(pages, kPages, 1);
  d.barrier();
  EXPECT_EQ(homed_at_writer(pages, kPages), 0u);
  expect_written(pages, kPages, 1);
  d.barrier();
  d.free(pages);
}

// A page in a transfer (DsmAccess) cannot change hands: a rank with a pin
// votes against every move of the barrier; once released, pages move.
TEST_F(DsmHomeMoves, APinnedPageAnywhereHoldsEveryMoveBack) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(HomeMigration::on);
  constexpr std::size_t kPages = 8;
  auto* pages = d.allocate<std::uint8_t>(kPages * page(), Placement::cyclic(1));
  auto* other = d.allocate<std::uint8_t>(page(), Placement::on(0));
  {
    std::optional<DsmAccess> held;
    if (me() == 0) held.emplace(d.make_accessible(other, 1, Access::read));
    write_next_ranks_pages(pages, kPages, 1);
    d.barrier();
    EXPECT_EQ(homed_at_writer(pages, kPages), 0u);
  }
  // As in the first test: after two intervals every page has moved.
  write_rounds(pages, kPages, 2, 3);
  EXPECT_EQ(homed_at_writer(pages, kPages), kPages);
  expect_written(pages, kPages, 3);
  d.barrier();
  d.free(other);
  d.free(pages);
}

// A lock-protected counter on a page that moved home stays exact.
TEST_F(DsmHomeMoves, LocksOnAMovedPageStayExact) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(HomeMigration::on);
  auto* counter = d.allocate<long>(page() / sizeof(long), Placement::on(0));
  for (long start : {999, 1000}) {
    if (me() == ranks() - 1) *counter = start;  // its only writer: the page moves there
    d.barrier();
  }
  EXPECT_EQ(d.home_of(counter), ranks() - 1);
  constexpr int kIncrements = 50;
  for (int i = 0; i < kIncrements; ++i) {
    d.lock(3);
    ++*counter;
    d.unlock(3);
  }
  d.barrier();
  EXPECT_EQ(*counter, 1000 + kIncrements * ranks());
  d.barrier();
  d.free(counter);
}

// Freed after moves and allocated again: zero everywhere, whichever rank
// held the bytes as home.
TEST_F(DsmHomeMoves, MemoryAllocatedAfterMovesReadsZero) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(HomeMigration::on);
  constexpr std::size_t kPages = 8;
  auto* pages = d.allocate<std::uint8_t>(kPages * page(), Placement::cyclic(1));
  write_rounds(pages, kPages, 1, 3);  // the last round: the new homes write
  EXPECT_EQ(homed_at_writer(pages, kPages), kPages);
  d.free(pages);
  auto* again = d.allocate<std::uint8_t>(kPages * page(), Placement::cyclic(1));
  ASSERT_EQ(again, pages);
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < kPages * page(); ++i) nonzero += again[i] != 0;
  EXPECT_EQ(nonzero, 0u);
  d.barrier();
  d.free(again);
}

// A page its home rewrote in every interval stays writable there, its
// writes found by comparison (hot_home_pages.hpp); once another rank
// alone writes it, the comparison would take that rank's diffs for the
// home's writes. The other rank's notice sends the page back to faults,
// and it moves to its new only writer.
TEST_F(DsmHomeMoves, APageItsHomeStopsRewritingMovesToItsNewOnlyWriter) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(HomeMigration::on);
  auto* word = d.allocate<long>(page() / sizeof(long), Placement::on(0));
  d.barrier();
  for (long round = 1; round <= 6; ++round) {  // rank 0 writes, rank 1 reads
    if (me() == 0) word[0] = round;
    d.barrier();
    if (me() == 1) {
      EXPECT_EQ(word[0], round);
    }
    d.barrier();
  }
  EXPECT_EQ(d.home_of(word), 0);
  int moved_after = 0;
  for (long round = 7; round <= 16 && moved_after == 0; ++round) {  // rank 1 alone writes
    if (me() == 1) word[0] = round;
    // Its diff reaches the home before the home's release in the barrier
    // compares the page (without the sync, only sometimes).
    if (me() <= 1) {
      const int other = 1 - me();
      d.sync_with({&other, 1});
    }
    d.barrier();
    EXPECT_EQ(word[0], round) << "rank " << me();
    if (d.home_of(word) == 1) moved_after = static_cast<int>(round - 6);
    d.barrier();  // read before the next write
  }
  EXPECT_GT(moved_after, 0) << "rank " << me() << ": the page never moved to its only writer";
  EXPECT_LE(moved_after, 4) << "rank " << me();
  d.barrier();
  d.free(word);
}

// A second thread that used the DSM makes its rank vote against moves from
// then on: its writes during a barrier could reach the old home after a move.
// Last: the vote is for the Dsm's lifetime.
TEST_F(DsmHomeMoves, ZZ_ASecondThreadOfAnyRankStopsMoves) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  Dsm& d = *dsm_;
  d.set_home_migration(HomeMigration::on);
  constexpr std::size_t kPages = 8;
  auto* pages = d.allocate<std::uint8_t>(kPages * page(), Placement::cyclic(1));
  if (me() == 0) std::thread([&] { d.prefetch(pages, page()); }).join();
  write_rounds(pages, kPages, 1, 3);
  EXPECT_EQ(homed_at_writer(pages, kPages), 0u);
  expect_written(pages, kPages, 3);
  d.barrier();
  d.free(pages);
}

}  // namespace
}  // namespace mpidsm
