/* Open MPI OSHMEM reference for the 8-byte targets of put_latency,
 * get_latency and atomic_latency: shmem_putmem + shmem_quiet, shmem_getmem
 * and shmem_long_atomic_fetch_add from PE 0 to PE 1, averaged over n
 * operations, three repetitions. Built and run by benchmarks/compare-oshmem. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 200000;
  shmem_init();
  long* word = shmem_malloc(sizeof(long));
  long* counter = shmem_malloc(sizeof(long));
  long source = 1, result = 0;
  *counter = 0;
  shmem_barrier_all();
  for (int rep = 0; rep < 3; ++rep) {
    if (shmem_my_pe() == 0) {
      double start = now();
      for (int i = 0; i < n; ++i) {
        shmem_putmem(word, &source, sizeof source, 1);
        shmem_quiet();
      }
      double put = (now() - start) / n * 1e6;
      start = now();
      for (int i = 0; i < n; ++i) shmem_getmem(&result, word, sizeof result, 1);
      double get = (now() - start) / n * 1e6;
      start = now();
      for (int i = 0; i < n; ++i) result = shmem_long_atomic_fetch_add(counter, 1, 1);
      double fadd = (now() - start) / n * 1e6;
      printf("oshmem 8 B: put+quiet %.4f us, get %.4f us, fetch-add %.4f us\n", put, get, fadd);
    }
    shmem_barrier_all();
  }
  shmem_free(counter);
  shmem_free(word);
  shmem_finalize();
  return 0;
}
