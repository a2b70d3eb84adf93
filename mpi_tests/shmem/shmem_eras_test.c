/* OpenSHMEM programs of every era, as they are written: a 1.0-1.4 program
 * (start_pes, shmalloc, _my_pe, shmem_barrier with pSync) that returns from
 * main without shmem_finalize, so the library must finalize at exit and the
 * job exit 0; and 1.5's additions that conformance suites test: the
 * one-argument shmem_sync(team) beside the deprecated four-argument form,
 * shmem_pcontrol, zero-length transfers with any address (no-ops), and
 * shmem_info_get_name agreeing with SHMEM_VENDOR_STRING. Prints "eras ok" on
 * every PE; any failure ends the job with status 1. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static long pSync[SHMEM_BARRIER_SYNC_SIZE];

static void check(int ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "PE %d: %s\n", _my_pe(), what);
  shmem_global_exit(1);
}

int main(void) {
  start_pes(0);
  const int me = _my_pe(), npes = _num_pes();
  for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; ++i) pSync[i] = SHMEM_SYNC_VALUE;
  long* ring = (long*)shmalloc(sizeof(long));
  check(ring != NULL, "shmalloc failed");
  *ring = -1;
  shmem_barrier_all();
  shmem_long_p(ring, me, (me + 1) % npes);
  shmem_barrier(0, 0, npes, pSync);
  check(*ring == (me + npes - 1) % npes, "the 1.0-era ring put did not land");

  /* Zero-length transfers are no-ops, whatever the addresses. */
  shmem_putmem(NULL, NULL, 0, (me + 1) % npes);
  shmem_getmem(NULL, NULL, 0, (me + 1) % npes);
  shmem_putmem_nbi(NULL, NULL, 0, (me + 1) % npes);
  shmem_long_iput(NULL, NULL, 1, 1, 0, (me + 1) % npes);
  shmem_quiet();

  /* Both forms of shmem_sync, and shmem_pcontrol at every level. */
  check(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(SHMEM_TEAM_WORLD) failed");
  shmem_sync(0, 0, npes, pSync);
  for (int level = 0; level <= 2; ++level) shmem_pcontrol(level);
  shmem_pcontrol(1);

  char name[SHMEM_MAX_NAME_LEN];
  shmem_info_get_name(name);
  check(strcmp(name, SHMEM_VENDOR_STRING) == 0,
        "shmem_info_get_name differs from SHMEM_VENDOR_STRING");

  shmem_barrier_all();
  shfree(ring);
  printf("PE %d: eras ok\n", me);
  fflush(stdout);
  return 0; /* no shmem_finalize: implicit at exit */
}
