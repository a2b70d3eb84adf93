// Who stores into a page of a master copy (src/dsm/protocol/master_guards.hpp):
// a writer on the home's node may store whole vectors only while the home's
// view of the page cannot write, and the home's view waits for a writer
// holding the page before it lets a store in.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <ostream>
#include <thread>

#include "dsm/protocol/master_guards.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace detail {
void PrintTo(PageAccess access, std::ostream* out) {
  *out << (access == PageAccess::shared ? "shared" : "exclusive");
}
}  // namespace detail
namespace {

using detail::MasterGuards;
using detail::PageAccess;

constexpr int kHome = 0;

// How a writer may store into `page` at the home, holding it for a moment.
PageAccess access_to(MasterGuards& guards, std::size_t page) {
  const PageAccess access = guards.hold(kHome, page);
  guards.release(kHome, page);
  return access;
}

// Every rank maps the home's guards (all on one node, direct access on).
bool home_mapped_everywhere(const Runtime& runtime, const MasterGuards& guards) {
  int mapped = guards.maps(kHome) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &mapped, 1, MPI_INT, MPI_MIN, runtime.comm());
  return mapped == 1;
}

TEST(MasterGuards, AWriterStoresAloneOnlyWhileTheHomesViewCannotWrite) {
  Runtime runtime(MPI_COMM_WORLD);
  const detail::MappablePeers mappable(runtime.transport(), runtime.config().direct_access);
  MasterGuards guards(runtime.comm(), runtime.transport(), 4, mappable);
  if (!home_mapped_everywhere(runtime, guards)) GTEST_SKIP() << "the home is not mapped here";
  const int me = runtime.rank();
  // Page 0: never made read-only, so it may be written at the home.
  EXPECT_EQ(access_to(guards, 0), PageAccess::shared) << "rank " << me;
  MPI_Barrier(runtime.comm());
  if (me == kHome) guards.view_read_only(1, 2);
  MPI_Barrier(runtime.comm());
  EXPECT_EQ(access_to(guards, 1), PageAccess::exclusive) << "rank " << me;
  EXPECT_EQ(access_to(guards, 2), PageAccess::exclusive) << "rank " << me;
  MPI_Barrier(runtime.comm());
  if (me == kHome) guards.view_leaves_read_only(1);
  MPI_Barrier(runtime.comm());
  EXPECT_EQ(access_to(guards, 1), PageAccess::shared) << "rank " << me;
  EXPECT_EQ(access_to(guards, 2), PageAccess::exclusive) << "rank " << me;
  MPI_Barrier(runtime.comm());
}

TEST(MasterGuards, TheHomesViewWaitsForAWriterHoldingThePage) {
  Runtime runtime(MPI_COMM_WORLD);
  const detail::MappablePeers mappable(runtime.transport(), runtime.config().direct_access);
  MasterGuards guards(runtime.comm(), runtime.transport(), 4, mappable);
  if (runtime.size() < 2) GTEST_SKIP() << "needs a home and a writer";
  if (!home_mapped_everywhere(runtime, guards)) GTEST_SKIP() << "the home is not mapped here";
  const int me = runtime.rank();
  if (me == kHome) guards.view_read_only(2, 1);
  MPI_Barrier(runtime.comm());
  constexpr auto held_for = std::chrono::milliseconds(300);
  if (me == 1) {
    ASSERT_EQ(guards.hold(kHome, 2), PageAccess::exclusive);
    MPI_Barrier(runtime.comm());
    std::this_thread::sleep_for(held_for);
    guards.release(kHome, 2);
  } else {
    MPI_Barrier(runtime.comm());
    if (me == kHome) {
      const auto start = std::chrono::steady_clock::now();
      guards.view_leaves_read_only(2);
      // It cannot return before the release: the holder slept held_for
      // after the barrier, which this rank left at most a little earlier.
      EXPECT_GE(std::chrono::steady_clock::now() - start, held_for / 2);
    }
  }
  MPI_Barrier(runtime.comm());
  EXPECT_EQ(access_to(guards, 2), PageAccess::shared) << "rank " << me;
  MPI_Barrier(runtime.comm());
}

}  // namespace
}  // namespace mpidsm
