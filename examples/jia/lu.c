/* Blocked LU decomposition (no pivoting, a diagonally dominant matrix) as a
 * JIAJIA program, in the manner of SPLASH-2's contiguous-block LU: the n x n
 * matrix is stored block by block in shared memory, one block column after
 * another, dealt by jia_alloc3 so that block column J is homed on host
 * J mod P, which also computes it. Per
 * step k: the owner of column k factors the diagonal block and its column
 * panel; a barrier; every host updates its columns right of k, reading the
 * panel through the DSM; a barrier.
 * The MPI-native twin keeps each host's block columns locally and
 * broadcasts the panel (MPI_Bcast) at each step. Both must equal a
 * sequential run of the same block kernels bit for bit.
 *   mpirun -np N jia_lu [-n 1024] [-b 32 block] [-r 5 repetitions] [-s 1: statistics] */
#include <jia.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jia_app.h"

static long n, b, nb; /* matrix size, block size, blocks per side */

/* The block kernels, on b x b row-major blocks. */
static void factor_diagonal(double* a) {
  for (long i = 0; i < b; ++i)
    for (long j = i + 1; j < b; ++j) {
      const double l = a[j * b + i] /= a[i * b + i];
      for (long c = i + 1; c < b; ++c) a[j * b + c] -= l * a[i * b + c];
    }
}

/* A block below the diagonal becomes L: A U^-1. */
static void solve_below(const double* diagonal, double* a) {
  for (long r = 0; r < b; ++r)
    for (long i = 0; i < b; ++i) {
      const double x = a[r * b + i] /= diagonal[i * b + i];
      for (long c = i + 1; c < b; ++c) a[r * b + c] -= x * diagonal[i * b + c];
    }
}

/* A block right of the diagonal becomes U: L^-1 A (L unit lower). */
static void solve_right(const double* diagonal, double* a) {
  for (long i = 0; i < b; ++i)
    for (long j = i + 1; j < b; ++j) {
      const double l = diagonal[j * b + i];
      for (long c = 0; c < b; ++c) a[j * b + c] -= l * a[i * b + c];
    }
}

/* a -= l u */
static void update(const double* l, const double* u, double* a) {
  for (long i = 0; i < b; ++i)
    for (long k = 0; k < b; ++k) {
      const double x = l[i * b + k];
      for (long c = 0; c < b; ++c) a[i * b + c] -= x * u[k * b + c];
    }
}

static double initial(long i, long j) {
  const double v = (double)((unsigned long)(i * n + j) * 2654435761ul % 1000u) / 1000.0;
  return i == j ? v + (double)n : v;
}

/* Block (I, J) of a blocked matrix, stored block column by block column, so
 * that a column is contiguous: homed on one host, and the panel a step reads
 * is one stream of pages. */
static double* block(double* m, long I, long J) {
  return m + (J * nb + I) * b * b;
}

static void fill_block(double* blk, long I, long J) {
  for (long i = 0; i < b; ++i)
    for (long j = 0; j < b; ++j) blk[i * b + j] = initial(I * b + i, J * b + j);
}

/* Step k's column work: the diagonal block, then the blocks below it. */
static void factor_column(double* (*at)(void*, long, long), void* m, long k) {
  factor_diagonal(at(m, k, k));
  for (long I = k + 1; I < nb; ++I) solve_below(at(m, k, k), at(m, I, k));
}

/* Step k's work on block column J > k, reading the column k panel. */
static void update_column(double* (*at)(void*, long, long), void* m, double* (*panel)(void*, long),
                          void* p, long k, long J) {
  solve_right(panel(p, k), at(m, k, J));
  for (long I = k + 1; I < nb; ++I) update(panel(p, I), at(m, k, J), at(m, I, J));
}

/* Views: the shared blocked matrix, its column k as the panel, and the MPI
 * twin's local columns (column J's blocks contiguous) and received panel. */
static double* shared_at(void* m, long I, long J) {
  return block(m, I, J);
}
static long panel_step;
static double* shared_panel(void* m, long I) {
  return block(m, I, panel_step);
}
static double* local_at(void* m, long I, long J) {
  return (double*)m + ((J / jiahosts) * nb + I) * b * b;
}
static double* local_panel(void* p, long I) {
  return (double*)p + I * b * b;
}

int main(int argc, char** argv) {
  jia_init(argc, argv);
  const char* usage = "[-n size] [-b block] [-r repetitions] [-s 1]";
  n = app_option(argc, argv, 'n', 1024, usage);
  b = app_option(argc, argv, 'b', 32, usage);
  const int reps = (int)app_option(argc, argv, 'r', 5, usage);
  const int stats = app_option(argc, argv, 's', 0, usage) != 0;
  if (n % b != 0) jia_error("n %ld is not a multiple of the block size %ld", n, b);
  nb = n / b;
  const long block_bytes = b * b * (long)sizeof(double);
  double* a = (double*)jia_alloc3((int)(n * n * (long)sizeof(double)), (int)(nb * block_bytes), 0);
  const long my_columns = (nb - jiapid + jiahosts - 1) / jiahosts;
  double* local = malloc((size_t)(my_columns * nb * block_bytes));
  double* panel = malloc((size_t)(nb * block_bytes));

  double dsm_time[16], mpi_time[16];
  const int runs = reps < 16 ? reps : 16;
  traffic_tally_t traffic = {0};
  for (int rep = 0; rep < runs; ++rep) {
    app_begin_dsm(&traffic);
    for (long J = jiapid; J < nb; J += jiahosts)
      for (long I = 0; I < nb; ++I) fill_block(block(a, I, J), I, J);
    if (stats && rep == runs - 1) jia_startstat();
    double start = start_together();
    jia_barrier(); /* publishes the initialisation: timed (report.h) */
    for (long k = 0; k < nb; ++k) {
      if (k % jiahosts == jiapid) factor_column(shared_at, a, k);
      jia_barrier();
      panel_step = k;
      for (long J = k + 1; J < nb; ++J)
        if (J % jiahosts == jiapid) update_column(shared_at, a, shared_panel, a, k, J);
      jia_barrier();
    }
    dsm_time[rep] = MPI_Wtime() - start;
    app_end_dsm(&traffic);
    if (stats && rep == runs - 1) jia_stopstat();
    tally_begin_mpi(&traffic);

    for (long J = jiapid; J < nb; J += jiahosts)
      for (long I = 0; I < nb; ++I) fill_block(local_at(local, I, J), I, J);
    start = start_together();
    for (long k = 0; k < nb; ++k) {
      const int owner = (int)(k % jiahosts);
      if (owner == jiapid) {
        factor_column(local_at, local, k);
        memcpy(panel + k * b * b, local_at(local, k, k), (size_t)((nb - k) * block_bytes));
      }
      MPI_Bcast(panel + k * b * b, (int)((nb - k) * b * b), MPI_DOUBLE, owner, MPI_COMM_WORLD);
      for (long J = k + 1; J < nb; ++J)
        if (J % jiahosts == jiapid) update_column(local_at, local, local_panel, panel, k, J);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_time[rep] = MPI_Wtime() - start;
    tally_end_mpi(&traffic);
  }
  char title[160];
  snprintf(title, sizeof title, "jia_lu n=%ld, block %ld, %d host%s", n, b, jiahosts,
           jiahosts > 1 ? "s" : "");
  app_report(title, dsm_time, mpi_time, runs, 2.0 / 3.0 * (double)n * n * n / 1e9, "GFlop/s");
  tally_report(&traffic);

  /* Host 0: the sequential run of the same kernels, against both results
   * (the MPI columns gathered through messages). */
  int ok = 1;
  double* column = malloc((size_t)(nb * block_bytes));
  if (jiapid == 0) {
    double* reference = malloc((size_t)(n * n) * sizeof(double));
    for (long I = 0; I < nb; ++I)
      for (long J = 0; J < nb; ++J) fill_block(block(reference, I, J), I, J);
    for (long k = 0; k < nb; ++k) {
      factor_column(shared_at, reference, k);
      panel_step = k;
      for (long J = k + 1; J < nb; ++J)
        update_column(shared_at, reference, shared_panel, reference, k, J);
    }
    for (long J = 0; J < nb; ++J) {
      const int owner = (int)(J % jiahosts);
      if (owner == 0)
        memcpy(column, local_at(local, 0, J), (size_t)(nb * block_bytes));
      else
        MPI_Recv(column, (int)(nb * b * b), MPI_DOUBLE, owner, (int)J, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      for (long I = 0; I < nb && ok; ++I)
        ok = memcmp(block(a, I, J), block(reference, I, J), (size_t)block_bytes) == 0 &&
             memcmp(column + I * b * b, block(reference, I, J), (size_t)block_bytes) == 0;
    }
    free(reference);
  } else {
    for (long J = jiapid; J < nb; J += jiahosts)
      MPI_Send(local_at(local, 0, J), (int)(nb * b * b), MPI_DOUBLE, 0, (int)J, MPI_COMM_WORLD);
  }
  const int status = app_verdict(ok, "DSM and MPI-native factors");
  free(column);
  free(local);
  free(panel);
  jia_exit();
  return status;
}
