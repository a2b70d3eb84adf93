// Coherence policies (mpidsm::Coherence, docs/consistency.md "Coherence
// policies"): each allocation's policy is reported and counted; update and
// read_mostly keep their copies up to date at barriers, locks and flags
// where invalidate drops them; a read_mostly miss copies the
// pages after it; single_writer writes whole pages home, accepts writers a
// lock orders, and reports writers nothing ordered on every rank.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

constexpr Coherence kPolicies[] = {Coherence::adaptive, Coherence::invalidate, Coherence::update,
                                   Coherence::read_mostly, Coherence::single_writer};

class DsmPolicy : public DsmTest {
 protected:
  int me() const { return runtime_->rank(); }
  int ranks() const { return runtime_->size(); }
  std::size_t page() const { return dsm_->page_size(); }
};

TEST_F(DsmPolicy, EveryAllocationReportsAndCountsItsPolicy) {
  Dsm& d = *dsm_;
  std::vector<std::uint8_t*> blocks;
  for (std::size_t i = 0; i < std::size(kPolicies); ++i)
    blocks.push_back(d.allocate<std::uint8_t>((i + 1) * page(), Placement::block(), kPolicies[i]));
  const DsmStats stats = d.stats();
  const std::uint64_t counted[] = {stats.pages_adaptive, stats.pages_invalidate, stats.pages_update,
                                   stats.pages_read_mostly, stats.pages_single_writer};
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(d.coherence_of(blocks[i] + page() / 2), kPolicies[i]) << to_string(kPolicies[i]);
    EXPECT_GE(counted[i], i + 1) << to_string(kPolicies[i]);
  }
  for (std::uint8_t* block : blocks) d.free(block);
  const DsmStats after = d.stats();
  EXPECT_EQ(after.pages_update + after.pages_read_mostly + after.pages_single_writer +
                after.pages_invalidate + after.pages_adaptive,
            stats.pages_update + stats.pages_read_mostly + stats.pages_single_writer +
                stats.pages_invalidate + stats.pages_adaptive - 15);
  EXPECT_MPIDSM_ERROR(d.coherence_of(d.base()), Errc::unregistered, "Dsm::coherence_of");
}

TEST_F(DsmPolicy, APolicyThatDiffersOrIsUnknownFailsEveryRank) {
  Dsm& d = *dsm_;
  if (ranks() > 1) {
    const Coherence mine = me() == ranks() - 1 ? Coherence::update : Coherence::invalidate;
    // The one thing that differed is named, with both values.
    EXPECT_MPIDSM_ERROR(d.allocate<int>(16, Placement::block(), mine), Errc::collective_mismatch,
                        "ranks passed different coherence policies (invalidate and update)");
    const Placement placement = me() == 0 ? Placement::block() : Placement::cyclic(1);
    EXPECT_MPIDSM_ERROR(d.allocate<int>(16, placement), Errc::collective_mismatch,
                        "ranks passed different placements");
  }
  EXPECT_MPIDSM_ERROR(d.allocate<int>(16, Placement::block(), static_cast<Coherence>(9)),
                      Errc::invalid_argument, "coherence policy 9");
  int* still = d.allocate<int>(16, Placement::block(), Coherence::update);  // still usable
  d.free(still);
}

// Rank 0 rewrites one page homed on itself; every other rank reads it after
// each synchronisation. Returns the readers' invalidations and updates.
struct ReaderCounts {
  std::uint64_t invalidations = 0, updates = 0, wrong = 0;
};

class DsmKeptCopies : public DsmPolicy, public ::testing::WithParamInterface<Coherence> {
 protected:
  template <class Synchronise>
  ReaderCounts read_rounds(Synchronise&& synchronise) {
    Dsm& d = *dsm_;
    auto* words = d.allocate<std::uint64_t>(page() / 8, Placement::on(0), GetParam());
    d.barrier();
    // A copy, counted at rank 0; taken twice, as the home's first notice
    // after a copy says "possibly written" (docs/consistency.md).
    for (int twice = 0; twice < 2; ++twice) {
      if (me() != 0) {
        EXPECT_EQ(words[1], 0u);
      }
      d.barrier();
    }
    const DsmStats before = d.stats();
    ReaderCounts counts;
    for (std::uint64_t round = 1; round <= 6; ++round) {
      if (me() == 0)
        for (std::size_t i = 0; i < page() / 8; ++i) words[i] = round * 1000 + i;
      synchronise(round);
      if (me() != 0)
        for (std::size_t i = 0; i < page() / 8; ++i) counts.wrong += words[i] != round * 1000 + i;
      d.barrier();  // rank 0 rewrites only once every reader has read
    }
    const DsmStats after = d.stats();
    counts.invalidations = after.invalidations - before.invalidations;
    counts.updates = (after.updates_received - before.updates_received) +
                     (after.barrier_refetches - before.barrier_refetches);
    d.free(words);
    return counts;
  }
  bool keeps() const {
    return GetParam() == Coherence::update || GetParam() == Coherence::read_mostly;
  }
};

TEST_P(DsmKeptCopies, BarriersUpdateOrDropCopiesAsThePolicySays) {
  if (ranks() == 1) GTEST_SKIP() << "needs a reader";
  const ReaderCounts c = read_rounds([&](std::uint64_t) { dsm_->barrier(); });
  EXPECT_EQ(c.wrong, 0u) << "rank " << me();
  if (me() == 0) return;
  if (keeps()) {
    EXPECT_EQ(c.invalidations, 0u) << "rank " << me();
    EXPECT_GE(c.updates, 6u) << "rank " << me();
  } else if (GetParam() == Coherence::invalidate) {
    // One per round; the first round's write may find the home page
    // untracked (written without a fault while no copy was counted).
    EXPECT_GE(c.invalidations, 5u) << "rank " << me();
    EXPECT_EQ(c.updates, 0u) << "rank " << me();
  }
}

TEST_P(DsmKeptCopies, FlagsUpdateOrDropCopiesAsThePolicySays) {
  if (ranks() == 1) GTEST_SKIP() << "needs a reader";
  Dsm& d = *dsm_;
  const ReaderCounts c = read_rounds([&](std::uint64_t round) {
    const std::size_t flag = static_cast<std::size_t>(round % 2);
    if (me() == 0)
      d.set_flag(flag);  // a release: the page's notice goes with the flag
    else
      d.wait_flag(flag);
    d.barrier();  // every reader saw the flag before it is lowered
    if (me() == 0) d.reset_flag(flag);
  });
  EXPECT_EQ(c.wrong, 0u) << "rank " << me();
  if (me() != 0 && keeps()) {
    EXPECT_EQ(c.invalidations, 0u) << "rank " << me();
    EXPECT_GE(c.updates, 6u) << "rank " << me();
  }
  if (me() != 0 && GetParam() == Coherence::invalidate) {
    EXPECT_GE(c.invalidations, 5u) << "rank " << me();  // as above
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, DsmKeptCopies, ::testing::ValuesIn(kPolicies),
                         [](const ::testing::TestParamInfo<Coherence>& info) {
                           return std::string(to_string(info.param));
                         });

// An acquire that refreshes hundreds of runs of pages from one home (pages
// dealt one by one: every page its own run; over tcp, each run a call the
// home answers): every rank writes the pages it homes, every other rank
// then reads every page.
TEST_F(DsmPolicy, AnAcquireRefreshesMoreRunsOfPagesThanAFetchAsksFor) {
  Dsm& d = *dsm_;
  const std::size_t words = page() / 8, pages = 512;
  auto* data = d.allocate<std::uint64_t>(pages * words, Placement::cyclic(1), Coherence::update);
  auto homed_here = [&](std::size_t p) { return static_cast<int>(p % ranks()) == me(); };
  for (std::uint64_t round = 1; round <= 3; ++round) {
    for (std::size_t p = 0; p < pages; ++p)
      if (homed_here(p)) data[p * words + round] = round * 100000 + p;
    d.barrier();
    std::size_t wrong = 0;
    for (std::size_t p = 0; p < pages; ++p) wrong += data[p * words + round] != round * 100000 + p;
    EXPECT_EQ(wrong, 0u) << "rank " << me() << ", round " << round;
    d.barrier();
  }
  if (ranks() > 1 && runtime_->config().cache_pages >= pages) {
    EXPECT_GT(d.stats().updates_received + d.stats().barrier_refetches, pages / 2)
        << "rank " << me() << ": the copies were refreshed, not fetched again";
  }
  d.free(data);
}

TEST_F(DsmPolicy, AReadMostlyMissCopiesThePagesAfterIt) {
  if (ranks() == 1) GTEST_SKIP() << "needs a reader";
  Dsm& d = *dsm_;
  const DsmSettings settings = DsmSettings::from(runtime_->config());
  const std::size_t pages = 8;
  for (Coherence policy : {Coherence::read_mostly, Coherence::adaptive}) {
    auto* bytes = d.allocate<std::uint8_t>(pages * page(), Placement::on(0), policy);
    if (me() == 0)
      for (std::size_t p = 0; p < pages; ++p) bytes[p * page()] = static_cast<std::uint8_t>(p + 1);
    d.barrier();
    const DsmStats before = d.stats();
    if (me() != 0) {
      EXPECT_EQ(bytes[0], 1);  // one miss
    }
    const std::uint64_t fetched = d.stats().pages_fetched - before.pages_fetched;
    if (me() != 0) {
      if (policy == Coherence::adaptive || settings.prefetch_pages == 0 ||
          settings.cache_pages < 2) {
        EXPECT_EQ(fetched, 1u) << to_string(policy);  // a lone miss is no stream
      } else {
        EXPECT_GT(fetched, 1u) << to_string(policy);
      }
      for (std::size_t p = 0; p < pages; ++p)
        EXPECT_EQ(bytes[p * page()], p + 1) << to_string(policy) << " page " << p;
    }
    d.barrier();
    d.free(bytes);
  }
}

TEST_F(DsmPolicy, SingleWriterPagesGoHomeWholeAndLand) {
  Dsm& d = *dsm_;
  const std::size_t pages = 2 * static_cast<std::size_t>(ranks());
  auto* bytes =
      d.allocate<std::uint8_t>(pages * page(), Placement::cyclic(1), Coherence::single_writer);
  // Each rank writes one byte of each page homed on the next rank.
  const int next = (me() + 1) % ranks();
  std::size_t written = 0;
  for (std::size_t p = 0; p < pages; ++p)
    if (static_cast<int>(p % static_cast<std::size_t>(ranks())) == next) {
      bytes[p * page() + 7] = static_cast<std::uint8_t>(me() + 1);
      ++written;
    }
  const DsmStats before = d.stats();
  d.barrier();
  const DsmStats after = d.stats();
  if (ranks() > 1) {
    EXPECT_EQ(after.diffs - before.diffs, written);
    EXPECT_EQ(after.diff_bytes - before.diff_bytes, written * page()) << "whole pages";
  }
  for (std::size_t p = 0; p < pages; ++p) {
    const int writer =
        (static_cast<int>(p % static_cast<std::size_t>(ranks())) + ranks() - 1) % ranks();
    EXPECT_EQ(bytes[p * page() + 7], writer + 1) << "page " << p;
    EXPECT_EQ(bytes[p * page() + 8], 0) << "page " << p;
  }
  d.barrier();
  d.free(bytes);
}

TEST_F(DsmPolicy, SingleWriterWritersALockOrdersAllLand) {
  Dsm& d = *dsm_;
  auto* words = d.allocate<std::uint64_t>(page() / 8, Placement::on(0), Coherence::single_writer);
  for (int round = 1; round <= 3; ++round) {
    d.lock(1);
    words[static_cast<std::size_t>(me())] += static_cast<std::uint64_t>(round);
    d.unlock(1);
  }
  d.barrier();  // no race: the lock ordered every write
  for (int r = 0; r < ranks(); ++r) EXPECT_EQ(words[static_cast<std::size_t>(r)], 6u) << r;
  d.barrier();
  d.free(words);
}

TEST_F(DsmPolicy, SingleWriterWritersNothingOrdersFailTheBarrierOnEveryRank) {
  if (ranks() == 1) GTEST_SKIP() << "needs two writers";
  Dsm& d = *dsm_;
  auto* words = d.allocate<std::uint64_t>(page() / 8, Placement::on(0), Coherence::single_writer);
  if (me() != 0) {
    EXPECT_EQ(words[0], 0u);  // copies elsewhere: the home's writes fault too
  }
  d.barrier();
  d.barrier();
  words[static_cast<std::size_t>(me())] = static_cast<std::uint64_t>(me()) + 1;
  EXPECT_MPIDSM_ERROR(d.barrier(), Errc::invalid_state, "of a single_writer allocation");
  // Usable after: the next interval's lone writer lands.
  if (me() == ranks() - 1) words[0] = 99;
  d.barrier();
  EXPECT_EQ(words[0], 99u);
  d.barrier();
  d.free(words);
}

}  // namespace
}  // namespace mpidsm
