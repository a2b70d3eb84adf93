// A program that does not catch an mpidsm error: each rank that threw
// prints the error's one line and the job is aborted (MPI_Abort), with no
// backtrace (MPIDSM_TERMINATE_HANDLER's default); with the setting 0, the
// C++ library's std::terminate runs as before.
//   mpirun -np N uncaught_error [one|all]
#include <mpi.h>

#include <string>

#include "mpidsm/runtime.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  mpidsm::Runtime runtime(MPI_COMM_WORLD);
  const bool all = argc > 1 && std::string(argv[1]) == "all";
  if (all || runtime.rank() == runtime.size() - 1)
    throw mpidsm::Error(mpidsm::Errc::invalid_argument, runtime.rank(),
                        "uncaught_error: the error this test leaves uncaught");
  MPI_Barrier(MPI_COMM_WORLD);  // the others wait here until the abort ends them
  MPI_Finalize();
  return 0;
}
