// Locks moving home (src/dsm/protocol/lock_homes.hpp): where locks are
// acquired through calls (tcp, homes not mapped), a lock whose critical
// sections write a page homed on another rank than the lock moves to that
// rank at a barrier; its acquires then bring the page with the grant, which
// only the page's home can do. Every variant checks mutual exclusion and the
// values across the moves; over calls, that the lock moved.
#include <gtest/gtest.h>

#include <cstdint>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;
using testing::locks_through_calls;

// The lock's static home is rank 0, the page's the last rank. Rounds of
// turns under the lock, a barrier after each: after two barriers the lock
// lives with the page, and from then on every acquire by another rank than
// the page's home brings the page with its grant.
TEST_F(DsmTest, ALockMovesToTheHomeOfThePageItsSectionsWrite) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a page homed away from the lock";
  const int page_home = n - 1;
  const std::size_t lock = static_cast<std::size_t>(29 * n);  // static home: rank 0
  constexpr int kRounds = 8, kSettled = 3;                    // moved by the third round
  auto* counter = d.allocate<std::int64_t>(d.page_size() / sizeof(std::int64_t),
                                           Placement::on(page_home), Coherence::adaptive);
  d.barrier();
  DsmStats before{};
  for (int round = 0; round < kRounds; ++round) {
    if (round == kSettled) before = d.stats();
    for (int turn = 0; turn < n; ++turn) {
      if (me == turn) {
        d.lock(lock);
        EXPECT_EQ(*counter, round * n + turn) << "rank " << me << ", round " << round;
        *counter += 1;
        d.unlock(lock);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    d.barrier();
  }
  const DsmStats after = d.stats();
  if (locks_through_calls(*runtime_) && me != page_home) {
    EXPECT_EQ(after.lock_grant_pages - before.lock_grant_pages,
              static_cast<std::uint64_t>(kRounds - kSettled))
        << "rank " << me << ": the lock did not move to rank " << page_home;
  }
  EXPECT_EQ(*counter, kRounds * n);
  d.barrier();
  d.free(counter);
}

// Every rank increments counters homed on different ranks under locks whose
// static homes differ from the counters' homes, with barriers between
// bursts: the locks move while the ranks keep contending, and no increment
// is lost (mutual exclusion holds across the moves). In the second phase
// each lock guards another counter, so a moved lock moves again.
TEST_F(DsmTest, ContendedLocksKeepExclusionWhileTheyMove) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t per_page = d.page_size() / sizeof(std::int64_t);
  constexpr int kBursts = 8, kIncrements = 20;
  auto* counters = d.allocate<std::int64_t>(per_page * static_cast<std::size_t>(n),
                                            Placement::cyclic(1), Coherence::adaptive);
  // Lock k's static home is rank k + 1; in phase p it guards the counter
  // on rank k + 2p (one lock per counter in each phase).
  auto lock_of = [&](int k) { return static_cast<std::size_t>(31 * n + (k + 1) % n); };
  auto guarded = [&](int k, int phase) {
    return counters + per_page * static_cast<std::size_t>((k + 2 * phase) % n);
  };
  d.barrier();
  for (int phase = 0; phase < 2; ++phase)
    for (int burst = 0; burst < kBursts; ++burst) {
      for (int i = 0; i < kIncrements; ++i)
        for (int k = 0; k < n; ++k) {
          d.lock(lock_of(k));
          *guarded(k, phase) += 1;
          d.unlock(lock_of(k));
        }
      d.barrier();
    }
  for (int k = 0; k < n; ++k)
    EXPECT_EQ(counters[per_page * static_cast<std::size_t>(k)],
              std::int64_t{2} * kBursts * kIncrements * n)
        << "counter " << k << " on rank " << me;
  d.barrier();
  d.free(counters);
}

}  // namespace
}  // namespace mpidsm
