// Diffs on their way home: byte-exact with many writers, however scattered
// the changes, and one message per home at a release when the home is
// reached through UCX (src/dsm/diff_batches.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

// The value float k holds after `sweeps` updates by its writer.
float expected_value(std::size_t k, int sweeps) {
  float v = 0.5f + static_cast<float>(k % 1000) * 1e-3f;
  for (int s = 0; s < sweeps; ++s) v = v * 0.999f + 0.001f;
  return v;
}

// Every rank updates every ranks-th float of pages homed round-robin, so
// each page has a writer per rank and each float changes in 1-4 of its
// bytes: hundreds of interleaved runs per page from every writer.
TEST_F(DsmTest, InterleavedFloatUpdatesOfEveryRankAllLand) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  constexpr std::size_t pages = 40;
  const std::size_t count = pages * d.page_size() / sizeof(float);
  float* values = d.allocate<float>(count, Placement::cyclic(1));
  for (std::size_t k = static_cast<std::size_t>(me); k < count; k += static_cast<std::size_t>(n))
    values[k] = expected_value(k, 0);
  d.barrier();
  for (int sweep = 1; sweep <= 4; ++sweep) {
    for (std::size_t k = static_cast<std::size_t>(me); k < count; k += static_cast<std::size_t>(n))
      values[k] = values[k] * 0.999f + 0.001f;
    d.barrier();
    std::size_t wrong = 0, first = count;
    for (std::size_t k = 0; k < count; ++k)
      if (values[k] != expected_value(k, sweep) && wrong++ == 0) first = k;
    ASSERT_EQ(wrong, 0u) << "rank " << me << " sweep " << sweep << ": first wrong float " << first
                         << " (written by rank " << first % static_cast<std::size_t>(n) << ")";
    d.barrier();
  }
  d.free(values);
}

// More scattered pages for one home than the diff buffers hold at once:
// the release sends, completes and reuses buffers on the way.
TEST_F(DsmTest, AReleaseLargerThanEveryDiffBufferLandsWhole) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a home and a writer";
  constexpr std::size_t pages = 400;  // 16 buffers of 15 scattered pages hold 240
  const std::size_t count = pages * d.page_size() / sizeof(float);
  float* values = d.allocate<float>(count, Placement::on(0));
  if (me == 1)
    for (std::size_t k = 0; k < count; ++k) values[k] = expected_value(k, 1);
  d.barrier();
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < count; ++k) wrong += values[k] != expected_value(k, 1);
  EXPECT_EQ(wrong, 0u) << "rank " << me;
  d.barrier();
  d.free(values);
}

// A release through UCX sends one message per home (and per 64 KiB of
// diffs), never one per run; a home mapped here takes stores instead.
TEST_F(DsmTest, ScatteredChangesTravelAsOneMessagePerHome) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a remote home";
  const testing::FixedHomes fixed(d, *runtime_);  // this rank alone writes the pages
  const int home = (me + 1) % n;
  constexpr std::size_t pages = 8;
  const std::size_t count = pages * d.page_size() / sizeof(float);
  auto* per_home = d.allocate<float>(count * static_cast<std::size_t>(n), Placement::block());
  float* mine = per_home + count * static_cast<std::size_t>(home);  // homed on `home`
  ASSERT_EQ(d.home_of(mine), home);
  for (std::size_t k = 0; k < count; ++k) mine[k] = expected_value(k, 0);
  d.barrier();
  for (std::size_t k = 0; k < count; ++k) mine[k] = mine[k] * 0.999f + 0.001f;
  const DsmStats before = d.stats();
  d.barrier();
  const DsmStats after = d.stats();
  const bool mapped = testing::mapped_here(*runtime_, home);
  EXPECT_EQ(after.diffs - before.diffs, pages);
  EXPECT_GT(after.diff_runs - before.diff_runs, pages * 300) << "the updates were not scattered";
  EXPECT_EQ(after.diff_messages - before.diff_messages, mapped ? 0u : 1u)
      << "rank " << me << " to home " << home << (mapped ? " (mapped)" : " (through UCX)");
  d.barrier();
  d.free(per_home);
}

// The home sits in the application's own MPI_Recv while a writer releases
// scattered changes to it under a lock: the diffs must still be applied
// (by the home's progress), or the writer's unlock never returns and the
// home never receives the message that follows it.
TEST_F(DsmTest, AHomeBlockedInMpiStillTakesDiffs) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a home and a writer";
  const std::size_t count = 4 * d.page_size() / sizeof(float);
  float* values = d.allocate<float>(count, Placement::on(0));
  if (me == 1) {
    for (std::size_t k = 0; k < count; ++k) values[k] = expected_value(k, 0);  // a copy, now
    d.lock(5);
    for (std::size_t k = 0; k < count; ++k) values[k] = expected_value(k, 2);
    d.unlock(5);
    MPI_Send(nullptr, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
  } else if (me == 0) {
    MPI_Recv(nullptr, 0, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    d.lock(5);
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < count; ++k) wrong += values[k] != expected_value(k, 2);
    d.unlock(5);
    EXPECT_EQ(wrong, 0u);
  }
  d.barrier();
  d.free(values);
}

}  // namespace
}  // namespace mpidsm
