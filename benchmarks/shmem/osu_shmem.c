/* OSU-style OpenSHMEM benchmarks in one source, built twice: against
 * mpidsm's shmem.h (shmem_osu_mpidsm) and with Open MPI's oshcc
 * (shmem_osu_oshmem), so both libraries run the same code. Only OpenSHMEM
 * 1.4 routines, which both provide (Open MPI 4.1's oshmem has no teams:
 * collectives use the active-set forms with pSync).
 *
 *   shmem_osu_* TEST [ITERATIONS]      prints "TEST SIZE VALUE UNIT" on PE 0
 *
 * Tests (PE 0 drives, PE 1 is the target; the collectives run on every PE):
 *   put_latency  shmem_putmem + shmem_quiet per message, us, 1 B .. 1 MiB
 *   get_latency  shmem_getmem per message, us, 1 B .. 1 MiB
 *   put_bw       64 shmem_putmem_nbi, then shmem_quiet: MB/s, 1 B .. 1 MiB
 *   get_bw       64 shmem_getmem_nbi, then shmem_quiet: MB/s
 *   put_rate     as put_bw at 8 B, in messages per second (millions)
 *   fetch_add, add, compare_swap, swap, fetch, set, fetch_inc, inc
 *                8-byte atomics on a long of PE 1, us per operation
 *                (non-fetching ones: operation + shmem_quiet)
 *   barrier      shmem_barrier_all, us
 *   broadcast    shmem_broadcast64 of 8 B from PE 0, us
 *   collect      shmem_fcollect64 of 8 B per PE, us
 *   reduce       shmem_long_sum_to_all of one long, us
 * Output is printed and flushed before shmem_finalize: Open MPI 4.1's
 * oshmem can crash there after correct output. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 64
#define MAX_BYTES (1 << 20)
#define WARMUP 100

static long psync[2][SHMEM_REDUCE_SYNC_SIZE];
static long pwork[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 1];

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static void report(const char* test, size_t size, double value, const char* unit) {
  if (shmem_my_pe() == 0) {
    printf("%s %zu %.4f %s\n", test, size, value, unit);
    fflush(stdout);
  }
}

static int iterations_for(size_t bytes, int iterations) {
  return bytes > 8192 ? iterations / 10 + 1 : iterations;
}

static void latency(const char* test, int is_put, char* heap, char* local, int iterations) {
  for (size_t bytes = 1; bytes <= MAX_BYTES; bytes *= 2) {
    const int n = iterations_for(bytes, iterations);
    double start = 0;
    shmem_barrier_all();
    if (shmem_my_pe() == 0)
      for (int i = -WARMUP; i < n; ++i) {
        if (i == 0) start = now_us();
        if (is_put) {
          shmem_putmem(heap, local, bytes, 1);
          shmem_quiet();
        } else {
          shmem_getmem(local, heap, bytes, 1);
        }
      }
    report(test, bytes, (now_us() - start) / n, "us");
  }
}

static void bandwidth(const char* test, int is_put, char* heap, char* local, int iterations,
                      size_t only) {
  for (size_t bytes = only ? only : 1; bytes <= (only ? only : MAX_BYTES); bytes *= 2) {
    const int n = iterations_for(bytes, iterations) / WINDOW + 1;
    double start = 0;
    shmem_barrier_all();
    if (shmem_my_pe() == 0)
      for (int i = -WARMUP / WINDOW - 1; i < n; ++i) {
        if (i == 0) start = now_us();
        for (int w = 0; w < WINDOW; ++w) {
          if (is_put)
            shmem_putmem_nbi(heap + (size_t)w * bytes % MAX_BYTES, local, bytes, 1);
          else
            shmem_getmem_nbi(local + (size_t)w * bytes % MAX_BYTES, heap, bytes, 1);
        }
        shmem_quiet();
      }
    const double seconds = (now_us() - start) * 1e-6, messages = (double)n * WINDOW;
    if (only)
      report(test, bytes, messages / seconds * 1e-6, "Mmsg/s");
    else
      report(test, bytes, messages * bytes / seconds * 1e-6, "MB/s");
  }
}

static void atomic(const char* test, long* word, int iterations) {
  double start = 0;
  long sink = 0;
  shmem_barrier_all();
  if (shmem_my_pe() == 0)
    for (int i = -WARMUP; i < iterations; ++i) {
      if (i == 0) start = now_us();
      if (!strcmp(test, "fetch_add"))
        sink += shmem_long_atomic_fetch_add(word, 1, 1);
      else if (!strcmp(test, "add")) {
        shmem_long_atomic_add(word, 1, 1);
        shmem_quiet();
      } else if (!strcmp(test, "compare_swap"))
        sink += shmem_long_atomic_compare_swap(word, i, i + 1, 1);
      else if (!strcmp(test, "swap"))
        sink += shmem_long_atomic_swap(word, i, 1);
      else if (!strcmp(test, "fetch"))
        sink += shmem_long_atomic_fetch(word, 1);
      else if (!strcmp(test, "set")) {
        shmem_long_atomic_set(word, i, 1);
        shmem_quiet();
      } else if (!strcmp(test, "fetch_inc"))
        sink += shmem_long_atomic_fetch_inc(word, 1);
      else {
        shmem_long_atomic_inc(word, 1);
        shmem_quiet();
      }
    }
  report(test, sizeof(long), (now_us() - start) / iterations, "us");
  if (sink == 42) fprintf(stderr, " "); /* keeps the fetched values alive */
}

static void collective(const char* test, long* source, long* dest, int iterations) {
  const int n_pes = shmem_n_pes();
  double start = 0;
  shmem_barrier_all();
  for (int i = -WARMUP; i < iterations; ++i) {
    if (i == 0) start = now_us();
    long* sync = psync[(i + WARMUP) % 2]; /* alternate, as the specification allows */
    if (!strcmp(test, "barrier"))
      shmem_barrier_all();
    else if (!strcmp(test, "broadcast"))
      shmem_broadcast64(dest, source, 1, 0, 0, 0, n_pes, sync);
    else if (!strcmp(test, "collect"))
      shmem_fcollect64(dest, source, 1, 0, 0, n_pes, sync);
    else
      shmem_long_sum_to_all(dest, source, 1, 0, 0, n_pes, pwork, sync);
  }
  report(test, sizeof(long), (now_us() - start) / iterations, "us");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s TEST [ITERATIONS]\n", argv[0]);
    return 2;
  }
  const char* test = argv[1];
  const int iterations = argc > 2 ? atoi(argv[2]) : 10000;
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) psync[s][i] = SHMEM_SYNC_VALUE;
  shmem_init();
  if (shmem_n_pes() < 2) {
    fprintf(stderr, "%s: run with 2 or more PEs\n", argv[0]);
    shmem_global_exit(2);
  }
  /* Both buffers page-aligned, as OSU's benchmarks align theirs: a copy
   * between addresses that differ modulo 64 cannot use rep movsb's
   * full-line stores, and on the AMD EPYC this was measured on a 32 KiB
   * copy ran at 85 GB/s instead of 152. With malloc's buffer (16 bytes into
   * its page) the figures measured where each library's heap happens to
   * start (Open MPI's oshmem returned addresses 16 bytes past a 64-byte
   * line), not the library. */
  char* heap = shmem_align(4096, MAX_BYTES);
  char* local = aligned_alloc(4096, MAX_BYTES);
  long* words = shmem_malloc(64 * sizeof(long) * (size_t)shmem_n_pes());
  memset(heap, 1, MAX_BYTES);
  memset(local, 2, MAX_BYTES);
  memset(words, 0, 64 * sizeof(long) * (size_t)shmem_n_pes());
  shmem_barrier_all();
  if (!strcmp(test, "put_latency"))
    latency(test, 1, heap, local, iterations);
  else if (!strcmp(test, "get_latency"))
    latency(test, 0, heap, local, iterations);
  else if (!strcmp(test, "put_bw"))
    bandwidth(test, 1, heap, local, iterations, 0);
  else if (!strcmp(test, "get_bw"))
    bandwidth(test, 0, heap, local, iterations, 0);
  else if (!strcmp(test, "put_rate"))
    bandwidth(test, 1, heap, local, iterations * 10, 8);
  else if (!strcmp(test, "barrier") || !strcmp(test, "broadcast") || !strcmp(test, "collect") ||
           !strcmp(test, "reduce"))
    collective(test, words, words + 32 * shmem_n_pes(), iterations);
  else if (strstr(" fetch_add add compare_swap swap fetch set fetch_inc inc ", test) &&
           strlen(test) > 2)
    atomic(test, words, iterations);
  else {
    fprintf(stderr, "%s: unknown test '%s'\n", argv[0], test);
    shmem_global_exit(2);
  }
  shmem_barrier_all();
  free(local);
  shmem_free(words);
  shmem_free(heap);
  shmem_finalize();
  return 0;
}
