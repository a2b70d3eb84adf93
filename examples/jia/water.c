/* Molecular dynamics in the manner of SPLASH-2's Water-nsquared, as a JIAJIA
 * program: n molecules (Lennard-Jones particles in a periodic box), each
 * host owning a block of them. Per step, each host computes the forces of
 * its molecules with the next n/2 molecules (every pair once) into a
 * private array, then adds it into the shared force array page by page,
 * each page under its own lock (Water's per-molecule locks, coarsened to
 * the page); a barrier; each host moves its molecules from the shared forces
 * and clears them; a barrier.
 * The MPI-native twin computes the same private forces, sums them with
 * MPI_Allreduce and shares the new positions with MPI_Allgatherv. Both must
 * match a sequential run (to 1e-9 relative: the sums' order differs).
 * -o 1 also times the JIAJIA program written with MPI-3 one-sided calls
 * (water_onesided.h): what MPI's own runtime makes of its locks and
 * barriers. Across hosts, give it an osc component that works there (Open
 * MPI 4.1: OMPI_MCA_osc=pt2pt; osc/ucx over tcp times out).
 *   mpirun -np N jia_water [-m 1024 molecules] [-t 20 steps] [-r 3] [-s 1] [-o 1] */
#include <jia.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jia_app.h"
#include "water_model.h"
#include "water_onesided.h"

int main(int argc, char** argv) {
  jia_init(argc, argv);
  const char* usage = "[-m molecules] [-t steps] [-r repetitions] [-s 1] [-o 1]";
  const long n = app_option(argc, argv, 'm', 1024, usage);
  const int steps = (int)app_option(argc, argv, 't', 20, usage);
  const int reps = (int)app_option(argc, argv, 'r', 5, usage);
  const int stats = app_option(argc, argv, 's', 0, usage) != 0;
  const int onesided = app_option(argc, argv, 'o', 0, usage) != 0;
  water_model_init(n);
  const long first = n * jiapid / jiahosts, last = n * (jiapid + 1) / jiahosts, mine = last - first;
  const int bytes = (int)(n * 3 * (long)sizeof(double));
  double* position = (double*)jia_alloc3(bytes, bytes / jiahosts, 0);
  double* force = (double*)jia_alloc3(bytes, bytes / jiahosts, 0);
  const long page_doubles = sysconf(_SC_PAGESIZE) / (long)sizeof(double);
  const long force_pages = (n * 3 + page_doubles - 1) / page_doubles;
  double* private_force = malloc((size_t)(n * 3) * sizeof(double));
  double* velocity = malloc((size_t)(mine * 3) * sizeof(double));
  double* all_positions = malloc((size_t)(n * 3) * sizeof(double));
  double* summed = malloc((size_t)(n * 3) * sizeof(double));
  int *counts, *offsets;
  app_block_shares(n, 3, &counts, &offsets); /* molecules of 3 coordinates */
  /* The one-sided version's homes: jia_alloc3's blocks of whole pages. */
  const long page_bytes = page_doubles * (long)sizeof(double);
  const long block_pages = (bytes / jiahosts + page_bytes - 1) / page_bytes;
  water_onesided_t* onesided_version =
      onesided ? water_onesided_create(first, last, block_pages > 0 ? block_pages : 1) : NULL;

  double dsm_time[16], mpi_time[16], onesided_time[16];
  const int runs = reps < 16 ? reps : 16;
  traffic_tally_t traffic = {0};
  for (int rep = 0; rep < runs; ++rep) {
    app_begin_dsm(&traffic);
    water_initial_positions(position + first * 3, first, last);
    memset(force + first * 3, 0, (size_t)(mine * 3) * sizeof(double));
    memset(velocity, 0, (size_t)(mine * 3) * sizeof(double));
    if (stats && rep == runs - 1) jia_startstat();
    double start = start_together();
    jia_barrier(); /* publishes the initialisation: timed (report.h) */
    for (int t = 0; t < steps; ++t) {
      memset(private_force, 0, (size_t)(n * 3) * sizeof(double));
      water_compute_forces(position, first, last, private_force);
      /* Pages in a different order on each host, so hosts rarely queue. */
      for (long k = 0; k < force_pages; ++k) {
        const long page = (k + jiapid * force_pages / jiahosts) % force_pages;
        const long begin = page * page_doubles,
                   end = begin + page_doubles < n * 3 ? begin + page_doubles : n * 3;
        jia_lock((int)page);
        for (long x = begin; x < end; ++x) force[x] += private_force[x];
        jia_unlock((int)page);
      }
      jia_barrier();
      water_move(position, velocity, force, first, last);
      memset(force + first * 3, 0, (size_t)(mine * 3) * sizeof(double));
      jia_barrier();
    }
    dsm_time[rep] = MPI_Wtime() - start;
    app_end_dsm(&traffic);
    if (stats && rep == runs - 1) jia_stopstat();
    tally_begin_mpi(&traffic);

    water_initial_positions(all_positions + first * 3, first, last);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DOUBLE, all_positions, counts, offsets, MPI_DOUBLE,
                   MPI_COMM_WORLD);
    memset(velocity, 0, (size_t)(mine * 3) * sizeof(double));
    start = start_together();
    for (int t = 0; t < steps; ++t) {
      memset(private_force, 0, (size_t)(n * 3) * sizeof(double));
      water_compute_forces(all_positions, first, last, private_force);
      MPI_Allreduce(private_force, summed, (int)(n * 3), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      water_move(all_positions, velocity, summed, first, last);
      MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DOUBLE, all_positions, counts, offsets, MPI_DOUBLE,
                     MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_time[rep] = MPI_Wtime() - start;
    tally_end_mpi(&traffic);
    if (onesided_version) onesided_time[rep] = water_onesided_run(onesided_version, steps);
  }
  char title[160];
  snprintf(title, sizeof title, "jia_water %ld molecules, %d steps, %d host%s", n, steps, jiahosts,
           jiahosts > 1 ? "s" : "");
  app_report(title, dsm_time, mpi_time, runs, (double)steps, "steps/s");
  tally_report(&traffic);
  if (onesided_version)
    report_reference("MPI one-sided", "one-sided/MPI", onesided_time, mpi_time, runs, (double)steps,
                     "steps/s");

  /* Host 0: a sequential run against both (relative 1e-9: sums differ in order). */
  int ok = 1;
  if (jiapid == 0) {
    double* p = malloc((size_t)(n * 3) * sizeof(double));
    double* v = calloc((size_t)(n * 3), sizeof(double));
    double* f = malloc((size_t)(n * 3) * sizeof(double));
    water_initial_positions(p, 0, n);
    for (int t = 0; t < steps; ++t) {
      memset(f, 0, (size_t)(n * 3) * sizeof(double));
      water_compute_forces(p, 0, n, f);
      water_move(p, v, f, 0, n);
    }
    double worst = 0, moved = 0;
    double* start_positions = malloc((size_t)(n * 3) * sizeof(double));
    water_initial_positions(start_positions, 0, n);
    for (long x = 0; x < n * 3; ++x) moved = fmax(moved, fabs(p[x] - start_positions[x]));
    free(start_positions);
    const double* versions[3] = {
        position, all_positions,
        onesided_version ? water_onesided_positions(onesided_version) : NULL};
    for (int version = 0; version < 3 && versions[version]; ++version)
      for (long x = 0; x < n * 3; ++x) {
        const double scale = fabs(p[x]) > 1 ? fabs(p[x]) : 1;
        const double a = fabs(versions[version][x] - p[x]) / scale;
        if (a > worst || a != a) worst = a != a ? INFINITY : a;
      }
    /* A run in which nothing moved would prove nothing. */
    ok = worst < 1e-9 && moved > 1e-6;
    printf("  largest move %.3e; largest relative difference from the sequential run: %.2e\n",
           moved, worst);
    free(p);
    free(v);
    free(f);
  }
  const int status = app_verdict(ok, onesided_version ? "DSM, MPI-native and one-sided positions"
                                                      : "DSM and MPI-native positions");
  if (onesided_version) water_onesided_free(onesided_version);
  free(private_force);
  free(velocity);
  free(all_positions);
  free(summed);
  free(counts);
  free(offsets);
  jia_exit();
  return status;
}
