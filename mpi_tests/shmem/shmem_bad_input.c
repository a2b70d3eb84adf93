/* Bad input to OpenSHMEM routines, one scenario per run (argv[1]): each must
 * end the job with a message naming the routine and what was wrong, never
 * corrupt memory or hang. ctest matches the message (mpi_tests/CMakeLists.txt). */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "";
  if (strcmp(scenario, "before-init") == 0) return shmem_my_pe();
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  long* heap = shmem_calloc(4, sizeof(long));
  long on_stack = 0;
  if (strcmp(scenario, "outside-heap") == 0) shmem_long_p(&on_stack, 1, (me + 1) % n);
  if (strcmp(scenario, "pe-outside") == 0) shmem_putmem(heap, &on_stack, sizeof on_stack, n);
  if (strcmp(scenario, "team-pe-outside") == 0) {
    shmem_team_t first = SHMEM_TEAM_INVALID; /* PE 0 alone */
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &first);
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    if (shmem_team_create_ctx(first, 0, &ctx) == 0) shmem_ctx_long_p(ctx, heap, 1, 1);
    shmem_barrier_all(); /* the other PEs wait for PE 0's end */
  }
  if (strcmp(scenario, "freed") == 0) {
    long* gone = shmem_malloc(sizeof(long));
    shmem_free(gone);
    shmem_long_atomic_inc(gone, 0);
  }
  if (strcmp(scenario, "bad-comparison") == 0) shmem_long_wait_until(heap, 99, 0);
  if (strcmp(scenario, "mismatched-malloc") == 0) shmem_malloc(me == 0 ? 64 : 128);
  if (strcmp(scenario, "lock-not-held") == 0) shmem_clear_lock(heap);
  if (strcmp(scenario, "past-the-end") == 0) shmem_getmem(&on_stack, heap + 3, 2 * sizeof(long), 0);
  fprintf(stderr, "scenario '%s' was not refused\n", scenario);
  shmem_finalize();
  return 0;
}
