// Set-up, queries and memory conformance, and the program mixing OpenSHMEM
// with MPI and with mpidsm's own DSM and messaging.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "mpidsm/dsm.hpp"
#include "mpidsm/messaging.hpp"
#include "mpidsm/runtime.hpp"
#include "shmem_test_support.hpp"

namespace {

using namespace shmem_test;

TEST(ShmemSetup, PesAreTheRanksOfMpiCommWorld) {
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(shmem_my_pe(), rank);
  EXPECT_EQ(shmem_n_pes(), size);
  EXPECT_EQ(_my_pe(), rank);
  EXPECT_EQ(_num_pes(), size);
  EXPECT_EQ(shmem_query_initialized(), 1);
}

TEST(ShmemSetup, VersionNameAndThreadLevel) {
  int major = 0, minor = 0;
  shmem_info_get_version(&major, &minor);
  EXPECT_EQ(major, 1);
  EXPECT_EQ(minor, 5);
  char name[SHMEM_MAX_NAME_LEN];
  shmem_info_get_name(name);
  EXPECT_STREQ(name, SHMEM_VENDOR_STRING);  // the two agree, as 1.5 asks
  int provided = -1, mpi_level = 0;
  shmem_query_thread(&provided);
  MPI_Query_thread(&mpi_level);
  // The suite's main asks MPI for MPI_THREAD_SERIALIZED; shmem_init asks for SINGLE.
  EXPECT_EQ(provided, SHMEM_THREAD_SINGLE);
}

TEST(ShmemSetup, InitNestsUntilTheMatchingFinalize) {
  int provided = -1;
  EXPECT_EQ(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided), 0);
  EXPECT_EQ(provided, SHMEM_THREAD_SINGLE) << "the level of the first initialisation";
  shmem_init();
  shmem_finalize();
  shmem_finalize();
  EXPECT_EQ(shmem_query_initialized(), 1);
  EXPECT_EQ(shmem_n_pes(), npes());
  start_pes(0);  // once initialised, start_pes does nothing
  EXPECT_EQ(shmem_query_initialized(), 1);
}

TEST(ShmemSetup, AccessibilityAndPointers) {
  Symmetric<long> heap(4);
  long on_stack = 0;
  EXPECT_EQ(shmem_pe_accessible(me()), 1);
  EXPECT_EQ(shmem_pe_accessible(npes() - 1), 1);
  EXPECT_EQ(shmem_pe_accessible(npes()), 0);
  EXPECT_EQ(shmem_pe_accessible(-1), 0);
  EXPECT_EQ(shmem_addr_accessible(heap.get() + 3, right()), 1);
  EXPECT_EQ(shmem_addr_accessible(&on_stack, right()), 0);
  EXPECT_EQ(shmem_addr_accessible(heap.get(), npes()), 0);
  EXPECT_EQ(shmem_ptr(heap.get(), me()), heap.get());
  // A peer's copy through shmem_ptr is the memory its own loads see.
  shmem_barrier_all();
  if (auto* there = static_cast<long*>(shmem_ptr(heap.get() + 1, right()))) {
    *there = me() + 100;
  } else {
    shmem_long_p(heap.get() + 1, me() + 100, right());
  }
  shmem_barrier_all();
  EXPECT_EQ(heap[1], left() + 100);
  shmem_barrier_all();
}

TEST(ShmemMemory, EveryAllocatorIsSymmetricAndUsable) {
  auto* a = static_cast<int*>(shmem_malloc(64 * sizeof(int)));
  auto* z = static_cast<int*>(shmem_calloc(64, sizeof(int)));
  auto* h =
      static_cast<int*>(shmem_malloc_with_hints(16 * sizeof(int), SHMEM_MALLOC_ATOMICS_REMOTE));
  auto* al = static_cast<int*>(shmem_align(4096, 10 * sizeof(int)));
  auto* old_a = static_cast<int*>(shmalloc(8 * sizeof(int)));
  auto* old_al = static_cast<int*>(shmemalign(256, 8 * sizeof(int)));
  for (int* p : {a, z, h, al, old_a, old_al}) ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(al) % 4096, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(old_al) % 256, 0u);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(z[i], 0) << i;
  shmem_barrier_all();  // every PE has looked before any puts
  for (int* p : {a, z, h, al, old_a, old_al}) shmem_int_p(p + 5, me() + 1, right());
  shmem_barrier_all();
  for (int* p : {a, z, h, al, old_a, old_al}) EXPECT_EQ(p[5], left() + 1);
  // realloc keeps this PE's contents and stays symmetric.
  for (int i = 0; i < 8; ++i) a[i] = me() * 10 + i;
  a = static_cast<int*>(shmem_realloc(a, 1024 * sizeof(int)));
  ASSERT_NE(a, nullptr);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a[i], me() * 10 + i);
  shmem_int_p(a + 1000, me(), right());
  shmem_barrier_all();
  EXPECT_EQ(a[1000], left());
  old_a = static_cast<int*>(shrealloc(old_a, 16 * sizeof(int)));
  al = static_cast<int*>(shmem_realloc(al, 20 * sizeof(int)));
  EXPECT_EQ(al[5], left() + 1);
  shmem_free(a);
  shmem_free(z);
  shmem_free(h);
  shmem_free(al);
  shfree(old_a);
  shfree(old_al);
  shmem_free(nullptr);
  EXPECT_EQ(shmem_malloc(0), nullptr);
}

TEST(ShmemMemory, ARequestPastTheHeapReturnsNullOnEveryPe) {
  void* huge = shmem_malloc(SIZE_MAX / 2);
  EXPECT_EQ(huge, nullptr);
  void* fine = shmem_malloc(128);
  EXPECT_NE(fine, nullptr) << "the library goes on after a refused request";
  shmem_free(fine);
}

// One program: OpenSHMEM puts, MPI collectives on its own communicator, and
// an mpidsm runtime of its own with a DSM region and tagged messages.
TEST(ShmemMixed, MpiAndMpidsmFacesWorkBesideIt) {
  Symmetric<int> word(1);
  shmem_barrier_all();
  shmem_int_p(word.get(), me() + 1, right());
  shmem_barrier_all();
  int total = 0, mine_value = word[0];
  MPI_Allreduce(&mine_value, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, npes() * (npes() + 1) / 2);

  mpidsm::Runtime runtime(MPI_COMM_WORLD);
  {
    mpidsm::Dsm dsm(runtime);
    int* shared = dsm.allocate<int>(1024);
    if (me() == 0) shared[1] = 4242;
    dsm.barrier();
    EXPECT_EQ(shared[1], 4242);
    dsm.barrier();
    dsm.free(shared);
  }
  mpidsm::Messaging messaging(runtime);
  int received = -1, sent = me();
  auto request = messaging.irecv(left(), 7, std::span<int>(&received, 1));
  messaging.send(right(), 7, std::span<const int>(&sent, 1));
  request.wait();
  EXPECT_EQ(received, left());
  runtime.finalize();
  // And OpenSHMEM still works after the other runtime is gone.
  shmem_int_p(word.get(), 0, right());
  shmem_barrier_all();
  EXPECT_EQ(word[0], 0);
}

}  // namespace
