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
  OK(mpidsm_pgas_barrier(pgas));

  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double mine[1024];
  for (int i = 0; i < 1024; ++i) mine[i] = rank * 10000.0 + i;

  /* Blocking put to the right, then a barrier: the left neighbour's data arrived. */
  OK(mpidsm_pgas_put(pgas, data, mine, sizeof mine, right));
  OK(mpidsm_pgas_barrier(pgas));
  CHECK(data[0] == left * 10000.0 && data[1023] == left * 10000.0 + 1023);

  /* Blocking get of the right neighbour's copy (which holds this rank's data). */
  double back[1024];
  OK(mpidsm_pgas_get(pgas, back, data, sizeof back, right));
  CHECK(memcmp(back, mine, sizeof mine) == 0);
  OK(mpidsm_pgas_barrier(pgas));

  /* Non-blocking: complete at quiet. */
  for (int i = 0; i < 1024; ++i) mine[i] = -mine[i];
  OK(mpidsm_pgas_put_nbi(pgas, data + 512, mine + 512, 512 * sizeof(double), right));
  OK(mpidsm_pgas_quiet(pgas));
  OK(mpidsm_pgas_get_nbi(pgas, back, data, sizeof back, right));
  OK(mpidsm_pgas_quiet(pgas));
  CHECK(back[600] == mine[600] && back[100] == -mine[100]);
  OK(mpidsm_pgas_barrier(pgas));

  /* Atomics: every rank adds to rank 0's counter, then compare-swap. */
  uint64_t old = 0;
  OK(mpidsm_pgas_atomic_fetch_add_u64(pgas, &words[0], 1, 0, &old));
  CHECK(old < (uint64_t)size);
  OK(mpidsm_pgas_atomic_add_u64(pgas, &words[1], 2, 0));
  OK(mpidsm_pgas_barrier(pgas));
  uint64_t value = 0;
  OK(mpidsm_pgas_atomic_fetch_u64(pgas, &words[0], 0, &value));
  CHECK(value == (uint64_t)size);
  OK(mpidsm_pgas_atomic_fetch_u64(pgas, &words[1], 0, &value));
  CHECK(value == 2u * (uint64_t)size);
  OK(mpidsm_pgas_barrier(pgas));
  if (rank == 0) {
    OK(mpidsm_pgas_atomic_compare_swap_u64(pgas, &words[2], 0, 7, right, &old));
    CHECK(old == 0);
    OK(mpidsm_pgas_atomic_swap_u64(pgas, &words[2], 9, right, &old));
    CHECK(old == 7);
    OK(mpidsm_pgas_atomic_set_u64(pgas, &words[2], 11, right));
  }
  OK(mpidsm_pgas_barrier(pgas));
  if (rank == 1 % size) CHECK(words[2] == 11);

  /* Put with signal: the data is there once the signal is. */
  mine[0] = 42.0 + rank;
  OK(mpidsm_pgas_put_signal(pgas, data, mine, sizeof(double), &words[3], 1, MPIDSM_SIGNAL_ADD,
                            right));
  uint64_t seen = 0;
  OK(mpidsm_pgas_wait_until_u64(pgas, &words[3], MPIDSM_CMP_GE, 1, &seen));
  CHECK(seen >= 1);
  CHECK(data[0] == 42.0 + left);
  OK(mpidsm_pgas_barrier(pgas));

  /* Bad input: typed errors that name the problem; the runtime stays usable. */
  FAILS_WITH(mpidsm_pgas_put(pgas, data, mine, 8, size), MPIDSM_ERR_INVALID_RANK, "rank");
  FAILS_WITH(mpidsm_pgas_put(pgas, mine, mine, 8, right), MPIDSM_ERR_UNREGISTERED,
             "no live allocation");
  FAILS_WITH(mpidsm_pgas_put(pgas, data, mine, 2048 * sizeof(double), right),
             MPIDSM_ERR_OUT_OF_RANGE, "outside");
  FAILS_WITH(mpidsm_pgas_put(NULL, data, mine, 8, right), MPIDSM_ERR_INVALID_ARGUMENT,
             "mpidsm_pgas_put: pgas is NULL");
  FAILS_WITH(mpidsm_pgas_wait_until_u64(pgas, &words[0], 99, 0, NULL), MPIDSM_ERR_INVALID_ARGUMENT,
             "cmp 99");
  FAILS_WITH(mpidsm_pgas_free(pgas, data + 1), MPIDSM_ERR_UNREGISTERED, "starts at");
  OK(mpidsm_pgas_get(pgas, back, data, 8, right)); /* still usable */

  OK(mpidsm_pgas_free(pgas, data));
  OK(mpidsm_pgas_free(pgas, words));
  OK(mpidsm_pgas_destroy(&pgas));
  CHECK(pgas == NULL);
  OK(mpidsm_pgas_destroy(&pgas)); /* NULL is ignored */
}

/* Requests, strided transfers, atomics of every width and sign, and the
 * deprecated names. */
static void test_pgas_more(mpidsm_runtime_t runtime) {
  mpidsm_pgas_t pgas = NULL;
  OK(mpidsm_pgas_create(runtime, &pgas));
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int* grid = NULL; /* 8 x 8, row-major */
  OK(mpidsm_pgas_alloc(pgas, 64 * sizeof(int), (void**)&grid));
  int32_t* w32 = NULL;
  OK(mpidsm_pgas_alloc(pgas, 4 * sizeof(int32_t), (void**)&w32));
  int64_t* w64 = NULL;
  OK(mpidsm_pgas_alloc(pgas, 4 * sizeof(int64_t), (void**)&w64));
  memset(grid, 0, 64 * sizeof(int));
  memset(w32, 0, 4 * sizeof(int32_t));
  memset(w64, 0, 4 * sizeof(int64_t));
  OK(mpidsm_pgas_barrier(pgas));

  /* put_nb with a request, tested until done; get_nb waited for. */
  int row[8];
  for (int i = 0; i < 8; ++i) row[i] = rank * 100 + i;
  mpidsm_request_t request = {0};
  OK(mpidsm_pgas_put_nb(pgas, grid, row, sizeof row, right, &request));
  FAILS_WITH(mpidsm_pgas_put_nb(pgas, grid, row, sizeof row, right, &request),
             MPIDSM_ERR_INVALID_ARGUMENT, "still holds an operation");
  int done = 0;
  while (!done) OK(mpidsm_request_test(&request, &done, NULL));
  CHECK(request.active == 0);
  OK(mpidsm_request_wait(&request, NULL)); /* a spent request is done */
  OK(mpidsm_pgas_barrier(pgas));
  int got[8] = {0};
  OK(mpidsm_pgas_get_nb(pgas, got, grid, sizeof got, right, &request));
  OK(mpidsm_request_wait(&request, NULL));
  CHECK(got[7] == rank * 100 + 7);
  OK(mpidsm_pgas_barrier(pgas));

  /* Strided: this rank's row into column 1 of the right neighbour's grid
   * (stride 8 elements there), then that column back. */
  OK(mpidsm_pgas_iput(pgas, grid + 1, row, 8, 1, sizeof(int), 1, 8, right));
  OK(mpidsm_pgas_barrier(pgas));
  CHECK(grid[1] == left * 100 && grid[57] == left * 100 + 7);
  int column[8] = {0};
  OK(mpidsm_pgas_iget(pgas, column, grid + 1, 1, 8, sizeof(int), 1, 8, right));
  CHECK(column[3] == rank * 100 + 3);
  FAILS_WITH(mpidsm_pgas_iput(pgas, grid, row, 8, 1, 3, 1, 8, right), MPIDSM_ERR_INVALID_ARGUMENT,
             "mpidsm_pgas_iput: element_bytes 3");
  OK(mpidsm_pgas_barrier(pgas));

  /* Signed and unsigned atomics of 32 and 64 bits, on rank 0's words. */
  int32_t old32 = 0;
  OK(mpidsm_pgas_atomic_fetch_add_i32(pgas, &w32[0], -2, 0, &old32));
  OK(mpidsm_pgas_atomic_add_u32(pgas, (uint32_t*)&w32[1], 3u, 0));
  OK(mpidsm_pgas_atomic_or_i64(pgas, &w64[0], (int64_t)1 << (rank % 60), 0));
  int64_t old64 = 0;
  OK(mpidsm_pgas_atomic_fetch_xor_i64(pgas, &w64[1], -1, 0, &old64));
  OK(mpidsm_pgas_barrier(pgas));
  int32_t v32 = 0;
  OK(mpidsm_pgas_atomic_fetch_i32(pgas, &w32[0], 0, &v32));
  CHECK(v32 == -2 * size);
  uint32_t u32 = 0;
  OK(mpidsm_pgas_atomic_fetch_u32(pgas, (uint32_t*)&w32[1], 0, &u32));
  CHECK(u32 == 3u * (uint32_t)size);
  int64_t v64 = 0;
  OK(mpidsm_pgas_atomic_fetch_i64(pgas, &w64[1], 0, &v64));
  CHECK(v64 == (size % 2 ? -1 : 0));
  OK(mpidsm_pgas_barrier(pgas));
  if (rank == 0) {
    OK(mpidsm_pgas_atomic_compare_swap_i32(pgas, &w32[2], 0, -7, right, &old32));
    CHECK(old32 == 0);
    OK(mpidsm_pgas_atomic_swap_i64(pgas, &w64[2], -9, right, &old64));
    CHECK(old64 == 0);
    OK(mpidsm_pgas_atomic_fetch_and_u64(pgas, (uint64_t*)&w64[2], 0xFFu, right, NULL));
    OK(mpidsm_pgas_atomic_set_i32(pgas, &w32[3], -1, right));
    OK(mpidsm_pgas_quiet(pgas));
  }
  if (rank == 1 % size) {
    int32_t seen = 0;
    OK(mpidsm_pgas_wait_until_i32(pgas, &w32[3], MPIDSM_CMP_EQ, -1, &seen));
    CHECK(seen == -1 && w32[2] == -7);
    CHECK(w64[2] == (-9 & 0xFF));
    int now = 0;
    OK(mpidsm_pgas_test_i64(pgas, &w64[2], MPIDSM_CMP_GT, 0, &now));
    CHECK(now == 1);
  }
  FAILS_WITH(mpidsm_pgas_test_u32(pgas, (uint32_t*)&w32[0], MPIDSM_CMP_EQ, 0, NULL),
             MPIDSM_ERR_INVALID_ARGUMENT, "mpidsm_pgas_test_u32: true_now is NULL");
  FAILS_WITH(mpidsm_pgas_atomic_add_i32(NULL, &w32[0], 1, 0), MPIDSM_ERR_INVALID_ARGUMENT,
             "mpidsm_pgas_atomic_add_i32: pgas is NULL");
  OK(mpidsm_pgas_barrier(pgas));

  /* The deprecated names still work, in their old argument order. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  OK(mpidsm_put(pgas, right, grid, row, sizeof(int)));
  OK(mpidsm_barrier(pgas));
  CHECK(grid[0] == left * 100);
  uint64_t old = 0;
  OK(mpidsm_atomic_fetch_add_u64(pgas, 0, (uint64_t*)&w64[3], 1, &old));
  OK(mpidsm_quiet(pgas));
  FAILS_WITH(mpidsm_get(pgas, got, size, grid, 4), MPIDSM_ERR_INVALID_RANK, "mpidsm_pgas_get");
#pragma GCC diagnostic pop
  OK(mpidsm_pgas_barrier(pgas));

  OK(mpidsm_pgas_free(pgas, w64));
  OK(mpidsm_pgas_free(pgas, w32));
  OK(mpidsm_pgas_free(pgas, grid));
  OK(mpidsm_pgas_destroy(&pgas));
}

/* OpenSHMEM's everyday features: zeroed allocation, float atomics,
 * non-blocking fetching atomics, local pointers, waits on arrays,
 * put_signal_nbi and signal_fetch. */
static void test_pgas_shmem_features(mpidsm_runtime_t runtime) {
  mpidsm_pgas_t pgas = NULL;
  OK(mpidsm_pgas_create(runtime, &pgas));
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int64_t* counter = NULL;
  OK(mpidsm_pgas_alloc_zeroed(pgas, 64 * sizeof(int64_t), (void**)&counter));
  int zero = 1;
  for (int i = 0; i < 64; ++i) zero = zero && counter[i] == 0;
  CHECK(zero);

  /* float and double */
  float* f = NULL;
  double* d = NULL;
  OK(mpidsm_pgas_alloc_zeroed(pgas, 2 * sizeof(float), (void**)&f));
  OK(mpidsm_pgas_alloc_zeroed(pgas, 2 * sizeof(double), (void**)&d));
  OK(mpidsm_pgas_atomic_set_f32(pgas, &f[0], 0.5f + (float)rank, right));
  OK(mpidsm_pgas_atomic_set_f64(pgas, &d[0], -2.0 * rank, right));
  OK(mpidsm_pgas_barrier(pgas));
  float fv = 0;
  double dv = 0;
  OK(mpidsm_pgas_atomic_fetch_f32(pgas, &f[0], rank, &fv));
  OK(mpidsm_pgas_atomic_swap_f64(pgas, &d[0], 1.25, rank, &dv));
  CHECK(fv == 0.5f + (float)left && dv == -2.0 * left);
  OK(mpidsm_pgas_atomic_swap_nbi_f32(pgas, &fv, &f[1], 3.0f, right));
  OK(mpidsm_pgas_quiet(pgas));
  CHECK(fv == 0.0f);

  /* non-blocking fetching atomics: distinct tickets from rank 0's counter */
  int64_t tickets[8];
  for (int i = 0; i < 8; ++i)
    OK(mpidsm_pgas_atomic_fetch_add_nbi_i64(pgas, &tickets[i], &counter[0], 1, 0));
  OK(mpidsm_pgas_quiet(pgas));
  for (int i = 1; i < 8; ++i) CHECK(tickets[i] > tickets[i - 1]);
  OK(mpidsm_pgas_barrier(pgas));
  int64_t total = 0;
  OK(mpidsm_pgas_atomic_fetch_nbi_i64(pgas, &total, &counter[0], 0));
  OK(mpidsm_pgas_quiet(pgas));
  CHECK(total == 8 * size);
  FAILS_WITH(mpidsm_pgas_atomic_fetch_add_nbi_i64(pgas, NULL, &counter[0], 1, 0),
             MPIDSM_ERR_INVALID_ARGUMENT, "mpidsm_pgas_atomic_fetch_add_nbi_i64: fetch is NULL");

  /* local pointers: always to this rank's own copy */
  void* mine = NULL;
  OK(mpidsm_pgas_local_pointer(pgas, &counter[5], rank, &mine));
  CHECK(mine == &counter[5]);
  void* theirs = NULL;
  OK(mpidsm_pgas_local_pointer(pgas, &counter[5], right, &theirs));
  if (theirs)
    *(int64_t*)theirs = 500 + rank; /* a same-node peer's copy */
  else
    OK(mpidsm_pgas_put(pgas, &counter[5], &(int64_t){500 + rank}, sizeof(int64_t), right));
  OK(mpidsm_pgas_barrier(pgas));
  CHECK(counter[5] == 500 + left);

  /* waits on arrays: every rank raises its own word in rank 0's counter[8..] */
  int64_t* flags = &counter[8];
  OK(mpidsm_pgas_atomic_set_i64(pgas, &flags[rank], 1, 0));
  if (rank == 0) {
    int status[64] = {0};
    for (int i = size; i < 64 - 8; ++i) status[i] = 1; /* never raised: left out */
    OK(mpidsm_pgas_wait_until_all_i64(pgas, flags, 64 - 8, status, MPIDSM_CMP_EQ, 1));
    size_t index = 0, found = 0, indices[64];
    OK(mpidsm_pgas_wait_until_any_i64(pgas, flags, 64 - 8, status, MPIDSM_CMP_EQ, 1, &index));
    CHECK(index < (size_t)size);
    OK(mpidsm_pgas_wait_until_some_i64(pgas, flags, 64 - 8, indices, status, MPIDSM_CMP_EQ, 1,
                                       &found));
    CHECK(found == (size_t)size && indices[size - 1] == (size_t)size - 1);
    int all = 0;
    OK(mpidsm_pgas_test_all_i64(pgas, flags, 64 - 8, NULL, MPIDSM_CMP_EQ, 1, &all));
    CHECK(all == 0); /* the words left out above are 0 */
    OK(mpidsm_pgas_test_any_i64(pgas, flags, 64 - 8, status, MPIDSM_CMP_EQ, 2, &index));
    CHECK(index == SIZE_MAX);
    OK(mpidsm_pgas_test_some_i64(pgas, flags, 64 - 8, indices, status, MPIDSM_CMP_NE, 0, &found));
    CHECK(found == (size_t)size);
  }
  FAILS_WITH(mpidsm_pgas_test_any_i64(pgas, flags, 0, NULL, MPIDSM_CMP_EQ, 1, &(size_t){0}),
             MPIDSM_ERR_INVALID_ARGUMENT, "mpidsm_pgas_test_any_i64: an empty array");

  /* put_signal_nbi and signal_fetch */
  uint64_t* signal = NULL;
  char* data = NULL;
  OK(mpidsm_pgas_alloc_zeroed(pgas, sizeof(uint64_t), (void**)&signal));
  OK(mpidsm_pgas_alloc_zeroed(pgas, 256, (void**)&data));
  char message[256];
  memset(message, 'a' + rank % 26, sizeof message);
  OK(mpidsm_pgas_put_signal_nbi(pgas, data, message, sizeof message, signal, 1, MPIDSM_SIGNAL_ADD,
                                right));
  uint64_t seen = 0;
  OK(mpidsm_pgas_wait_until_u64(pgas, signal, MPIDSM_CMP_EQ, 1, &seen));
  CHECK(data[0] == 'a' + left % 26 && data[255] == 'a' + left % 26);
  OK(mpidsm_pgas_signal_fetch(pgas, signal, &seen));
  CHECK(seen == 1);
  FAILS_WITH(mpidsm_pgas_put_signal_nbi(pgas, data, message, 8, signal, 1, 9, right),
             MPIDSM_ERR_INVALID_ARGUMENT, "mpidsm_pgas_put_signal_nbi: op 9");
  OK(mpidsm_pgas_quiet(pgas));
  OK(mpidsm_pgas_barrier(pgas));

  OK(mpidsm_pgas_free(pgas, data));
  OK(mpidsm_pgas_free(pgas, signal));
  OK(mpidsm_pgas_free(pgas, d));
  OK(mpidsm_pgas_free(pgas, f));
  OK(mpidsm_pgas_free(pgas, counter));
  OK(mpidsm_pgas_destroy(&pgas));
}

/* Teams: the world, a strided split, collectives and reductions, errors. */
static void test_teams(mpidsm_runtime_t runtime) {
  mpidsm_pgas_t pgas = NULL;
  OK(mpidsm_pgas_create(runtime, &pgas));
  mpidsm_team_t world = NULL, evens = NULL, node = NULL;
  OK(mpidsm_team_world(pgas, &world));
  OK(mpidsm_team_shared(pgas, &node));
  int r = -1, n = -1;
  OK(mpidsm_team_rank(world, &r));
  OK(mpidsm_team_size(world, &n));
  CHECK(r == rank && n == size);
  OK(mpidsm_team_split_strided(world, 0, 2, (size + 1) / 2, &evens));
  CHECK((evens != NULL) == (rank % 2 == 0));
  if (evens) {
    int there = -2;
    OK(mpidsm_team_translate(evens, 0, world, &there));
    CHECK(there == 0);
  }
  OK(mpidsm_team_sync(world));
  double source[4] = {1.0 * rank, 2.0, 3.0, 4.0}, dest[4] = {0};
  OK(mpidsm_team_broadcast(world, dest, source, sizeof source, size - 1));
  CHECK(dest[0] == size - 1 && dest[3] == 4.0);
  int mine = rank * 3, all[64];
  OK(mpidsm_team_fcollect(world, all, &mine, sizeof mine));
  CHECK(all[size - 1] == (size - 1) * 3);
  size_t total = 0;
  OK(mpidsm_team_collect(world, all, &mine, rank % 2 ? sizeof mine : 0, &total));
  CHECK(total == sizeof(int) * (size_t)(size / 2));
  int out[64], in[64];
  for (int j = 0; j < size; ++j) out[j] = rank * 100 + j;
  OK(mpidsm_team_alltoall(world, in, out, sizeof(int)));
  CHECK(in[size - 1] == (size - 1) * 100 + rank);
  int16_t sout[128], sin[128];
  for (int j = 0; j < 2 * size; ++j) sout[j] = (int16_t)(rank * 100 + j);
  OK(mpidsm_team_alltoalls(world, sin, sout, 2, 1, sizeof(int16_t), 1));
  CHECK(sin[2 * (size - 1)] == (size - 1) * 100 + rank);
  int64_t value = rank + 1, sum = 0;
  OK(mpidsm_team_reduce_i64(world, MPIDSM_REDUCE_SUM, &sum, &value, 1));
  CHECK(sum == (int64_t)size * (size + 1) / 2);
  double low = 5.0 - rank;
  OK(mpidsm_team_reduce_f64(world, MPIDSM_REDUCE_MIN, &low, &low, 1));
  CHECK(low == 5.0 - (size - 1));
  FAILS_WITH(mpidsm_team_reduce_f64(world, MPIDSM_REDUCE_XOR, &low, &low, 1),
             MPIDSM_ERR_INVALID_ARGUMENT, "mpidsm_team_reduce_f64: operation 2 does not apply");
  FAILS_WITH(mpidsm_team_reduce_u32(world, 42, NULL, NULL, 0), MPIDSM_ERR_INVALID_ARGUMENT,
             "mpidsm_team_reduce_u32: op 42 is not an mpidsm_reduce_op_t");
  FAILS_WITH(mpidsm_team_broadcast(world, dest, source, 8, size), MPIDSM_ERR_INVALID_RANK,
             "mpidsm_team_broadcast: root");
  OK(mpidsm_team_destroy(&evens));
  /* Stride 0 names one member (size 1); two would be the same member twice. */
  FAILS_WITH(mpidsm_team_split_strided(world, 0, 0, 2, &evens), MPIDSM_ERR_INVALID_ARGUMENT,
             "mpidsm_team_split_strided: start 0, stride 0, size 2");
  CHECK(evens == NULL);
  OK(mpidsm_team_destroy(&node));
  OK(mpidsm_team_destroy(&world));
  CHECK(world == NULL);
  OK(mpidsm_pgas_destroy(&pgas));
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
  /* Errors of the layers below name the C function called. */
  FAILS_WITH(mpidsm_dsm_unlock(dsm, 3), MPIDSM_ERR_INVALID_STATE, "mpidsm_dsm_unlock: ");
  CHECK(strstr(mpidsm_error_message(), "Dsm::") == NULL);

  /* A DSM range handed to MPI: readable and writable without faults. */
  mpidsm_dsm_access_t access = NULL;
  FAILS_WITH(mpidsm_dsm_make_accessible(dsm, shared, 64, 5, &access), MPIDSM_ERR_INVALID_ARGUMENT,
             "access 5");
  CHECK(access == NULL);
  int* mine_in_dsm = shared + (size_t)rank * ((size_t)page / sizeof(int)); /* homed here */
  OK(mpidsm_dsm_make_accessible(dsm, mine_in_dsm, sizeof(int), MPIDSM_ACCESS_READ_WRITE, &access));
  const int right_rank = (rank + 1) % size, left_rank = (rank + size - 1) % size;
  int sent = 1000 + rank;
  MPI_Sendrecv(&sent, 1, MPI_INT, right_rank, 5, mine_in_dsm, 1, MPI_INT, left_rank, 5,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  OK(mpidsm_dsm_access_release(&access));
  CHECK(access == NULL);
  OK(mpidsm_dsm_access_release(&access)); /* NULL is ignored */
  OK(mpidsm_dsm_barrier(dsm));
  CHECK(shared[(size_t)right_rank * ((size_t)page / sizeof(int))] == 1000 + rank);
  OK(mpidsm_dsm_barrier(dsm));
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
    OK(mpidsm_msg_send(runtime, out, sizeof out, right, 7));
    OK(mpidsm_msg_send(runtime, big_out, big, right, 8));
  }
  if (rank == 1) {
    mpidsm_recv_info_t info;
    OK(mpidsm_msg_recv(runtime, in, sizeof in, MPIDSM_ANY_SOURCE, 7, &info));
    CHECK(info.source == 0 && info.tag == 7 && info.bytes == sizeof in);
    CHECK(in[63] == 63);
    OK(mpidsm_msg_recv(runtime, big_in, big, 0, MPIDSM_ANY_TAG, NULL));
    CHECK(big_in[big - 1] == 1);
  }
  /* Truncation is reported, and the message is consumed. */
  if (rank == 0 && size > 1) OK(mpidsm_msg_send(runtime, out, sizeof out, right, 9));
  if (rank == 1)
    FAILS_WITH(mpidsm_msg_recv(runtime, in, 8, 0, 9, NULL), MPIDSM_ERR_TRUNCATED, "bytes");
  FAILS_WITH(mpidsm_msg_send(runtime, out, 4, size + 3, 1), MPIDSM_ERR_INVALID_RANK, "rank");
  /* Non-blocking: each rank sends to the right and receives from the left. */
  mpidsm_request_t send_request = {0}, recv_request = {0};
  int ring_in = -1, ring_out = rank;
  OK(mpidsm_msg_irecv(runtime, &ring_in, sizeof ring_in, (rank + size - 1) % size, 11,
                      &recv_request));
  OK(mpidsm_msg_isend(runtime, &ring_out, sizeof ring_out, (rank + 1) % size, 11, &send_request));
  mpidsm_recv_info_t ring_info = {-5, -5, 0};
  OK(mpidsm_request_wait(&recv_request, &ring_info));
  OK(mpidsm_request_wait(&send_request, NULL));
  CHECK(ring_in == (rank + size - 1) % size && ring_info.source == ring_in && ring_info.tag == 11 &&
        ring_info.bytes == sizeof ring_in);
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
  test_pgas_more(runtime);
  test_pgas_shmem_features(runtime);
  test_teams(runtime);
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
