/* The C API from C11, under mpirun: every face, and the errors a C caller
 * gets (status, thread message) with the runtime still usable after them.
 * Exits non-zero on rank 0 when any check failed on any rank. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpidsm/mpidsm.h"

static int rank = -1, size = 0, failures = 0;

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      ++failures;                                                                              \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s (last message: %s)\n", rank, __FILE__, \
              __LINE__, #cond, mpidsm_error_message());                                        \
    }                                                                                          \
  } while (0)

#define OK(call) CHECK((call) == MPIDSM_SUCCESS)

/* A failed call gives `status` and a message containing `words`. */
#define FAILS_WITH(call, status, words)                     \
  do {                                                      \
    CHECK((call) == (status));                              \
    CHECK(strstr(mpidsm_error_message(), (words)) != NULL); \
  } while (0)

static void test_version(void) {
  int major = -1, minor = -1, patch = -1;
  OK(mpidsm_version(&major, &minor, &patch));
  CHECK(major == MPIDSM_VERSION_MAJOR && minor == MPIDSM_VERSION_MINOR &&
        patch == MPIDSM_VERSION_PATCH);
  CHECK(strcmp(mpidsm_status_string(MPIDSM_ERR_INVALID_RANK), "") != 0);
}

static void test_pgas(mpidsm_runtime_t runtime) {
  mpidsm_pgas_t pgas = NULL;
  OK(mpidsm_pgas_create(runtime, &pgas));
  uint64_t* words = NULL;
  OK(mpidsm_pgas_alloc(pgas, 4 * sizeof(uint64_t), (void**)&words));
  double* data = NULL;
  OK(mpidsm_pgas_alloc(pgas, 1024 * sizeof(double), (void**)&data));
  memset(words, 0, 4 * sizeof(uint64_t));
  OK(mpidsm_barrier(pgas));

  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double mine[1024];
  for (int i = 0; i < 1024; ++i) mine[i] = rank * 10000.0 + i;

  /* Blocking put to the right, then a barrier: the left neighbour's data arrived. */
  OK(mpidsm_put(pgas, right, data, mine, sizeof mine));
  OK(mpidsm_barrier(pgas));
  CHECK(data[0] == left * 10000.0 && data[1023] == left * 10000.0 + 1023);

  /* Blocking get of the right neighbour's copy (which holds this rank's data). */
  double back[1024];
  OK(mpidsm_get(pgas, back, right, data, sizeof back));
  CHECK(memcmp(back, mine, sizeof mine) == 0);
  OK(mpidsm_barrier(pgas));

  /* Non-blocking: complete at quiet. */
  for (int i = 0; i < 1024; ++i) mine[i] = -mine[i];
  OK(mpidsm_put_nbi(pgas, right, data + 512, mine + 512, 512 * sizeof(double)));
  OK(mpidsm_quiet(pgas));
  OK(mpidsm_get_nbi(pgas, back, right, data, sizeof back));
  OK(mpidsm_quiet(pgas));
  CHECK(back[600] == mine[600] && back[100] == -mine[100]);
  OK(mpidsm_barrier(pgas));

  /* Atomics: every rank adds to rank 0's counter, then compare-swap. */
  uint64_t old = 0;
  OK(mpidsm_atomic_fetch_add_u64(pgas, 0, &words[0], 1, &old));
  CHECK(old < (uint64_t)size);
  OK(mpidsm_atomic_add_u64(pgas, 0, &words[1], 2));
  OK(mpidsm_barrier(pgas));
  uint64_t value = 0;
  OK(mpidsm_atomic_fetch_u64(pgas, 0, &words[0], &value));
  CHECK(value == (uint64_t)size);
  OK(mpidsm_atomic_fetch_u64(pgas, 0, &words[1], &value));
  CHECK(value == 2u * (uint64_t)size);
  OK(mpidsm_barrier(pgas));
  if (rank == 0) {
    OK(mpidsm_atomic_compare_swap_u64(pgas, right, &words[2], 0, 7, &old));
    CHECK(old == 0);
    OK(mpidsm_atomic_swap_u64(pgas, right, &words[2], 9, &old));
    CHECK(old == 7);
    OK(mpidsm_atomic_set_u64(pgas, right, &words[2], 11));
  }
  OK(mpidsm_barrier(pgas));
  if (rank == 1 % size) CHECK(words[2] == 11);

  /* Put with signal: the data is there once the signal is. */
  mine[0] = 42.0 + rank;
  OK(mpidsm_put_signal(pgas, right, data, mine, sizeof(double), &words[3], 1, MPIDSM_SIGNAL_ADD));
  uint64_t seen = 0;
  OK(mpidsm_wait_until_u64(pgas, &words[3], MPIDSM_CMP_GE, 1, &seen));
  CHECK(seen >= 1);
  CHECK(data[0] == 42.0 + left);
  OK(mpidsm_barrier(pgas));

  /* Bad input: typed errors that name the problem; the runtime stays usable. */
  FAILS_WITH(mpidsm_put(pgas, size, data, mine, 8), MPIDSM_ERR_INVALID_RANK, "rank");
  FAILS_WITH(mpidsm_put(pgas, right, mine, mine, 8), MPIDSM_ERR_UNREGISTERED, "no live allocation");
  FAILS_WITH(mpidsm_put(pgas, right, data, mine, 2048 * sizeof(double)), MPIDSM_ERR_OUT_OF_RANGE,
             "outside");
  FAILS_WITH(mpidsm_put(NULL, right, data, mine, 8), MPIDSM_ERR_INVALID_ARGUMENT,
             "mpidsm_put: pgas is NULL");
  FAILS_WITH(mpidsm_wait_until_u64(pgas, &words[0], 99, 0, NULL), MPIDSM_ERR_INVALID_ARGUMENT,
             "cmp 99");
  FAILS_WITH(mpidsm_pgas_free(pgas, data + 1), MPIDSM_ERR_UNREGISTERED, "starts at");
  OK(mpidsm_get(pgas, back, right, data, 8)); /* still usable */

  OK(mpidsm_pgas_free(pgas, data));
  OK(mpidsm_pgas_free(pgas, words));
  OK(mpidsm_pgas_destroy(&pgas));
  CHECK(pgas == NULL);
  OK(mpidsm_pgas_destroy(&pgas)); /* NULL is ignored */
}

static void test_dsm(mpidsm_runtime_t runtime) {
  mpidsm_dsm_t dsm = NULL;
  OK(mpidsm_dsm_create(runtime, &dsm));
  const long page = sysconf(_SC_PAGESIZE);

  /* Cyclic placement, page by page from rank 0. */
  mpidsm_placement_t cyclic = {MPIDSM_PLACE_CYCLIC, 1, 0, NULL, 0};
  int* shared = NULL;
  const size_t count = (size_t)(4 * size) * (size_t)page / sizeof(int);
  OK(mpidsm_dsm_alloc(dsm, count * sizeof(int), &cyclic, (void**)&shared));
  for (int p = 0; p < 4 * size; ++p) {
    int home = -1;
    OK(mpidsm_dsm_home_of(dsm, (char*)shared + p * page, &home));
    CHECK(home == p % size);
  }
  CHECK(shared[count - 1] == 0); /* reads as zero at first */
  OK(mpidsm_dsm_barrier(dsm));   /* before anyone writes: reading a page while
                                    another rank writes it may see either value */

  /* Each rank writes its share; a barrier makes everything visible. */
  for (size_t i = (size_t)rank; i < count; i += (size_t)size) shared[i] = (int)i * 3;
  OK(mpidsm_dsm_barrier(dsm));
  int wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += shared[i] != (int)i * 3;
  CHECK(wrong == 0);
  OK(mpidsm_dsm_barrier(dsm));

  /* A lock-protected counter on rank 0's block. */
  mpidsm_placement_t on_last = {MPIDSM_PLACE_ON_RANK, 0, size - 1, NULL, 0};
  long* counter = NULL;
  OK(mpidsm_dsm_alloc(dsm, sizeof(long), &on_last, (void**)&counter));
  for (int i = 0; i < 100; ++i) {
    OK(mpidsm_dsm_lock(dsm, 3));
    ++*counter;
    OK(mpidsm_dsm_unlock(dsm, 3));
  }
  OK(mpidsm_dsm_barrier(dsm));
  CHECK(*counter == 100L * size);
  OK(mpidsm_dsm_barrier(dsm)); /* every rank has read it before rank 0 changes it */

  /* A flag: rank 0 publishes a value, the others wait for it. */
  if (rank == 0) {
    *counter = -5;
    OK(mpidsm_dsm_set_flag(dsm, 1));
  } else {
    OK(mpidsm_dsm_wait_flag(dsm, 1));
    CHECK(*counter == -5);
  }
  OK(mpidsm_dsm_barrier(dsm));
  OK(mpidsm_dsm_reset_flag(dsm, 1));

  /* A pairwise sync between ranks 0 and 1 carries rank 1's write to rank 0. */
  OK(mpidsm_dsm_barrier(dsm)); /* everyone has read the flag's value */
  if (size > 1 && rank < 2) {
    const int peer = 1 - rank;
    if (rank == 1) *counter = 77;
    OK(mpidsm_dsm_sync_with(dsm, &peer, 1));
    CHECK(*counter == 77);
  }
  OK(mpidsm_dsm_sync_with(dsm, NULL, 0)); /* no peers: a release */
  OK(mpidsm_dsm_barrier(dsm));

  /* Blocks placement: the homes given. */
  mpidsm_block_t blocks[2] = {{(size_t)page, size - 1}, {(size_t)page, 0}};
  mpidsm_placement_t listed = {MPIDSM_PLACE_BLOCKS, 0, 0, blocks, 2};
  char* two = NULL;
  OK(mpidsm_dsm_alloc(dsm, 2 * (size_t)page, &listed, (void**)&two));
  int home = -1;
  OK(mpidsm_dsm_home_of(dsm, two + page, &home));
  CHECK(home == 0);
  OK(mpidsm_dsm_home_of(dsm, two, &home));
  CHECK(home == size - 1);

  OK(mpidsm_dsm_prefetch(dsm, shared, count * sizeof(int)));
  mpidsm_dsm_stats_t stats;
  OK(mpidsm_dsm_stats(dsm, &stats));
  CHECK(stats.barriers >= 3);
  CHECK(size == 1 || stats.read_faults + stats.write_faults > 0);
  size_t locks = 0;
  OK(mpidsm_dsm_lock_count(dsm, &locks));
  CHECK(locks > 3);

  /* Bad input. */
  FAILS_WITH(mpidsm_dsm_lock(dsm, locks), MPIDSM_ERR_OUT_OF_RANGE, "lock");
  FAILS_WITH(mpidsm_dsm_sync_with(dsm, NULL, 1), MPIDSM_ERR_INVALID_ARGUMENT, "peers");
  FAILS_WITH(mpidsm_dsm_sync_with(dsm, &rank, 1), MPIDSM_ERR_INVALID_ARGUMENT, "itself");
  mpidsm_placement_t bad = {42, 0, 0, NULL, 0};
  void* nowhere = (void*)1;
  FAILS_WITH(mpidsm_dsm_alloc(dsm, 64, &bad, &nowhere), MPIDSM_ERR_INVALID_ARGUMENT, "kind 42");
  CHECK(nowhere == NULL);
  FAILS_WITH(mpidsm_dsm_stats(dsm, NULL), MPIDSM_ERR_INVALID_ARGUMENT, "stats is NULL");
  FAILS_WITH(mpidsm_dsm_set_home_migration(dsm, 3), MPIDSM_ERR_INVALID_ARGUMENT,
             "mpidsm_dsm_set_home_migration: mode 3");

  /* Home migration on: a page homed on the next rank, written by this one
   * alone for three intervals, is homed here after them. */
  if (size > 1) {
    OK(mpidsm_dsm_set_home_migration(dsm, MPIDSM_HOME_MIGRATION_ON));
    char* moving = NULL;
    OK(mpidsm_dsm_alloc(dsm, (size_t)(size * page), &cyclic, (void**)&moving));
    char* mine = moving + ((rank + 1) % size) * page;
    for (int round = 1; round <= 3; ++round) {
      mine[0] = (char)round;
      OK(mpidsm_dsm_barrier(dsm));
    }
    int home = -1;
    OK(mpidsm_dsm_home_of(dsm, mine, &home));
    CHECK(home == rank);
    OK(mpidsm_dsm_stats(dsm, &stats));
    CHECK(stats.homes_gained >= 1 && stats.homes_lost >= 1);
    OK(mpidsm_dsm_set_home_migration(dsm, MPIDSM_HOME_MIGRATION_ADAPTIVE));
    OK(mpidsm_dsm_free(dsm, moving));
  }

  /* A coherence policy per allocation: reported, counted, and checked. */
  char* updated = NULL;
  OK(mpidsm_dsm_alloc_policy(dsm, (size_t)(2 * page), NULL, MPIDSM_COHERENCE_UPDATE,
                             (void**)&updated));
  int policy = -1;
  OK(mpidsm_dsm_coherence_of(dsm, updated + page, &policy));
  CHECK(policy == MPIDSM_COHERENCE_UPDATE);
  OK(mpidsm_dsm_stats(dsm, &stats));
  CHECK(stats.pages_update >= 2);
  if (rank == size - 1) updated[page] = 7;
  OK(mpidsm_dsm_barrier(dsm));
  CHECK(updated[page] == 7);
  OK(mpidsm_dsm_free(dsm, updated));
  void* unmade = (void*)1;
  FAILS_WITH(mpidsm_dsm_alloc_policy(dsm, 64, NULL, 7, &unmade), MPIDSM_ERR_INVALID_ARGUMENT,
             "mpidsm_dsm_alloc_policy: policy 7");
  CHECK(unmade == NULL);

  OK(mpidsm_dsm_reset_stats(dsm));
  OK(mpidsm_dsm_stats(dsm, &stats));
  CHECK(stats.barriers == 0);
  OK(mpidsm_dsm_free(dsm, two));
  OK(mpidsm_dsm_free(dsm, counter));
  OK(mpidsm_dsm_free(dsm, shared));
  OK(mpidsm_dsm_destroy(&dsm));
  CHECK(dsm == NULL);
}

/* Rank 0 sends to rank 1 (blocking sends to oneself would wait for a receive
 * that comes later, as in MPI: one rank only checks errors). */
static void test_messaging(mpidsm_runtime_t runtime) {
  const int right = 1;
  int out[64], in[64];
  for (int i = 0; i < 64; ++i) out[i] = rank * 100 + i;
  /* Rendezvous-sized too: 1 MiB. */
  const size_t big = 1 << 20;
  char* big_out = malloc(big);
  char* big_in = malloc(big);
  memset(big_out, rank + 1, big);
  if (rank == 0 && size > 1) {
    OK(mpidsm_send(runtime, right, 7, out, sizeof out));
    OK(mpidsm_send(runtime, right, 8, big_out, big));
  }
  if (rank == 1) {
    mpidsm_recv_info_t info;
    OK(mpidsm_recv(runtime, MPIDSM_ANY_SOURCE, 7, in, sizeof in, &info));
    CHECK(info.source == 0 && info.tag == 7 && info.bytes == sizeof in);
    CHECK(in[63] == 63);
    OK(mpidsm_recv(runtime, 0, MPIDSM_ANY_TAG, big_in, big, NULL));
    CHECK(big_in[big - 1] == 1);
  }
  /* Truncation is reported, and the message is consumed. */
  if (rank == 0 && size > 1) OK(mpidsm_send(runtime, right, 9, out, sizeof out));
  if (rank == 1) FAILS_WITH(mpidsm_recv(runtime, 0, 9, in, 8, NULL), MPIDSM_ERR_TRUNCATED, "bytes");
  FAILS_WITH(mpidsm_send(runtime, size + 3, 1, out, 4), MPIDSM_ERR_INVALID_RANK, "rank");
  free(big_out);
  free(big_in);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_version();

  mpidsm_runtime_t runtime = NULL;
  FAILS_WITH(mpidsm_runtime_create(MPI_COMM_WORLD, NULL), MPIDSM_ERR_INVALID_ARGUMENT,
             "runtime is NULL");
  OK(mpidsm_runtime_create(MPI_COMM_WORLD, &runtime));
  int r = -1, n = -1;
  OK(mpidsm_runtime_rank(runtime, &r));
  OK(mpidsm_runtime_size(runtime, &n));
  CHECK(r == rank && n == size);

  test_pgas(runtime);
  test_dsm(runtime);
  test_messaging(runtime);

  OK(mpidsm_runtime_destroy(&runtime));
  CHECK(runtime == NULL);

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("c_api_test: %d failed checks on %d ranks\n", total, size);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
