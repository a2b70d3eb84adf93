// Pages that come with a lock's grant (src/dsm/protocol/lock_grants.hpp):
// where the lock's home is reached through calls and is home to the page
// too, an acquire brings the pages the rank wishes for, written since, with
// its answer: a copy refreshed in place, a copy kept writable by the lock's
// releases, a page the rank holds no copy of (fetched, and counted at the
// home, whose later writes must then be noticed), and the same after a
// hand-over from the lock's queue. Every variant checks the values; where
// the calls are used (tcp, homes not mapped) the counters show that no
// fetch of the rank's own was needed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;
using testing::locks_through_calls;

// A counter passed round the ranks in turns under one lock, with no DSM
// barrier: from the second round on, each acquire of a rank other than the
// home brings the page (first a read-only copy refreshed, then the copy the
// lock's releases keep writable).
TEST_F(DsmTest, APageHandedRoundUnderItsLockComesWithEachGrant) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a home other than the acquirer";
  const int home = n - 1;
  const std::size_t lock = static_cast<std::size_t>(home + 13 * n);  // homed with the page
  constexpr int kRounds = 6;
  auto* counter = d.allocate<std::int64_t>(d.page_size() / sizeof(std::int64_t),
                                           Placement::on(home), Coherence::adaptive);
  d.barrier();
  DsmStats before{};
  for (int round = 0; round < kRounds; ++round) {
    if (round == 1) before = d.stats();
    for (int turn = 0; turn < n; ++turn) {
      if (me == turn) {
        d.lock(lock);
        EXPECT_EQ(*counter, round * n + turn) << "rank " << me << ", round " << round;
        counter[1] = *counter;  // a second word, so the diff is more than the counter
        *counter += 1;
        d.unlock(lock);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  const DsmStats after = d.stats();
  if (locks_through_calls(*runtime_) && me != home) {
    EXPECT_EQ(after.lock_grant_pages - before.lock_grant_pages, std::uint64_t{kRounds - 1});
    EXPECT_EQ(after.pages_fetched, before.pages_fetched);
    EXPECT_EQ(after.read_faults, before.read_faults);
  }
  d.barrier();
  EXPECT_EQ(*counter, kRounds * n);
  EXPECT_EQ(counter[1], kRounds * n - 1);
  d.barrier();
  d.free(counter);
}

// Rank 0 wrote the page under the lock, then dropped its copy (another
// lock's notice); its next acquire of the lock fetches the page with the
// grant. The home counted and logged that copy: its next write is noticed
// (in the other lock's log, checked without a barrier, whose updates would
// hide a copy the home does not know of).
TEST_F(DsmTest, APageNotHeldComesWithTheGrantAndIsCountedAtItsHome) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a home other than the acquirer";
  const int home = n - 1;
  const std::size_t lock = static_cast<std::size_t>(home + 17 * n);  // homed with the page
  const std::size_t other = static_cast<std::size_t>(0 + 19 * n);    // homed on rank 0
  auto* word = d.allocate<std::int64_t>(d.page_size() / sizeof(std::int64_t), Placement::on(home),
                                        Coherence::adaptive);
  d.barrier();
  auto step = [&](int rank, auto&& body) {
    if (me == rank) body();
    MPI_Barrier(MPI_COMM_WORLD);
  };
  step(0, [&] {
    d.lock(lock);
    *word = 1;  // rank 0 wishes for the page with this lock from now on
    d.unlock(lock);
  });
  step(home, [&] {
    d.lock(other);
    *word = 2;
    d.unlock(other);
  });
  step(0, [&] {
    d.lock(other);  // its notice drops rank 0's copy, which it does not read again
    d.unlock(other);
  });
  step(home, [&] {
    d.lock(lock);
    *word = 3;
    d.unlock(lock);
  });
  step(0, [&] {
    const DsmStats before = d.stats();
    d.lock(lock);
    EXPECT_EQ(*word, 3);
    const DsmStats after = d.stats();
    d.unlock(lock);
    if (locks_through_calls(*runtime_)) {
      EXPECT_EQ(after.lock_grant_pages - before.lock_grant_pages, 1u);
      EXPECT_EQ(after.read_faults, before.read_faults);
      EXPECT_EQ(after.pages_fetched, before.pages_fetched);
    }
  });
  step(home, [&] {
    *word = 4;
    d.lock(other);
    d.unlock(other);
  });
  step(0, [&] {
    d.lock(other);
    EXPECT_EQ(*word, 4);
    d.unlock(other);
  });
  d.barrier();
  EXPECT_EQ(*word, 4) << "rank " << me;
  d.barrier();
  d.free(word);
}

// The lock is handed over from its queue: the waiter's read of the log
// brings the page the holder wrote.
TEST_F(DsmTest, AWaiterHandedTheLockGetsThePageWithTheLog) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a holder and a waiter";
  const int home = n - 1, waiter = 0;
  const std::size_t lock = static_cast<std::size_t>(home + 23 * n);  // homed with the page
  auto* word = d.allocate<std::int64_t>(d.page_size() / sizeof(std::int64_t), Placement::on(home),
                                        Coherence::adaptive);
  d.barrier();
  if (me == waiter) {
    d.lock(lock);
    *word = 1;
    d.unlock(lock);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == home) d.lock(lock);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == home) {
    usleep(200000);  // the waiter queues meanwhile
    *word = 2;
    d.unlock(lock);
  }
  if (me == waiter) {
    const DsmStats before = d.stats();
    d.lock(lock);
    EXPECT_EQ(*word, 2);
    const DsmStats after = d.stats();
    d.unlock(lock);
    if (locks_through_calls(*runtime_)) {
      EXPECT_EQ(after.lock_grant_pages - before.lock_grant_pages, 1u);
      EXPECT_EQ(after.read_faults, before.read_faults);
    }
  }
  d.barrier();
  EXPECT_EQ(*word, 2) << "rank " << me;
  d.barrier();
  d.free(word);
}

}  // namespace
}  // namespace mpidsm
