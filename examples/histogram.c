/* mpidsm from C: a histogram of random keys built in DSM memory.
 *
 * Each rank counts its keys locally, then adds its counts into a shared
 * histogram, one lock per block of bins, with plain loads and stores. The
 * same histogram is computed with MPI_Allreduce and compared bin by bin.
 *   mpirun -np N histogram [-k keys per rank] [-b bins]
 * Exits non-zero when the histograms differ. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpidsm/mpidsm.h"

/* Stops every rank with the failed call's message. */
static void check(mpidsm_status_t status, const char* call) {
  if (status == MPIDSM_SUCCESS) return;
  fprintf(stderr, "histogram: %s failed: %s (%s)\n", call, mpidsm_error_message(),
          mpidsm_status_string(status));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long keys = 1 << 20, bins = 4096;
  for (int opt; (opt = getopt(argc, argv, "k:b:")) != -1;) {
    if (opt == 'k')
      keys = atol(optarg);
    else if (opt == 'b')
      bins = atol(optarg);
  }
  int rank = 0, size = 0;
  mpidsm_runtime_t runtime = NULL;
  mpidsm_dsm_t dsm = NULL;
  check(mpidsm_runtime_create(MPI_COMM_WORLD, &runtime), "mpidsm_runtime_create");
  check(mpidsm_runtime_rank(runtime, &rank), "mpidsm_runtime_rank");
  check(mpidsm_runtime_size(runtime, &size), "mpidsm_runtime_size");
  check(mpidsm_dsm_create(runtime, &dsm), "mpidsm_dsm_create");

  /* Bins dealt page by page over the ranks; one lock per page of bins. */
  const long page_bins = sysconf(_SC_PAGESIZE) / (long)sizeof(int64_t);
  mpidsm_placement_t cyclic = {MPIDSM_PLACE_CYCLIC, 1, 0, NULL, 0};
  int64_t* shared = NULL;
  check(mpidsm_dsm_alloc(dsm, (size_t)bins * sizeof(int64_t), &cyclic, (void**)&shared),
        "mpidsm_dsm_alloc");

  int64_t* local = calloc((size_t)bins, sizeof(int64_t));
  int64_t* reference = calloc((size_t)bins, sizeof(int64_t));
  uint64_t state = 0x9E3779B97F4A7C15ull * (uint64_t)(rank + 1);
  for (long i = 0; i < keys; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17; /* xorshift64 */
    ++local[state % (uint64_t)bins];
  }

  const double start = MPI_Wtime();
  size_t locks = 0;
  check(mpidsm_dsm_lock_count(dsm, &locks), "mpidsm_dsm_lock_count");
  /* Each rank starts at a different block so that the locks are not all
   * taken in the same order. */
  const long blocks = (bins + page_bins - 1) / page_bins;
  for (long n = 0; n < blocks; ++n) {
    const long block = (n + rank) % blocks;
    const size_t lock = (size_t)block % locks;
    check(mpidsm_dsm_lock(dsm, lock), "mpidsm_dsm_lock");
    for (long b = block * page_bins; b < bins && b < (block + 1) * page_bins; ++b)
      shared[b] += local[b];
    check(mpidsm_dsm_unlock(dsm, lock), "mpidsm_dsm_unlock");
  }
  check(mpidsm_dsm_barrier(dsm), "mpidsm_dsm_barrier");
  const double dsm_seconds = MPI_Wtime() - start;

  const double mpi_start = MPI_Wtime();
  MPI_Allreduce(local, reference, (int)bins, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  const double mpi_seconds = MPI_Wtime() - mpi_start;

  long wrong = 0;
  for (long b = 0; b < bins; ++b) wrong += shared[b] != reference[b];
  long wrong_anywhere = 0;
  MPI_Allreduce(&wrong, &wrong_anywhere, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf(
        "histogram: %d ranks, %ld keys each, %ld bins: DSM %.3f ms, MPI_Allreduce %.3f ms, "
        "%s\n",
        size, keys, bins, dsm_seconds * 1e3, mpi_seconds * 1e3,
        wrong_anywhere == 0 ? "verified" : "WRONG");

  free(local);
  free(reference);
  check(mpidsm_dsm_free(dsm, shared), "mpidsm_dsm_free");
  check(mpidsm_dsm_destroy(&dsm), "mpidsm_dsm_destroy");
  check(mpidsm_runtime_destroy(&runtime), "mpidsm_runtime_destroy");
  MPI_Finalize();
  return wrong_anywhere == 0 ? 0 : 1;
}
