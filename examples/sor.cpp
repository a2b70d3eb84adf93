// Red-black successive over-relaxation on an n x n float grid (fixed
// boundary: top row 1, the rest 0), rows split across ranks, written twice
// in one executable: on the coherent DSM (the grid shared, one DSM barrier
// per colour) and MPI-native (halo rows exchanged with MPI_Sendrecv per
// colour). Both are checked against a sequential run on rank 0; the exit
// status is non-zero on a mismatch.
//
//   mpirun -np 2 sor [-n 1024] [-i 50 iterations] [-r 3 repetitions]
#include <cstdio>
#include <vector>

#include "example_support.hpp"
#include "mpidsm/dsm.hpp"

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

void initialise(float* rows, std::size_t first, std::size_t last, std::size_t n) {
  for (std::size_t i = first; i < last; ++i)
    for (std::size_t j = 0; j < n; ++j) rows[(i - first) * n + j] = i == 0 ? 1.0f : 0.0f;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    examples::Options options(argc, argv, "[-n size] [-i iterations] [-r repetitions]");
    const auto n = static_cast<std::size_t>(options.get('n', 1024));
    const int iterations = static_cast<int>(options.get('i', 50));
    const int reps = static_cast<int>(options.get('r', 3));
    Runtime runtime(MPI_COMM_WORLD);
    Dsm dsm(runtime);
    const int me = runtime.rank(), ranks = runtime.size();

    // DSM grid, block placement; each rank owns the rows homed on it.
    float* grid = dsm.allocate<float>(n * n);
    std::size_t first = n, last = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (dsm.home_of(grid + i * n) == me) {
        first = std::min(first, i);
        last = i + 1;
      }
    if (first > last) first = last = 0;  // more ranks than pages: nothing here
    // MPI-native: the same rows plus a halo row on each side.
    std::vector<float> local((last - first + 2) * n);
    float* mine = local.data() + n;
    const int up = me > 0 ? me - 1 : MPI_PROC_NULL, down = me + 1 < ranks ? me + 1 : MPI_PROC_NULL;
    const int width = static_cast<int>(n);

    std::vector<double> dsm_times, mpi_times;
    for (int rep = 0; rep < reps; ++rep) {
      initialise(grid + first * n, first, last, n);
      dsm.barrier();
      double start = MPI_Wtime();
      for (int it = 0; it < iterations; ++it)
        for (int colour = 0; colour < 2; ++colour) {
          relax(grid + first * n, first, last, n, colour);
          dsm.barrier();
        }
      dsm_times.push_back(MPI_Wtime() - start);

      initialise(mine, first, last, n);
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
      for (int it = 0; it < iterations; ++it)
        for (int colour = 0; colour < 2; ++colour) {
          const std::size_t rows = last - first;
          MPI_Sendrecv(mine, width, MPI_FLOAT, up, 0, mine + rows * n, width, MPI_FLOAT, down, 0,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Sendrecv(mine + (rows - 1) * n, width, MPI_FLOAT, down, 1, local.data(), width,
                       MPI_FLOAT, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          relax(mine, first, last, n, colour);
        }
      MPI_Barrier(MPI_COMM_WORLD);
      mpi_times.push_back(MPI_Wtime() - start);
    }
    char title[128];
    std::snprintf(title, sizeof title, "sor n=%zu, %d iterations, %d rank%s", n, iterations, ranks,
                  ranks > 1 ? "s" : "");
    examples::report(title, dsm_times, mpi_times, iterations, "iterations/s");

    // Verification on rank 0: the DSM grid read through the DSM, the MPI rows gathered.
    std::vector<int> counts(ranks), offsets(ranks);
    const int my_count = static_cast<int>((last - first) * n);
    MPI_Gather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 1; r < ranks; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
    std::vector<float> gathered(me == 0 ? n * n : 0);
    MPI_Gatherv(mine, my_count, MPI_FLOAT, gathered.data(), counts.data(), offsets.data(),
                MPI_FLOAT, 0, MPI_COMM_WORLD);
    bool ok = true;
    if (me == 0) {
      std::vector<float> reference(n * n);
      initialise(reference.data(), 0, n, n);
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
