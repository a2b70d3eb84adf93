// Where every home is called and keeps its locks' queues (lock_queues.hpp),
// releasing a lock is a one-way call: the releaser waits for nothing from
// the home. Here the home serves no call while the releaser unlocks (no
// progress thread, no progress inside MPI, and the home polls only MPI):
// the unlock must return all the same, the home must apply the release
// (the next holder sees the write) and hand the lock on in order.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

constexpr int kHome = 0, kReleaser = 1;
constexpr int kLocked = 1, kUnlocked = 2;  // MPI tags

// Waits for an empty MPI message from `source`, driving UCX meanwhile only
// when `serve`; false when none came within 20 s.
bool receive_within(int source, int tag, bool serve, Transport& transport) {
  MPI_Request request;
  MPI_Irecv(nullptr, 0, MPI_BYTE, source, tag, MPI_COMM_WORLD, &request);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int done = 0;
  while (!done && std::chrono::steady_clock::now() < end) {
    if (serve) transport.progress();
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
  if (!done) {
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  return done != 0;
}

bool nobody_serves_meanwhile(const Runtime& runtime) {
  return runtime.config().progress_thread == ProgressMode::off && !runtime.config().progress_in_mpi;
}

TEST_F(DsmTest, AnUnlockWaitsForNothingFromTheLocksHome) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank();
  if (!testing::homes_keep_lock_queues(*runtime_) || !nobody_serves_meanwhile(*runtime_))
    GTEST_SKIP() << "needs homes that keep the queues, and no progress but the home's own";
  const std::size_t lock = static_cast<std::size_t>(kHome + 5 * runtime_->size());
  auto* word = d.allocate<std::int64_t>(d.page_size() / sizeof(std::int64_t), Placement::on(kHome),
                                        Coherence::adaptive);
  d.barrier();
  if (me == kReleaser) {
    d.lock(lock);  // the home serves this acquire below
    *word = 7;
    MPI_Send(nullptr, 0, MPI_BYTE, kHome, kLocked, MPI_COMM_WORLD);
    d.unlock(lock);  // while the home serves nothing
    MPI_Send(nullptr, 0, MPI_BYTE, kHome, kUnlocked, MPI_COMM_WORLD);
  } else if (me == kHome) {
    ASSERT_TRUE(receive_within(kReleaser, kLocked, true, runtime_->transport()));
    EXPECT_TRUE(receive_within(kReleaser, kUnlocked, false, runtime_->transport()))
        << "the unlock waited for its home";
    d.lock(lock);  // the home applies the release first, in order
    EXPECT_EQ(*word, 7);
    d.unlock(lock);
  }
  d.barrier();
  EXPECT_EQ(*word, 7);
  d.barrier();
  d.free(word);
}

}  // namespace
}  // namespace mpidsm
