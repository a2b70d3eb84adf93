// How a home learns which of its pages other ranks copied (src/dsm/sharing.hpp):
// a home page nobody else holds is written without faults or notices, so a
// copy the home fails to see is a copy that silently goes stale.
#include <gtest/gtest.h>
#include <unistd.h>

#include "dsm/test_hooks.hpp"
#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

// Rank 1 reserves a copy-log slot at rank 0 and is descheduled before
// writing it; rank 2 logs its copy of another page in the next slot and
// reads the page. Rank 0 then writes that page (nobody held it, so no
// fault) and releases: the unwritten slot must not hide rank 2's entry.
TEST_F(DsmTest, AFetchStalledBeforeItsLogEntryHidesNoLaterCopy) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 3) GTEST_SKIP() << "needs a home and two fetchers";
  const std::size_t words = d.page_size() / sizeof(int);
  int* stalled = d.allocate<int>(words, Placement::on(0));
  int* seen = d.allocate<int>(words, Placement::on(0));
  d.barrier();
  if (me == 1) {
    detail::delay_next_copy_log_entry(800);
    EXPECT_EQ(stalled[0], 0);
  } else if (me == 2) {
    usleep(200 * 1000);  // rank 1 has reserved its slot by now
    EXPECT_EQ(seen[0], 0);
    MPI_Send(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
  } else if (me == 0) {
    MPI_Recv(nullptr, 0, MPI_BYTE, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    seen[0] = 42;
  }
  d.barrier();
  EXPECT_EQ(seen[0], 42) << "rank " << me << " kept a copy its home never noticed";
  d.barrier();
  d.free(seen);
  d.free(stalled);
}

// Copies dropped by the barrier inside free() are uncounted at their home
// at some later time (through UCX at the dropper's next flush). The next
// allocation of the same pages must still count its copies, or its home
// stops sending notices for a page others hold.
TEST_F(DsmTest, CopiesDroppedWhileFreeingLeaveLaterCopiesCounted) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a peer";
  const std::size_t words = d.page_size() / sizeof(int);
  int stale = 0, first_stale = 0;  // every rank goes on to the end: the loop is collective
  for (int cycle = 1; cycle <= 100; ++cycle) {
    int* page = d.allocate<int>(words, Placement::on(0));
    if (me != 0) {
      EXPECT_EQ(page[0], 0);  // a copy, counted at rank 0
    }
    d.barrier();
    if (me == 0) page[0] = cycle;  // written, so a notice ...
    d.barrier();
    if (me != 0 && page[0] != cycle && stale++ == 0) first_stale = cycle;
    d.barrier();
    if (me == 0) page[1] = cycle;  // ... and another, which free()'s barrier delivers
    d.free(page);
  }
  EXPECT_EQ(stale, 0) << "rank " << me << " read stale data, first in cycle " << first_stale;
}

}  // namespace
}  // namespace mpidsm
