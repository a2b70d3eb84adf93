// MPI windows for the benchmarks' MPI side, with a clear error where MPI has
// none to give. Open MPI 4.1 across hosts without an RDMA network has no
// one-sided component by default: osc/rdma needs an RDMA-capable BTL and
// osc/sm one node, so MPI_Win_allocate fails with MPI_ERR_WIN and, under
// the default error handler, aborts the job with no hint of the fix
// (OMPI_MCA_osc=pt2pt, which benchmarks/run-suite selects across hosts).
#pragma once

#include <mpi.h>

#include <string>

namespace mpidsm::bench {

// Collective over `comm`: MPI_Win_allocate of `bytes` per rank with errors
// returned rather than fatal. Whether every rank got its window (all agree);
// if not, no rank holds one and `error` names the first failing rank and
// MPI's error.
bool allocate_mpi_window(MPI_Aint bytes, MPI_Comm comm, void* base, MPI_Win* win,
                         std::string& error);

// As allocate_mpi_window, for a benchmark that checked mpi_windows_work
// before it started: a failure now (a window larger than memory) ends the
// job, rank 0 printing MPI's error alone: the fix for a job with no window
// at all does not apply.
void allocate_mpi_window_or_abort(MPI_Aint bytes, MPI_Comm comm, void* base, MPI_Win* win);

// Collective over `comm`: whether MPI gives a window here; `error` as above.
bool mpi_windows_work(MPI_Comm comm, std::string& error);

// What a benchmark whose MPI side needs a window prints when there is none:
// the error and the setting that gives one.
std::string no_mpi_window_text(const std::string& error);

}  // namespace mpidsm::bench
