/* A C program built against the installed package with pkg-config only:
   `cc main.c $(pkg-config --cflags --libs mpidsm)`. */
#include <mpidsm/mpidsm.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int major = -1, minor = -1, patch = -1, size = 0;
  mpidsm_runtime_t runtime = NULL;
  int status = mpidsm_version(&major, &minor, &patch) != MPIDSM_SUCCESS ||
               major != MPIDSM_VERSION_MAJOR || minor != MPIDSM_VERSION_MINOR ||
               mpidsm_runtime_create(MPI_COMM_WORLD, &runtime) != MPIDSM_SUCCESS ||
               mpidsm_runtime_size(runtime, &size) != MPIDSM_SUCCESS || size < 1;
  if (runtime) mpidsm_runtime_destroy(&runtime);
  printf("pkg-config consumer: mpidsm %d.%d.%d, %d rank(s)%s\n", major, minor, patch, size,
         status ? ": FAILED" : "");
  MPI_Finalize();
  return status;
}
