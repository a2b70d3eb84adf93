// The DSM barrier against MPI_Barrier as the number of ranks grows
// (benchmarks/barrier-scaling runs it at np 2 to 16, on one node and across
// simulated hosts):
//   clean    nothing dirty: what every barrier pays
//   dirty_1  each rank wrote one word of one page homed on the next rank
//            (only the barrier is timed: release, notices, invalidation)
//   mpirun -np N dsm_barrier_scaling [-i n] [-x n] [-f] [--csv]
#include <algorithm>
#include <cstdint>

#include "harness.hpp"
#include "mpidsm/dsm.hpp"

using namespace mpidsm;
using namespace mpidsm::bench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv,
              {"DSM Barrier Scaling", Unit::latency_us, false, false, 1, "MPI_Barrier"});
    Dsm dsm(h.runtime());
    const int me = h.rank(), ranks = h.size();
    const std::size_t page = dsm.page_size();
    // One page per rank, homed block-wise: rank r homes page r.
    auto* pages = dsm.allocate<std::byte>(page * static_cast<std::size_t>(ranks));
    auto* next_page = reinterpret_cast<volatile std::uint64_t*>(
        pages + page * static_cast<std::size_t>((me + 1) % ranks));
    h.print_header();

    Row clean;
    clean.label = "clean";
    clean.mpidsm = [&](std::size_t, int n) {
      return per_iteration(n, [&](int) { dsm.barrier(); });
    };
    clean.mpi = [&](std::size_t, int n) {
      return per_iteration(n, [&](int) { MPI_Barrier(MPI_COMM_WORLD); });
    };
    h.run(clean);

    Row dirty = clean;
    dirty.label = "dirty_1";
    dirty.mpidsm = [&](std::size_t, int iterations) {
      const int n = std::max(1, std::min(iterations, 2000));
      double total = 0;
      for (int i = 0; i < n; ++i) {
        *next_page = static_cast<std::uint64_t>(i);
        const double start = seconds();
        dsm.barrier();
        total += seconds() - start;
      }
      return total / n;
    };
    h.run(dirty);
    dsm.free(pages);
  } catch (const std::exception& e) {
    return mpidsm::bench::leave_on_error(argv[0], e);
  }
  MPI_Finalize();
}
