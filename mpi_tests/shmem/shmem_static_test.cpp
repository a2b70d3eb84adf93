// Global and static variables are symmetric (OpenSHMEM 1.5, section 3):
// puts, gets, atomics, signals, waits and locks take them as they take the
// heap's objects.
#include <vector>

#include "shmem_test_support.hpp"

long global_counter;               // .bss
long global_flags[4];              // .bss
int global_array[16] = {1, 2, 3};  // .data
namespace {
using namespace shmem_test;
uint64_t static_signal;  // NOLINT: internal linkage, still the executable's data
long static_lock;
double static_values[8] = {0.5};

TEST(ShmemStatic, PutsGetsAndAtomicsReachOtherPesVariables) {
  shmem_barrier_all();
  const std::vector<int> mine = {me() + 10, me() + 20, me() + 30, me() + 40};
  shmem_int_put(global_array + 4, mine.data(), mine.size(), right());
  shmem_double_p(static_values + 1, me() + 0.25, right());
  shmem_long_atomic_add(&global_counter, 1, 0);
  shmem_barrier_all();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(global_array[4 + i], left() + 10 * (i + 1)) << i;
  EXPECT_EQ(global_array[1], 2) << "data the program set stays";
  EXPECT_EQ(static_values[1], left() + 0.25);
  EXPECT_EQ(shmem_long_atomic_fetch(&global_counter, 0), npes());
  std::vector<int> back(4);
  shmem_int_get(back.data(), global_array + 4, 4, right());
  EXPECT_EQ(back, mine);
  EXPECT_EQ(shmem_double_g(static_values, right()), 0.5);
  EXPECT_EQ(shmem_addr_accessible(&global_counter, right()), 1);
  EXPECT_EQ(shmem_ptr(&global_counter, me()), &global_counter);
  shmem_barrier_all();
  if (me() == 0) global_counter = 0;
  shmem_barrier_all();
}

TEST(ShmemStatic, SignalsWaitsAndLocksOnStaticWords) {
  shmem_barrier_all();
  const long payload[2] = {me() + 100L, me() + 200L};
  shmem_long_put_signal(global_flags, payload, 2, &static_signal, 1, SHMEM_SIGNAL_ADD, right());
  shmem_signal_wait_until(&static_signal, SHMEM_CMP_EQ, 1);
  EXPECT_EQ(global_flags[0], left() + 100L);
  EXPECT_EQ(global_flags[1], left() + 200L);
  shmem_long_p(global_flags + 3, 7, right());
  shmem_long_wait_until(global_flags + 3, SHMEM_CMP_EQ, 7);
  for (int i = 0; i < 20; ++i) {
    shmem_set_lock(&static_lock);
    shmem_long_p(global_flags + 2, shmem_long_g(global_flags + 2, 0) + 1, 0);
    shmem_clear_lock(&static_lock);
  }
  shmem_barrier_all();
  EXPECT_EQ(shmem_long_g(global_flags + 2, 0), 20L * npes());
  shmem_barrier_all();
  static_signal = 0;
  for (long& flag : global_flags) flag = 0;
  shmem_barrier_all();
}

}  // namespace
