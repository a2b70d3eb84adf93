#include "mpi_window.hpp"

#include <cstdio>

namespace mpidsm::bench {

bool allocate_mpi_window(MPI_Aint bytes, MPI_Comm comm, void* base, MPI_Win* win,
                         std::string& error) {
  // Window creation reports its errors on the communicator.
  MPI_Errhandler previous;
  MPI_Comm_get_errhandler(comm, &previous);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int status = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, base, win);
  MPI_Comm_set_errhandler(comm, previous);
  MPI_Errhandler_free(&previous);

  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = status == MPI_SUCCESS ? size : rank;
  int first_failed = size;
  MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm);
  if (first_failed == size) return true;
  if (status == MPI_SUCCESS) MPI_Win_free(win);  // another rank has none

  // The first failing rank's error, for every rank.
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (rank == first_failed) MPI_Error_string(status, text, &length);
  MPI_Bcast(&length, 1, MPI_INT, first_failed, comm);
  MPI_Bcast(text, length, MPI_CHAR, first_failed, comm);
  error = "MPI_Win_allocate of " + std::to_string(bytes) + " bytes failed on rank " +
          std::to_string(first_failed) + " (" +
          std::string(text, static_cast<std::size_t>(length)) + ")";
  return false;
}

void allocate_mpi_window_or_abort(MPI_Aint bytes, MPI_Comm comm, void* base, MPI_Win* win) {
  std::string error;
  if (allocate_mpi_window(bytes, comm, base, win, error)) return;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    // Windows work here (the harness checked): this one failed for itself.
    std::fprintf(stderr, "%s\n", error.c_str());
    std::fflush(stderr);
  }
  MPI_Abort(comm, 1);
}

bool mpi_windows_work(MPI_Comm comm, std::string& error) {
  void* base = nullptr;
  MPI_Win win;
  if (!allocate_mpi_window(8, comm, &base, &win, error)) return false;
  MPI_Win_free(&win);
  return true;
}

std::string no_mpi_window_text(const std::string& error) {
  return error +
         ": this MPI has no one-sided component that reaches every rank, and this "
         "benchmark's MPI side needs one. With Open MPI across hosts without an RDMA "
         "network, run with OMPI_MCA_osc=pt2pt (benchmarks/run-suite does).\n";
}

}  // namespace mpidsm::bench
