/* Jacobi iteration of the heat equation on an n x n float grid (top row 1,
 * the rest 0), as a JIAJIA program: two shared grids from jia_alloc3 in row
 * blocks, each host sweeping its rows from one grid into the other, a
 * jia_barrier per sweep. Its MPI-native twin, in the same executable, keeps
 * each host's rows plus two halo rows and exchanges halos with
 * MPI_Sendrecv. Both must equal a sequential run bit for bit.
 *   mpirun -np N jia_jacobi [-n 1024] [-i 100 sweeps] [-r 5 repetitions] [-s 1: statistics] */
#include <jia.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jia_app.h"

/* Rows [first, last) of `to` from `from`; row first-1 of both is at [-n]. */
static void sweep(const float* from, float* to, long first, long last, long n) {
  for (long i = first < 1 ? 1 : first; i < (last < n - 1 ? last : n - 1); ++i) {
    const float* in = from + (i - first) * n;
    float* out = to + (i - first) * n;
    for (long j = 1; j < n - 1; ++j)
      out[j] = 0.25f * (in[j - n] + in[j + n] + in[j - 1] + in[j + 1]);
  }
}

static void initialise(float* rows, long first, long last, long n) {
  for (long i = first; i < last; ++i)
    for (long j = 0; j < n; ++j) rows[(i - first) * n + j] = i == 0 ? 1.0f : 0.0f;
}

int main(int argc, char** argv) {
  jia_init(argc, argv);
  const char* usage = "[-n size] [-i sweeps] [-r repetitions] [-s 1]";
  const long n = app_option(argc, argv, 'n', 1024, usage);
  const int sweeps = (int)app_option(argc, argv, 'i', 100, usage);
  const int reps = (int)app_option(argc, argv, 'r', 5, usage);
  const int stats = app_option(argc, argv, 's', 0, usage) != 0;
  const long first = n * jiapid / jiahosts, last = n * (jiapid + 1) / jiahosts, rows = last - first;
  const int bytes = (int)(n * n * sizeof(float));

  float* grid[2];
  for (int g = 0; g < 2; ++g) grid[g] = (float*)jia_alloc3(bytes, bytes / jiahosts, 0);
  float* local[2];
  for (int g = 0; g < 2; ++g) local[g] = malloc((size_t)((rows + 2) * n) * sizeof(float));
  const int up = jiapid - 1, down = jiapid + 1 < jiahosts ? jiapid + 1 : MPI_PROC_NULL;

  double dsm_time[16], mpi_time[16];
  traffic_tally_t traffic = {0};
  for (int rep = 0; rep < reps && rep < 16; ++rep) {
    app_begin_dsm(&traffic);
    for (int g = 0; g < 2; ++g) initialise(grid[g] + first * n, first, last, n);
    if (stats && rep == reps - 1) jia_startstat();
    double start = start_together();
    jia_barrier(); /* publishes the initialisation: timed (report.h) */
    for (int s = 0; s < sweeps; ++s) {
      sweep(grid[s % 2] + first * n, grid[(s + 1) % 2] + first * n, first, last, n);
      jia_barrier();
    }
    dsm_time[rep] = MPI_Wtime() - start;
    app_end_dsm(&traffic);
    if (stats && rep == reps - 1) jia_stopstat();
    tally_begin_mpi(&traffic);

    for (int g = 0; g < 2; ++g) initialise(local[g] + n, first, last, n);
    start = start_together();
    for (int s = 0; s < sweeps; ++s) {
      float* mine = local[s % 2] + n;
      MPI_Sendrecv(mine, (int)n, MPI_FLOAT, up < 0 ? MPI_PROC_NULL : up, 0, mine + rows * n, (int)n,
                   MPI_FLOAT, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Sendrecv(mine + (rows - 1) * n, (int)n, MPI_FLOAT, down, 1, mine - n, (int)n, MPI_FLOAT,
                   up < 0 ? MPI_PROC_NULL : up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sweep(mine, local[(s + 1) % 2] + n, first, last, n);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_time[rep] = MPI_Wtime() - start;
    tally_end_mpi(&traffic);
  }
  char title[160];
  snprintf(title, sizeof title, "jia_jacobi n=%ld, %d sweeps, %d host%s", n, sweeps, jiahosts,
           jiahosts > 1 ? "s" : "");
  app_report(title, dsm_time, mpi_time, reps < 16 ? reps : 16, sweeps, "sweeps/s");
  tally_report(&traffic);

  /* Host 0 checks the shared grid and the gathered MPI rows against a sequential run. */
  float* gathered = jiapid == 0 ? malloc((size_t)(n * n) * sizeof(float)) : NULL;
  int *counts, *offsets;
  app_block_shares(n, n, &counts, &offsets); /* rows of n floats */
  MPI_Gatherv(local[sweeps % 2] + n, (int)(rows * n), MPI_FLOAT, gathered, counts, offsets,
              MPI_FLOAT, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (jiapid == 0) {
    float* reference[2] = {malloc((size_t)(n * n) * sizeof(float)),
                           malloc((size_t)(n * n) * sizeof(float))};
    for (int g = 0; g < 2; ++g) initialise(reference[g], 0, n, n);
    for (int s = 0; s < sweeps; ++s) sweep(reference[s % 2], reference[(s + 1) % 2], 0, n, n);
    const float* expected = reference[sweeps % 2];
    for (long i = 0; i < n * n && ok; ++i)
      ok = grid[sweeps % 2][i] == expected[i] && gathered[i] == expected[i];
    free(reference[0]);
    free(reference[1]);
  }
  const int status = app_verdict(ok, "DSM and MPI-native grids");
  free(gathered);
  free(counts);
  free(offsets);
  for (int g = 0; g < 2; ++g) free(local[g]);
  jia_exit();
  return status;
}
