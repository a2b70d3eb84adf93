// One rank skips a collective: the job hangs, and after MPIDSM_HANG_REPORT
// seconds the lowest waiting rank prints, once, where every rank is (the
// test runs it under `mpirun --timeout`, which then ends the job).
//
//   skipped_collective dsm|pgas
//
// dsm: the last rank skips a Dsm::barrier and goes on to Dsm::allocate.
// pgas: the last rank skips a Pgas::barrier and goes on to Pgas::allocate.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "mpidsm/dsm.hpp"
#include "mpidsm/pgas.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string what = argc > 1 ? argv[1] : "dsm";
  {
    mpidsm::Runtime runtime(MPI_COMM_WORLD);
    const int me = runtime.rank(), last = runtime.size() - 1;
    if (what == "dsm") {
      mpidsm::Dsm dsm(runtime);
      dsm.barrier();
      if (me != last) dsm.barrier();
      dsm.allocate<char>(4096);
    } else {
      mpidsm::Pgas pgas(runtime);
      pgas.barrier();
      if (me != last) pgas.barrier();
      pgas.allocate<char>(4096);
    }
    std::printf("rank %d: FAILED: the skipped collective did not hang\n", me);
  }
  MPI_Finalize();
  return 0;
}
