// Red-black successive over-relaxation on an n x n float grid (fixed
// boundary: top row 1, the rest 0), rows split across ranks, written twice
// in one executable: on the coherent DSM (the grid shared; after each
// colour a Dsm::sync_with the ranks whose rows border this rank's, or with
// -b 1 a DSM barrier) and MPI-native (halo rows exchanged with MPI_Sendrecv
// per colour). Both are checked against a sequential run on rank 0; the
// exit status is non-zero on a mismatch.
//
//   mpirun -np 2 sor [-n 1024] [-i 50 iterations] [-r 5 repetitions] [-b 1]
#include <algorithm>
#include <cstdio>
#include <vector>

#include "example_support.hpp"
#include "mpidsm/dsm.hpp"
#include "row_grid.hpp"

using namespace mpidsm;

namespace {

constexpr float kOmega = 1.5f;

// One colour's update of global rows [first, last) of a grid whose row
// `first - 1` sits at `rows[-n]`. Cells (i + j) % 2 == colour change; they
// read only the other colour, so any split gives the sequential result.
void relax(float* rows, std::size_t first, std::size_t last, std::size_t n, int colour) {
  for (std::size_t i = std::max<std::size_t>(first, 1); i < std::min(last, n - 1); ++i) {
    float* row = rows + (i - first) * n;
    for (std::size_t j = 1 + ((i + 1 + colour) & 1); j < n - 1; j += 2)
      row[j] = (1.0f - kOmega) * row[j] +
               kOmega * 0.25f * (row[j - n] + row[j + n] + row[j - 1] + row[j + 1]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    examples::Options options(argc, argv,
                              "[-n size] [-i iterations] [-r repetitions] [-b 1: DSM barriers]");
    const auto n = static_cast<std::size_t>(options.get('n', 1024));
    const int iterations = static_cast<int>(options.get('i', 50));
    const int reps = static_cast<int>(options.get('r', 5));
    const bool barriers = options.get('b', 0) != 0;
    Runtime runtime(MPI_COMM_WORLD);
    Dsm dsm(runtime);
    const int me = runtime.rank(), ranks = runtime.size();

    // DSM grid, block placement; each rank owns the rows homed on it.
    float* grid = dsm.allocate<float>(n * n);
    const auto [first, last] = examples::rows_homed_here(dsm, grid, n, me);
    const std::size_t rows = last - first;
    // The ranks writing the rows this rank reads beside its own.
    const std::vector<int> neighbours = examples::row_neighbours(dsm, grid, n, first, last);
    // MPI-native: the same rows plus a halo row on each side.
    std::vector<float> local((rows + 2) * n);
    float* mine = local.data() + n;

    std::vector<double> dsm_times, mpi_times;
    examples::TrafficTally traffic(runtime, dsm);
    for (int rep = 0; rep < reps; ++rep) {
      traffic.begin_dsm();
      examples::initialise_grid(grid + first * n, first, last, n);
      double start = start_together();
      dsm.barrier();  // publishes the initialisation: timed (report.h)
      for (int it = 0; it < iterations; ++it)
        for (int colour = 0; colour < 2; ++colour) {
          relax(grid + first * n, first, last, n, colour);
          if (barriers)
            dsm.barrier();
          else
            dsm.sync_with(neighbours);
        }
      dsm.barrier();  // every rank's rows visible everywhere, as MPI_Barrier ends the twin
      dsm_times.push_back(MPI_Wtime() - start);
      traffic.end_dsm();
      traffic.begin_mpi();

      examples::initialise_grid(mine, first, last, n);
      start = start_together();
      for (int it = 0; it < iterations; ++it)
        for (int colour = 0; colour < 2; ++colour) {
          examples::exchange_halos(mine, rows, n, me, ranks);
          relax(mine, first, last, n, colour);
        }
      MPI_Barrier(MPI_COMM_WORLD);
      mpi_times.push_back(MPI_Wtime() - start);
      traffic.end_mpi();
    }
    char title[128];
    std::snprintf(title, sizeof title, "sor n=%zu, %d iterations, %d rank%s, DSM %s", n, iterations,
                  ranks, ranks > 1 ? "s" : "", barriers ? "barriers" : "syncs with neighbours");
    examples::report(title, dsm_times, mpi_times, iterations, "iterations/s");
    traffic.report();

    // Verification on rank 0: the DSM grid read through the DSM, the MPI rows gathered.
    const std::vector<float> gathered = examples::gather_rows(mine, rows, n);
    bool ok = true;
    if (me == 0) {
      std::vector<float> reference(n * n);
      examples::initialise_grid(reference.data(), 0, n, n);
      for (int it = 0; it < iterations; ++it)
        for (int colour = 0; colour < 2; ++colour) relax(reference.data(), 0, n, n, colour);
      for (std::size_t i = 0; i < n * n && ok; ++i)
        ok = grid[i] == reference[i] && gathered[i] == reference[i];
    }
    if (!examples::agree_verified(ok, "DSM and MPI-native grids")) status = 1;
    dsm.barrier();
    dsm.free(grid);
  }
  MPI_Finalize();
  return status;
}
