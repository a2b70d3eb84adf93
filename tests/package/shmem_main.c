/* An OpenSHMEM program built against the installed package as existing
   codes are: `mpidsm-oshcc shmem_main.c`, or `cc shmem_main.c $(pkg-config
   --cflags --libs mpidsm-shmem)`, or find_package(mpidsm) and mpidsm::shmem;
   run without LD_LIBRARY_PATH. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
  shmem_init();
  int* counter = shmem_calloc(1, sizeof(int));
  shmem_atomic_inc(counter, 0);
  shmem_barrier_all();
  const int status = shmem_my_pe() != 0 || *counter == shmem_n_pes() ? 0 : 1;
  printf("OpenSHMEM consumer: %d PE(s)%s\n", shmem_n_pes(), status ? ": FAILED" : "");
  shmem_free(counter);
  shmem_finalize();
  return status;
}
