// Diffs on their way home: byte-exact with many writers, however scattered
// the changes, and one message per home at a release when the home is
// reached through UCX (src/dsm/diff_batches.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

// The home writes its own bytes of its pages while a writer's release
// stores the writer's bytes into them: on one node, where the home's view
// of a page is read-only, with whole vectors that read back the bytes
// around the writer's (master_guards.hpp). No byte of either may be lost.
// The home writes a byte of every page in turn, so whichever page the
// release stores, the home is writing it too; more pages than can stay hot
// (writable between releases) fault at the home's first write each round.
TEST_F(DsmTest, AHomeWritingBesideAReleaseLosesNoByte) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a home and a writer";
  const testing::FixedHomes fixed(d, *runtime_);
  constexpr std::size_t pages = 96;
  const std::size_t page = d.page_size(), size = pages * page;
  auto* bytes = d.allocate<std::uint8_t>(size, Placement::on(0));
  auto homes_byte = [](std::size_t i) { return i % 8 == 7; };  // the rest are rank 1's
  auto value = [](int round, std::size_t i) {
    return static_cast<std::uint8_t>(static_cast<std::size_t>(round) * 3 + i);
  };
  constexpr int rounds = 30;
  for (int round = 1; round <= rounds; ++round) {
    if (me == 1) {
      d.lock(3);
      for (std::size_t i = 0; i < size; ++i)
        if (!homes_byte(i)) bytes[i] = value(round, i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1) d.unlock(3);
    if (me == 0)
      for (std::size_t offset = 7; offset < page; offset += 8)
        for (std::size_t i = offset; i < size; i += page) bytes[i] = value(round, i);
    d.barrier();
    std::size_t wrong = 0, first = size;
    for (std::size_t i = 0; i < size; ++i)
      if (bytes[i] != value(round, i) && wrong++ == 0) first = i;
    ASSERT_EQ(wrong, 0u) << "rank " << me << ", round " << round << ": first wrong byte " << first
                         << " (page " << first / page << ", written by rank "
                         << (homes_byte(first) ? 0 : 1) << ")";
  }
  d.barrier();
  d.free(bytes);
}

}  // namespace
}  // namespace mpidsm
