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

/* Every rank's clock for a timed section, read once every rank got here.
 * A DSM section starts with the barrier that publishes what its ranks
 * initialised: that barrier moves the data its MPI twin moves inside its own
 * timed section (all of B in matmul), so it is timed too. */
double start_together(void);

/* The title and the machine line, then the two timings of `reps`
 * interleaved repetitions and their ratio; `work` per second in `unit`. */
void report_runs(const char* title, const char* dsm_label, const double* dsm, const double* mpi,
                 int reps, double work, const char* unit);

/* A third version's timings, interleaved with the same repetitions (a
 * reference such as the same program on MPI's one-sided calls), and their
 * ratio to the MPI twin's, named `ratio_name` ("one-sided/MPI"). */
void report_reference(const char* label, const char* ratio_name, const double* times,
                      const double* mpi, int reps, double work, const char* unit);

/* What the DSM side can say of itself at a moment: messages and bytes it
 * sent through mpidsm, pages its DSM brought in (on one node mostly copied
 * from mapped memory, which no message counts), intervals it ended (each
 * barrier, sync or lock acquire ends one), nanoseconds it waited in them.
 * The JIAJIA applications read it from jia_traffic, the C++ examples from
 * Transport::traffic and DsmStats. */
typedef struct {
  unsigned long long messages, bytes, pages, intervals, waited_ns;
} dsm_counts_t;

/* Each side's traffic over the repetitions: the DSM's through mpidsm and
 * MPI (its barriers across nodes), the twin's through MPI. Zero-initialise,
 * then bracket every DSM and every MPI repetition. */
typedef struct {
  dsm_counts_t dsm_mark, dsm;
  mpi_traffic_t mpi_mark, mpi;
} traffic_tally_t;

void tally_begin_dsm(traffic_tally_t* tally, dsm_counts_t now);
void tally_end_dsm(traffic_tally_t* tally, dsm_counts_t now);
void tally_begin_mpi(traffic_tally_t* tally);
void tally_end_mpi(traffic_tally_t* tally);

/* The traffic line, per rank and DSM interval, then the least and the most
 * time a rank waited in the DSM's synchronisation (ranks out of step: one
 * computes while the others wait). Collective over MPI_COMM_WORLD; its own
 * reductions are not counted. */
void tally_report(const traffic_tally_t* tally);

#ifdef __cplusplus
}
#endif

#endif
