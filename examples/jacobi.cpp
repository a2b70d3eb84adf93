// Jacobi iteration of the heat equation on an n x n float grid (fixed
// boundary: top row 1, the rest 0), rows split across ranks, written twice
// in one executable: on the coherent DSM (two shared grids, read one, write
// the other, one DSM barrier per sweep) and MPI-native (halo rows exchanged
// with MPI_Sendrecv per sweep). Every float of a rank's rows changes in
// every sweep, but only in some of its bytes: the scattered diffs that
// byte-exact diffing must still send cheaply. Both are checked against a
// sequential run on rank 0; the exit status is non-zero on a mismatch.
//
// By default the grids are placed in row blocks and each rank computes the
// rows homed on it (no diffs: homes write in place). With -c P they are
// placed cyclically in blocks of P pages, as JIAJIA's jia_alloc deals pages,
// and each rank computes an even share of the rows: most rows a rank
// computes are homed elsewhere, so every sweep sends their diffs home.
//
//   mpirun -np 2 jacobi [-n 1024] [-i 100 sweeps] [-r 5 repetitions] [-c pages]
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "example_support.hpp"
#include "mpidsm/dsm.hpp"
#include "row_grid.hpp"

using namespace mpidsm;

namespace {

// One sweep over global rows [first, last): `to` gets the average of each
// interior cell's four neighbours in `from`, where row `first - 1` of both
// sits at `[-n]`.
void sweep(const float* from, float* to, std::size_t first, std::size_t last, std::size_t n) {
  for (std::size_t i = std::max<std::size_t>(first, 1); i < std::min(last, n - 1); ++i) {
    const float* in = from + (i - first) * n;
    float* out = to + (i - first) * n;
    for (std::size_t j = 1; j < n - 1; ++j)
      out[j] = 0.25f * (in[j - n] + in[j + n] + in[j - 1] + in[j + 1]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    examples::Options options(argc, argv,
                              "[-n size] [-i sweeps] [-r repetitions] [-c cyclic block pages]");
    const auto n = static_cast<std::size_t>(options.get('n', 1024));
    const int sweeps = static_cast<int>(options.get('i', 100));
    const int reps = static_cast<int>(options.get('r', 5));
    const auto cyclic_pages = static_cast<std::size_t>(options.get('c', 0));
    Runtime runtime(MPI_COMM_WORLD);
    Dsm dsm(runtime);
    const int me = runtime.rank(), ranks = runtime.size();

    const Placement placement = cyclic_pages ? Placement::cyclic(cyclic_pages) : Placement::block();
    float* grids[2] = {dsm.allocate<float>(n * n, placement),
                       dsm.allocate<float>(n * n, placement)};
    // Block placement: each rank computes the rows homed on it (the same in
    // both grids, which have the same size and placement); cyclic: an even
    // share of the rows.
    const auto [first, last] =
        cyclic_pages
            ? std::pair{n * static_cast<std::size_t>(me) / static_cast<std::size_t>(ranks),
                        n * static_cast<std::size_t>(me + 1) / static_cast<std::size_t>(ranks)}
            : examples::rows_homed_here(dsm, grids[0], n, me);
    const std::size_t rows = last - first;
    // MPI-native: the same rows plus a halo row on each side, twice.
    std::vector<float> local[2] = {std::vector<float>((rows + 2) * n),
                                   std::vector<float>((rows + 2) * n)};

    std::vector<double> dsm_times, mpi_times;
    float* dsm_result = grids[sweeps % 2];
    std::vector<float>* mpi_result = &local[sweeps % 2];
    examples::TrafficTally traffic(runtime, dsm);
    for (int rep = 0; rep < reps; ++rep) {
      traffic.begin_dsm();
      for (float* grid : grids) examples::initialise_grid(grid + first * n, first, last, n);
      double start = start_together();
      dsm.barrier();  // publishes the initialisation: timed (report.h)
      for (int s = 0; s < sweeps; ++s) {
        sweep(grids[s % 2] + first * n, grids[(s + 1) % 2] + first * n, first, last, n);
        dsm.barrier();
      }
      dsm_times.push_back(MPI_Wtime() - start);
      traffic.end_dsm();
      traffic.begin_mpi();

      for (auto& grid : local) examples::initialise_grid(grid.data() + n, first, last, n);
      start = start_together();
      for (int s = 0; s < sweeps; ++s) {
        float* mine = local[s % 2].data() + n;
        examples::exchange_halos(mine, rows, n, me, ranks);
        sweep(mine, local[(s + 1) % 2].data() + n, first, last, n);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      mpi_times.push_back(MPI_Wtime() - start);
      traffic.end_mpi();
    }
    char title[160];
    std::snprintf(title, sizeof title, "jacobi n=%zu, %d sweeps, %d rank%s, %s placement", n,
                  sweeps, ranks, ranks > 1 ? "s" : "", cyclic_pages ? "cyclic" : "block");
    examples::report(title, dsm_times, mpi_times, sweeps, "sweeps/s");
    traffic.report();

    // Verification on rank 0: the DSM grid read through the DSM, the MPI rows gathered.
    const std::vector<float> gathered = examples::gather_rows(mpi_result->data() + n, rows, n);
    bool ok = true;
    if (me == 0) {
      std::vector<float> reference[2] = {std::vector<float>(n * n), std::vector<float>(n * n)};
      for (auto& grid : reference) examples::initialise_grid(grid.data(), 0, n, n);
      for (int s = 0; s < sweeps; ++s)
        sweep(reference[s % 2].data(), reference[(s + 1) % 2].data(), 0, n, n);
      const std::vector<float>& expected = reference[sweeps % 2];
      for (std::size_t i = 0; i < n * n && ok; ++i)
        ok = dsm_result[i] == expected[i] && gathered[i] == expected[i];
    }
    if (!examples::agree_verified(ok, "DSM and MPI-native grids")) status = 1;
    dsm.barrier();
    for (float* grid : grids) dsm.free(grid);
  }
  MPI_Finalize();
  return status;
}
