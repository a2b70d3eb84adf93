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
//   mpirun -np 2 jacobi [-n 1024] [-i 100 sweeps] [-r 3 repetitions] [-c pages]
#include <cstdio>
#include <utility>
#include <vector>

#include "example_support.hpp"
#include "mpidsm/dsm.hpp"

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

void initialise(float* rows, std::size_t first, std::size_t last, std::size_t n) {
  for (std::size_t i = first; i < last; ++i)
    for (std::size_t j = 0; j < n; ++j) rows[(i - first) * n + j] = i == 0 ? 1.0f : 0.0f;
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
    const int reps = static_cast<int>(options.get('r', 3));
    const auto cyclic_pages = static_cast<std::size_t>(options.get('c', 0));
    Runtime runtime(MPI_COMM_WORLD);
    Dsm dsm(runtime);
    const int me = runtime.rank(), ranks = runtime.size();

    const Placement placement = cyclic_pages ? Placement::cyclic(cyclic_pages) : Placement::block();
    float* grids[2] = {dsm.allocate<float>(n * n, placement),
                       dsm.allocate<float>(n * n, placement)};
    // Block placement: each rank computes the rows homed on it; cyclic: an
    // even share of the rows.
    std::size_t first = n * static_cast<std::size_t>(me) / static_cast<std::size_t>(ranks);
    std::size_t last = n * static_cast<std::size_t>(me + 1) / static_cast<std::size_t>(ranks);
    if (!cyclic_pages) {
      first = n, last = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (dsm.home_of(grids[0] + i * n) == me && dsm.home_of(grids[1] + i * n) == me) {
          first = std::min(first, i);
          last = i + 1;
        }
      if (first > last) first = last = 0;  // more ranks than pages: nothing here
    }
    const std::size_t rows = last - first;
    // MPI-native: the same rows plus a halo row on each side, twice.
    std::vector<float> local[2] = {std::vector<float>((rows + 2) * n),
                                   std::vector<float>((rows + 2) * n)};
    const int up = me > 0 ? me - 1 : MPI_PROC_NULL, down = me + 1 < ranks ? me + 1 : MPI_PROC_NULL;
    const int width = static_cast<int>(n);

    std::vector<double> dsm_times, mpi_times;
    float* dsm_result = grids[sweeps % 2];
    std::vector<float>* mpi_result = &local[sweeps % 2];
    for (int rep = 0; rep < reps; ++rep) {
      for (float* grid : grids) initialise(grid + first * n, first, last, n);
      dsm.barrier();
      double start = MPI_Wtime();
      for (int s = 0; s < sweeps; ++s) {
        sweep(grids[s % 2] + first * n, grids[(s + 1) % 2] + first * n, first, last, n);
        dsm.barrier();
      }
      dsm_times.push_back(MPI_Wtime() - start);

      for (auto& grid : local) initialise(grid.data() + n, first, last, n);
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
      for (int s = 0; s < sweeps; ++s) {
        float* from = local[s % 2].data();
        float* mine = from + n;
        MPI_Sendrecv(mine, width, MPI_FLOAT, up, 0, mine + rows * n, width, MPI_FLOAT, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(mine + (rows - 1) * n, width, MPI_FLOAT, down, 1, from, width, MPI_FLOAT, up,
                     1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sweep(mine, local[(s + 1) % 2].data() + n, first, last, n);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      mpi_times.push_back(MPI_Wtime() - start);
    }
    char title[160];
    std::snprintf(title, sizeof title, "jacobi n=%zu, %d sweeps, %d rank%s, %s placement", n,
                  sweeps, ranks, ranks > 1 ? "s" : "", cyclic_pages ? "cyclic" : "block");
    examples::report(title, dsm_times, mpi_times, sweeps, "sweeps/s");

    // Verification on rank 0: the DSM grid read through the DSM, the MPI rows gathered.
    std::vector<int> counts(ranks), offsets(ranks);
    const int my_count = static_cast<int>(rows * n);
    MPI_Gather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 1; r < ranks; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
    std::vector<float> gathered(me == 0 ? n * n : 0);
    MPI_Gatherv(mpi_result->data() + n, my_count, MPI_FLOAT, gathered.data(), counts.data(),
                offsets.data(), MPI_FLOAT, 0, MPI_COMM_WORLD);
    bool ok = true;
    if (me == 0) {
      std::vector<float> reference[2] = {std::vector<float>(n * n), std::vector<float>(n * n)};
      for (auto& grid : reference) initialise(grid.data(), 0, n, n);
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
