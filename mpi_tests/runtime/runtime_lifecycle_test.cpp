// Runtime creation and destruction: repeated in one job, on disjoint
// sub-communicators at once, next to ranks that take no part, two runtimes on
// one communicator that never see each other's messages, and the errors of
// using a runtime that does not exist.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/dsm.hpp"
#include "mpidsm/pgas.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace {

// Every rank sends its rank (plus salt) to the next and checks what the
// previous sent, by tag and by a put into the next rank's region.
void ring_exchange(Runtime& rt, int salt) {
  Transport& t = rt.transport();
  const int me = t.rank(), n = t.size();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  int out = me * 100 + salt, in = -1;
  Request receive = t.irecv(prev, 3, &in, sizeof in);
  t.send(next, 3, &out, sizeof out);
  receive.wait();
  EXPECT_EQ(in, prev * 100 + salt);

  MemoryRegion region = t.allocate(sizeof(int));
  t.put(next, region, 0, &out, sizeof out);
  t.barrier();
  EXPECT_EQ(*static_cast<int*>(region.local_base()), prev * 100 + salt);
  t.deregister(region);
}

TEST(RuntimeLifecycle, CreatedAndDestroyedRepeatedly) {
  for (int round = 0; round < 8; ++round) {
    Runtime rt(MPI_COMM_WORLD);
    EXPECT_EQ(rt.rank(), testing::world_rank());
    EXPECT_EQ(rt.size(), testing::world_size());
    ring_exchange(rt, round);
    if (round % 2) rt.finalize();  // explicit finalize and destructor both work
  }
}

TEST(RuntimeLifecycle, EveryRankAgreesOnTheRuntimeId) {
  Runtime first(MPI_COMM_WORLD);
  Runtime second(MPI_COMM_WORLD);
  EXPECT_NE(first.id(), second.id());
  int mine = first.id(), low = 0, high = 0;
  MPI_Allreduce(&mine, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(low, high);
}

TEST(RuntimeLifecycle, DisjointSubCommunicatorsAtOnce) {
  const int world = testing::world_rank();
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, world % 2, world, &half);
  {
    Runtime rt(half);
    int expected_size = 0;
    MPI_Comm_size(half, &expected_size);
    EXPECT_EQ(rt.size(), expected_size);
    EXPECT_EQ(rt.rank(), world / 2);
    // Both halves use the same tags and sizes at the same time; the salt tells
    // which runtime a message came from.
    for (int round = 0; round < 4; ++round) ring_exchange(rt, 10 * (world % 2) + round);
  }
  MPI_Comm_free(&half);
}

TEST(RuntimeLifecycle, RanksOutsideTheCommunicatorAreNotDisturbed) {
  const int world = testing::world_rank(), n = testing::world_size();
  if (n < 2) GTEST_SKIP() << "needs a rank outside the runtime";
  MPI_Comm some;
  MPI_Comm_split(MPI_COMM_WORLD, world == n - 1 ? MPI_UNDEFINED : 0, world, &some);
  if (some != MPI_COMM_NULL) {
    {
      Runtime rt(some);
      ring_exchange(rt, 7);
    }
    MPI_Comm_free(&some);
  } else {
    // The outsider keeps using MPI on its own; the collective below only
    // completes if the runtime's ranks never waited on it.
    int value = 1, sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    EXPECT_EQ(sum, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(RuntimeLifecycle, TwoRuntimesOnOneCommunicatorDoNotCrossMatch) {
  Runtime a(MPI_COMM_WORLD);
  Runtime b(MPI_COMM_WORLD);
  Transport& ta = a.transport();
  Transport& tb = b.transport();
  const int me = ta.rank();
  int out = 55 + me, in = -1;
  ta.send(me, 1, &out, sizeof out);
  // b must not see a's message, even with full wildcards.
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(tb.probe(any_source, any_tag).has_value());
  ta.recv(any_source, any_tag, &in, sizeof in);
  EXPECT_EQ(in, 55 + me);
  ta.barrier();
}

TEST(RuntimeLifecycle, UseBeforeCreationAndAfterFinalizeIsAnError) {
  Runtime never;
  EXPECT_FALSE(never.active());
  EXPECT_MPIDSM_ERROR(never.rank(), Errc::not_initialized, "before creation or after finalize");
  EXPECT_MPIDSM_ERROR(never.transport(), Errc::not_initialized, "runtime used");
  EXPECT_MPIDSM_ERROR(never.finalize(), Errc::not_initialized, "runtime used");

  Runtime rt(MPI_COMM_WORLD);
  rt.finalize();
  EXPECT_FALSE(rt.active());
  EXPECT_MPIDSM_ERROR(rt.size(), Errc::not_initialized, "after finalize");
  EXPECT_MPIDSM_ERROR(rt.finalize(), Errc::not_initialized, "after finalize");
  // A new runtime in the same handle works.
  rt = Runtime(MPI_COMM_WORLD);
  ring_exchange(rt, 99);
}

TEST(RuntimeLifecycle, NullCommunicatorIsRejected) {
  EXPECT_MPIDSM_ERROR(Runtime(MPI_COMM_NULL), Errc::invalid_argument, "MPI_COMM_NULL");
}

TEST(RuntimeLifecycle, BadConfigurationFailsEveryRankAndNamesTheVariable) {
  setenv("MPIDSM_PROGRESS_THREAD", "sometimes", 1);
  EXPECT_MPIDSM_ERROR(
      Runtime(MPI_COMM_WORLD), Errc::config,
      "MPIDSM_PROGRESS_THREAD='sometimes' is invalid: expected one of auto, on, off");
  unsetenv("MPIDSM_PROGRESS_THREAD");
  setenv("MPIDSM_RNDV_THRESH", "12Q", 1);
  EXPECT_MPIDSM_ERROR(Runtime(MPI_COMM_WORLD), Errc::config, "MPIDSM_RNDV_THRESH='12Q'");
  unsetenv("MPIDSM_RNDV_THRESH");
  Runtime rt(MPI_COMM_WORLD);
  ring_exchange(rt, 1);
}

// Settings with a collective meaning must agree (a variable set on the
// launch node but not forwarded to the others is the usual cause).
TEST(RuntimeLifecycle, CollectiveSettingsThatDifferFailEveryRankAndNameThem) {
  const int me = testing::world_rank(), n = testing::world_size();
  if (n < 2) GTEST_SKIP() << "needs two ranks to differ";
  struct Case {
    const char* variable;
    const char* on_last_rank;
  };
  for (const Case& c : {Case{"MPIDSM_DSM_SIZE", "512M"}, Case{"MPIDSM_HEAP_SIZE", "64M"},
                        Case{"MPIDSM_LOCKS", "100"}, Case{"MPIDSM_DIRECT_ACCESS", "off"}}) {
    if (me == n - 1) setenv(c.variable, c.on_last_rank, 1);
    const std::string ranks = n == 2 ? "on rank 0;" : "on ranks 0, 1";
    EXPECT_MPIDSM_ERROR(Runtime(MPI_COMM_WORLD), Errc::config,
                        std::string(c.variable) + " differs between ranks");
    EXPECT_MPIDSM_ERROR(Runtime(MPI_COMM_WORLD), Errc::config, ranks);
    EXPECT_MPIDSM_ERROR(Runtime(MPI_COMM_WORLD), Errc::config, "on rank " + std::to_string(n - 1));
    unsetenv(c.variable);
  }
  Runtime rt(MPI_COMM_WORLD);
  ring_exchange(rt, 4);
}

// A Pgas or Dsm outliving Runtime::finalize: typed errors on use, and a safe
// destruction (UCX released everything with the runtime).
TEST(RuntimeLifecycle, PgasAndDsmAfterFinalizeAreTypedErrorsAndDestroySafely) {
  Runtime rt(MPI_COMM_WORLD);
  auto pgas = std::make_unique<Pgas>(rt);
  auto dsm = std::make_unique<Dsm>(rt);
  auto array = pgas->allocate<long>(4);
  long* shared = dsm->allocate<long>(4);
  shared[0] = 1;
  dsm->barrier();
  rt.finalize();
  long value = 1;
  EXPECT_MPIDSM_ERROR(pgas->put(array.at(0), &value, 1), Errc::not_initialized,
                      "Pgas::put: the Pgas's Runtime was finalized");
  EXPECT_MPIDSM_ERROR(pgas->barrier(), Errc::not_initialized, "Runtime was finalized");
  EXPECT_MPIDSM_ERROR(pgas->allocate<long>(4), Errc::not_initialized, "Runtime was finalized");
  // The heap is unmapped by now: a wait must not read its word.
  EXPECT_MPIDSM_ERROR(pgas->wait_until(array.local(), Compare::eq, 1L), Errc::not_initialized,
                      "wait_until: the Pgas's Runtime was finalized");
  EXPECT_MPIDSM_ERROR(pgas->test(array.local(), Compare::eq, 1L), Errc::not_initialized,
                      "test: the Pgas's Runtime was finalized");
  EXPECT_MPIDSM_ERROR(dsm->barrier(), Errc::not_initialized,
                      "Dsm::barrier: the Dsm's Runtime was finalized");
  EXPECT_MPIDSM_ERROR(dsm->lock(1), Errc::not_initialized, "Runtime was finalized");
  EXPECT_MPIDSM_ERROR(dsm->allocate<long>(4), Errc::not_initialized, "Runtime was finalized");
  EXPECT_MPIDSM_ERROR(dsm->free(shared), Errc::not_initialized, "Runtime was finalized");
  dsm.reset();
  pgas.reset();
  Runtime again(MPI_COMM_WORLD);  // nothing left behind in the way
  ring_exchange(again, 5);
}

TEST(RuntimeLifecycle, ProgressThreadCanBeForcedOnAndOff) {
  setenv("MPIDSM_PROGRESS_THREAD", "on", 1);
  {
    Runtime rt(MPI_COMM_WORLD);
    EXPECT_TRUE(rt.progress_thread_running());
    ring_exchange(rt, 2);
  }
  setenv("MPIDSM_PROGRESS_THREAD", "off", 1);
  {
    Runtime rt(MPI_COMM_WORLD);
    EXPECT_FALSE(rt.progress_thread_running());
    EXPECT_EQ(rt.config().progress_thread, ProgressMode::off);
    if (!testing::tcp_only()) ring_exchange(rt, 3);
  }
  unsetenv("MPIDSM_PROGRESS_THREAD");
}

}  // namespace
}  // namespace mpidsm
