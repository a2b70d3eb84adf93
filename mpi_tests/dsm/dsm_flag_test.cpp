// Flags (Dsm::set_flag, wait_flag, reset_flag): signalling between ranks
// with coherence, as JIAJIA's condition variables; and Dsm::reset_stats.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

// Rank 0 writes pages homed on every rank and raises a flag; every other
// rank waits for the flag, with no barrier in between, and must see every
// write (the flag is a release at rank 0 and an acquire at the waiter).
TEST_F(DsmTest, AFlagRaisedAfterWritesMakesThemVisibleToItsWaiters) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t words = d.page_size() / sizeof(int) * 3 * static_cast<std::size_t>(n);
  int* data = d.allocate<int>(words, Placement::cyclic(1));
  for (std::size_t i = 0; i < words; ++i) EXPECT_EQ(data[i], 0);  // copies to invalidate later
  d.barrier();
  constexpr std::size_t flag = 3;
  for (int round = 1; round <= 3; ++round) {
    if (me == 0) {
      usleep(50 * 1000);  // waiters are waiting by now: a raised stale flag would show
      for (std::size_t i = 0; i < words; ++i) data[i] = round * 1000 + static_cast<int>(i % 1000);
      d.set_flag(flag);
    } else {
      d.wait_flag(flag);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < words; ++i)
        wrong += data[i] != round * 1000 + static_cast<int>(i % 1000);
      EXPECT_EQ(wrong, 0u) << "rank " << me << " round " << round;
    }
    d.barrier();
    if (me == 0) d.reset_flag(flag);  // lowered before anyone waits again
    d.barrier();
  }
  d.free(data);
}

// Every rank raises its own flag after writing its own page; rank 0 waits
// for all of them in turn, as a producer/consumer hand-off would.
TEST_F(DsmTest, EachRanksFlagCarriesThatRanksWrites) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t per_rank = d.page_size() / sizeof(long);
  long* data = d.allocate<long>(per_rank * static_cast<std::size_t>(n), Placement::on(0));
  const std::size_t first_flag = 10;
  if (me != 0) {
    for (std::size_t i = 0; i < per_rank; ++i)
      data[static_cast<std::size_t>(me) * per_rank + i] = me * 100 + static_cast<long>(i);
    d.set_flag(first_flag + static_cast<std::size_t>(me));
  } else {
    for (int r = 1; r < n; ++r) {
      d.wait_flag(first_flag + static_cast<std::size_t>(r));
      for (std::size_t i = 0; i < per_rank; i += 97)
        EXPECT_EQ(data[static_cast<std::size_t>(r) * per_rank + i], r * 100 + static_cast<long>(i))
            << "from rank " << r;
    }
  }
  d.barrier();
  if (me != 0) d.reset_flag(first_flag + static_cast<std::size_t>(me));
  d.barrier();
  d.free(data);
}

TEST_F(DsmTest, AFlagIdOutOfRangeIsAClearError) {
  Dsm& d = *dsm_;
  const std::size_t bad = d.lock_count();
  for (auto call : {&Dsm::set_flag, &Dsm::wait_flag, &Dsm::reset_flag}) {
    try {
      (d.*call)(bad);
      ADD_FAILURE() << "no error for flag id " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::out_of_range);
      EXPECT_NE(std::string(e.what()).find("flag id " + std::to_string(bad)), std::string::npos)
          << e.what();
    }
  }
  d.barrier();  // still usable
}

TEST_F(DsmTest, ResetStatsRestartsEveryCounterAfterABarrier) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t words = d.page_size() / sizeof(int) * static_cast<std::size_t>(n);
  int* data = d.allocate<int>(words, Placement::cyclic(1));
  for (std::size_t i = 0; i < words; ++i) data[i] = me;  // faults and diffs when n > 1
  d.barrier();
  EXPECT_GT(d.stats().barriers, 0u);
  d.reset_stats();
  d.stats().for_each([&](const char* name, std::uint64_t value) {
    EXPECT_EQ(value, 0u) << name << " on rank " << me << " after reset_stats";
  });
  data[static_cast<std::size_t>(me)] = me + 1;
  d.barrier();
  EXPECT_EQ(d.stats().barriers, 1u);
  d.free(data);
}

}  // namespace
}  // namespace mpidsm
