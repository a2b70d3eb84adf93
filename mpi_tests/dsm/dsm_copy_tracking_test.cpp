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

// Each rank reads the block of pages the next rank homes, and each home
// then writes its block: the barrier drops every copy. The drops reach the
// homes as one call per home where fetches are calls (one remote atomic
// each over tcp before); elsewhere as remote atomics, or CPU atomics on
// words mapped here. Once the droppers' next release has completed them,
// no copy is counted: each home writes its block without a fault.
TEST_F(DsmTest, CopiesDroppedAtABarrierAreUncountedInOneCallPerHome) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a home and a reader";
  const bool calls = testing::fetches_through_calls(*runtime_);  // collective
  const testing::FixedHomes fixed(d, *runtime_);
  constexpr std::size_t kPages = 64;
  const std::size_t per_page = d.page_size() / sizeof(std::uint64_t);
  const std::size_t block = kPages * per_page;
  auto* data = d.allocate<std::uint64_t>(block * static_cast<std::size_t>(n), Placement::block(),
                                         Coherence::invalidate);
  std::uint64_t* own = data + block * static_cast<std::size_t>(me);
  const std::uint64_t* next = data + block * static_cast<std::size_t>((me + 1) % n);
  ASSERT_EQ(d.home_of(own), me);
  ASSERT_EQ(d.home_of(own + block - 1), me);
  auto write_own = [&](std::uint64_t value) {
    for (std::size_t page = 0; page < kPages; ++page) own[page * per_page] = value;
  };
  auto next_holds = [&](std::uint64_t value) {
    std::size_t wrong = 0;
    for (std::size_t page = 0; page < kPages; ++page) wrong += next[page * per_page] != value;
    return wrong;
  };
  d.barrier();
  EXPECT_EQ(next_holds(0), 0u) << "rank " << me;  // kPages copies, counted at the next rank
  MPI_Barrier(MPI_COMM_WORLD);
  write_own(1);
  const TransportTraffic before = runtime_->transport().traffic();
  const std::uint64_t invalidated = d.stats().invalidations;
  d.barrier();
  const std::uint64_t messages = runtime_->transport().traffic().messages - before.messages;
  EXPECT_EQ(d.stats().invalidations - invalidated, kPages) << "rank " << me;
  if (calls) {
    EXPECT_LT(messages, kPages / 4) << "rank " << me << ": a message per dropped copy";
  }
  write_own(2);
  d.barrier();  // the droppers' release completes the drops at the homes
  write_own(3);
  d.barrier();  // the homes' release finds no copy left: their pages are exclusive
  const std::uint64_t faults = d.stats().write_faults;
  write_own(4);
  EXPECT_EQ(d.stats().write_faults - faults, 0u) << "rank " << me << ": a copy is still counted";
  d.barrier();
  EXPECT_EQ(next_holds(4), 0u) << "rank " << me;
  d.barrier();
  d.free(data);
}

// A page its home wrote without faults, then fetched by one rank to write
// it: the home tracks the page from that copy on (copies_for_writing.cpp),
// so its release need not say "possibly written", and the writer keeps its
// copy through the barrier and writes it again without fetching it. Where
// fetches are not calls the home cannot act at the copy, and the copy goes.
TEST_F(DsmTest, AWritersCopyOutlivesTheBarrierWhenItsHomeWroteOnlyBefore) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a home and a writer";
  const bool calls = testing::fetches_through_calls(*runtime_);  // collective
  constexpr int kHome = 0, kWriter = 1;
  int* page = d.allocate<int>(d.page_size() / sizeof(int), Placement::on(kHome));
  d.barrier();
  if (me == kHome) page[0] = 7;  // no fault: nobody holds the page
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == kWriter) page[1] = 1;  // fetched to be written, the home idle meanwhile
  MPI_Barrier(MPI_COMM_WORLD);
  const DsmStats before = d.stats();
  d.barrier();
  if (me == kWriter) {
    EXPECT_EQ(page[0], 7);
    page[2] = 2;
    const DsmStats after = d.stats();
    if (calls) {
      EXPECT_EQ(after.invalidations - before.invalidations, 0u) << "the copy was dropped";
      EXPECT_EQ(after.pages_fetched - before.pages_fetched, 0u) << "the copy was fetched again";
    }
  }
  d.barrier();
  EXPECT_EQ(page[0], 7) << "rank " << me;
  EXPECT_EQ(page[1], 1) << "rank " << me;
  EXPECT_EQ(page[2], 2) << "rank " << me;
  d.barrier();
  d.free(page);
}

// A reader copies a page its home writes without faults; the home then
// writes it; a writer fetches it to write and changes nothing. Tracking the
// page from the writer's copy would leave the reader's older copy stale:
// only the home's "possibly written" notice tells the reader (the writer's
// notice says "unchanged"), so the home must not start tracking then.
TEST_F(DsmTest, AnEarlierReadersCopyStillHearsOfTheHomesWrite) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 3) GTEST_SKIP() << "needs a home, a reader and a writer";
  constexpr int kHome = 0, kReader = 1, kWriter = 2;
  int* page = d.allocate<int>(d.page_size() / sizeof(int), Placement::on(kHome));
  d.barrier();
  if (me == kReader) {
    EXPECT_EQ(page[0], 0);  // a copy, while the home writes the page without faults
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == kHome) page[0] = 5;  // after the reader's copy: still no fault
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == kWriter) page[100] = 0;  // a fetch to write, and no byte changed
  MPI_Barrier(MPI_COMM_WORLD);
  d.barrier();
  EXPECT_EQ(page[0], 5) << "rank " << me << " read a copy older than its home's write";
  d.barrier();
  d.free(page);
}

}  // namespace
}  // namespace mpidsm
