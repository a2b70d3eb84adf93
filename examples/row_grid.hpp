// What the grid examples (sor, jacobi) share: an n x n float grid whose rows
// are split across ranks, with a fixed boundary (top row 1, the rest 0).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "mpidsm/dsm.hpp"

namespace mpidsm::examples {

// Global rows [first, last) of the grid, stored from `rows` on.
inline void initialise_grid(float* rows, std::size_t first, std::size_t last, std::size_t n) {
  for (std::size_t i = first; i < last; ++i)
    for (std::size_t j = 0; j < n; ++j) rows[(i - first) * n + j] = i == 0 ? 1.0f : 0.0f;
}

// The rows [first, last) whose first element is homed on this rank; empty
// when there are more ranks than pages.
inline std::pair<std::size_t, std::size_t> rows_homed_here(Dsm& dsm, const float* grid,
                                                           std::size_t n, int me) {
  std::size_t first = n, last = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (dsm.home_of(grid + i * n) == me) {
      first = std::min(first, i);
      last = i + 1;
    }
  return first > last ? std::pair<std::size_t, std::size_t>{0, 0} : std::pair{first, last};
}

// The ranks that own the rows just outside [first, last) (none for an
// empty range): the ranks whose writes this rank's stencil reads.
inline std::vector<int> row_neighbours(Dsm& dsm, const float* grid, std::size_t n,
                                       std::size_t first, std::size_t last) {
  std::vector<int> neighbours;
  const int me = dsm.home_of(grid + first * n);
  auto add = [&](std::size_t row) {
    const int owner = dsm.home_of(grid + row * n);
    if (owner != me && std::find(neighbours.begin(), neighbours.end(), owner) == neighbours.end())
      neighbours.push_back(owner);
  };
  if (first < last && first > 0) add(first - 1);
  if (first < last && last < n) add(last);
  return neighbours;
}

// MPI-native: fills the halo rows around this rank's `rows` rows at `mine`
// (mine[-n .. -1] from rank me-1, mine[rows*n ..] from rank me+1).
inline void exchange_halos(float* mine, std::size_t rows, std::size_t n, int me, int ranks) {
  const int up = me > 0 ? me - 1 : MPI_PROC_NULL, down = me + 1 < ranks ? me + 1 : MPI_PROC_NULL;
  const int width = static_cast<int>(n);
  MPI_Sendrecv(mine, width, MPI_FLOAT, up, 0, mine + rows * n, width, MPI_FLOAT, down, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(mine + (rows - 1) * n, width, MPI_FLOAT, down, 1, mine - n, width, MPI_FLOAT, up, 1,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

// Every rank's `rows` rows at `mine`, in rank order, on rank 0 (n x n
// floats there, nothing elsewhere).
inline std::vector<float> gather_rows(const float* mine, std::size_t rows, std::size_t n) {
  int me = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(counts.size());
  const int my_count = static_cast<int>(rows * n);
  MPI_Gather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (std::size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<float> gathered(me == 0 ? n * n : 0);
  MPI_Gatherv(mine, my_count, MPI_FLOAT, gathered.data(), counts.data(), offsets.data(), MPI_FLOAT,
              0, MPI_COMM_WORLD);
  return gathered;
}

}  // namespace mpidsm::examples
