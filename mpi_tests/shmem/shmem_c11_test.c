/* An OpenSHMEM program as existing codes are written: C11, shmem_init alone
 * (which starts MPI), the type-generic interfaces, then shmem_finalize
 * (which ends MPI). Exits nonzero naming each check that failed. */
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition)                                                                     \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      fprintf(stderr, "PE %d: %s:%d: check failed: %s\n", shmem_my_pe(), __FILE__, __LINE__, \
              #condition);                                                                   \
      ++failures;                                                                            \
    }                                                                                        \
  } while (0)

int main(void) {
  int mpi_up = 1;
  MPI_Initialized(&mpi_up);
  if (mpi_up) {
    fprintf(stderr, "MPI is up before shmem_init\n");
    return 1;
  }
  shmem_init();
  MPI_Initialized(&mpi_up);
  CHECK(mpi_up);
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
  CHECK(me == rank);

  long* longs = shmem_calloc(8, sizeof(long));
  double* doubles = shmem_calloc(8, sizeof(double));
  unsigned* uints = shmem_calloc(8, sizeof(unsigned));
  short* shorts = shmem_calloc(4, sizeof(short));
  uint64_t* signal = shmem_calloc(1, sizeof(uint64_t));
  shmem_barrier_all();

  /* RMA: the element type picks the routine, with and without a context. */
  long l_src[2] = {me + 10, me + 20};
  double d_src[2] = {me + 0.5, me + 1.5};
  shmem_put(longs, l_src, 2, right);
  shmem_put(SHMEM_CTX_DEFAULT, doubles, d_src, 2, right);
  shmem_p(longs + 2, (long)me, right);
  shmem_p(SHMEM_CTX_DEFAULT, doubles + 2, me * 2.0, right);
  shmem_put_nbi(uints, (const unsigned[]){me + 1u}, 1, right);
  shmem_quiet();
  shmem_barrier_all();
  CHECK(longs[0] == left + 10 && longs[1] == left + 20 && longs[2] == left);
  CHECK(doubles[0] == left + 0.5 && doubles[1] == left + 1.5 && doubles[2] == left * 2.0);
  CHECK(uints[0] == left + 1u);
  CHECK(shmem_g(longs + 1, right) == me + 20);
  CHECK(shmem_g(SHMEM_CTX_DEFAULT, doubles + 2, right) == me * 2.0);
  long back[2] = {0, 0};
  shmem_get(back, longs, 2, right);
  CHECK(back[0] == me + 10 && back[1] == me + 20);
  shmem_iput(longs + 4, l_src, 2, 1, 2, right);
  shmem_barrier_all();
  CHECK(longs[4] == left + 10 && longs[6] == left + 20);
  shmem_iget(back, longs + 4, 1, 2, 2, right);
  CHECK(back[0] == me + 10 && back[1] == me + 20);

  /* Signals and waits. */
  shmem_barrier_all();
  shmem_put_signal(doubles + 4, d_src, 2, signal, 1, SHMEM_SIGNAL_ADD, right);
  shmem_wait_until(signal, SHMEM_CMP_EQ, 1);
  CHECK(doubles[4] == left + 0.5 && doubles[5] == left + 1.5);
  shmem_p(shorts + 1, (short)7, right);
  shmem_wait_until(shorts + 1, SHMEM_CMP_EQ, (short)7);
  CHECK(shmem_test(shorts + 1, SHMEM_CMP_GT, (short)6));
  CHECK(shmem_wait_until_any(shorts, 4, NULL, SHMEM_CMP_EQ, (short)7) == 1);
  size_t indices[4];
  CHECK(shmem_test_some(shorts, 4, indices, NULL, SHMEM_CMP_NE, (short)0) == 1 && indices[0] == 1);

  /* Atomics. */
  shmem_barrier_all();
  shmem_atomic_inc(longs + 7, 0);
  shmem_atomic_add(SHMEM_CTX_DEFAULT, longs + 7, 2L, 0);
  long old = shmem_atomic_fetch_add(longs + 7, 3L, 0);
  CHECK(old >= 0 && old < 6L * n);
  shmem_atomic_or(uints + 1, 1u << me, 0);
  unsigned fetched = 0;
  shmem_atomic_fetch_xor_nbi(&fetched, uints + 2, 1u << me, 0);
  shmem_atomic_set(doubles + 6, (double)me, right);
  shmem_quiet();
  shmem_barrier_all();
  if (me == 0) {
    CHECK(longs[7] == 6L * n);
    CHECK(uints[1] == (1u << n) - 1);
    CHECK(uints[2] == (1u << n) - 1);
  }
  CHECK(shmem_atomic_fetch(doubles + 6, me) == (double)left);
  CHECK(shmem_atomic_swap(doubles + 6, 0.0, me) == (double)left);
  CHECK(shmem_atomic_compare_swap(longs + 3, 0L, 1L, me) == 0);

  /* Collectives. */
  long sum = 0, mine = me + 1;
  shmem_sum_reduce(SHMEM_TEAM_WORLD, &sum, &mine, 1);
  CHECK(sum == (long)n * (n + 1) / 2);
  double top = 0, mine_d = me;
  shmem_max_reduce(SHMEM_TEAM_WORLD, &top, &mine_d, 1);
  CHECK(top == n - 1.0);
  unsigned bits = 0, bit = 1u << me;
  shmem_or_reduce(SHMEM_TEAM_WORLD, &bits, &bit, 1);
  CHECK(bits == (1u << n) - 1);
  long all[64];
  shmem_fcollect(SHMEM_TEAM_WORLD, all, &mine, 1);
  CHECK(all[n - 1] == n);
  long root_value = 0;
  shmem_broadcast(SHMEM_TEAM_WORLD, &root_value, &mine, 1, 0);
  CHECK(root_value == 1);

  shmem_free(signal);
  shmem_free(shorts);
  shmem_free(uints);
  shmem_free(doubles);
  shmem_free(longs);
  const int failed = failures;
  shmem_finalize();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    fprintf(stderr, "MPI is still up after shmem_finalize\n");
    return 1;
  }
  if (failed == 0) printf("PE %d: every check passed\n", me);
  return failed ? 1 : 0;
}
