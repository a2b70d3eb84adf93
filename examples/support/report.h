/* What every example's report says, in one format for the C++ examples and
 * the JIAJIA applications alike (rank 0 prints; every rank calls, as the
 * traffic sums are collective):
 *
 *   <title>
 *     machine      <CPU model> (<vector extensions>), <P> ranks
 *     DSM          <median> s  <rate>   (min-max <min>-<max> s)
 *     MPI-native   <median> s  <rate>   (min-max <min>-<max> s)
 *     DSM/MPI      <ratio of medians>   (min-max <per-repetition ratios>, <n> interleaved runs)
 *     per interval DSM <m> messages <b> bytes <p> pages fetched, MPI <m> messages <b> bytes
 *
 * The per-repetition ratios pair each DSM run with the MPI run right after
 * it, so noise that hits one repetition hits both. The traffic lines are
 * counts (messages and bytes each rank sent, averaged over the ranks, per
 * DSM interval: see mpi_traffic.h and Transport::traffic), which do not
 * depend on the machine, unlike the times. */
#ifndef MPIDSM_EXAMPLES_REPORT_H
#define MPIDSM_EXAMPLES_REPORT_H

#include "mpi_traffic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The title and the machine line, then the two timings of `reps`
 * interleaved repetitions and their ratio; `work` per second in `unit`. */
void report_runs(const char* title, const char* dsm_label, const double* dsm, const double* mpi,
                 int reps, double work, const char* unit);

/* The traffic line. `dsm` and `mpi`: what this rank sent in the DSM's and
 * the twin's repetitions; `pages`: the pages its DSM brought in (on one
 * node mostly copied from mapped memory, which no message counts);
 * `intervals`: the DSM intervals (each ended by a barrier, a sync or a lock
 * acquire) of all repetitions. Collective over MPI_COMM_WORLD; its own
 * reduction is not counted. */
void report_traffic(mpi_traffic_t dsm, unsigned long long pages, mpi_traffic_t mpi,
                    unsigned long long intervals);

/* a - b, field by field. */
mpi_traffic_t traffic_since(mpi_traffic_t now, mpi_traffic_t before);

#ifdef __cplusplus
}
#endif

#endif
