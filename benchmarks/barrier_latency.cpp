// Barrier latency over all ranks: Pgas::barrier (quiet + barrier) against
// MPI_Barrier.   mpirun -np N barrier_latency [-i n] [-x n] [-f] [--csv]
#include "harness.hpp"

using namespace mpidsm;
using namespace mpidsm::bench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv, {"Barrier Latency", Unit::latency_us, false, false, 1, "MPI_Barrier"});
    Pgas& p = h.pgas();
    h.print_header();
    Row row;
    row.label = "barrier";
    row.mpidsm = [&](std::size_t, int n) { return per_iteration(n, [&](int) { p.barrier(); }); };
    row.mpi = [&](std::size_t, int n) {
      return per_iteration(n, [&](int) { MPI_Barrier(MPI_COMM_WORLD); });
    };
    h.run(row);
  } catch (const std::exception& e) {
    return mpidsm::bench::leave_on_error(argv[0], e);
  }
  MPI_Finalize();
}
