/* What the JIAJIA applications share: integer options, the report of
 * interleaved repetitions (the JIAJIA version, then the MPI-native twin, per
 * repetition, so machine noise hits both alike) and of each side's traffic,
 * and agreement on the verification. Every host calls these; host 0 prints (the others' standard
 * output is discarded after jia_init, as under JIAJIA). */
#ifndef JIA_APP_H
#define JIA_APP_H

#include <jia.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/report.h"

/* "-n 1024 -r 3": the value after -<letter>, or `fallback`. -h prints the
 * usage and exits 0; an option without a positive value prints it and exits
 * 2. Host 0 prints, and every host leaves through jia_exit (and so
 * MPI_Finalize): every host sees the same arguments. */
static inline long app_option(int argc, char** argv, char letter, long fallback,
                              const char* usage) {
  for (int i = 1; i < argc; ++i) {
    const int help = strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0;
    if (help || argv[i][0] != '-' || strlen(argv[i]) != 2 || i + 1 >= argc ||
        atol(argv[i + 1]) <= 0) {
      if (jiapid == 0) fprintf(help ? stdout : stderr, "usage: %s %s\n", argv[0], usage);
      jia_exit();
      exit(help ? 0 : 2);
    }
    if (argv[i][1] == letter) return atol(argv[i + 1]);
    ++i;
  }
  return fallback;
}

/* "<title>", the machine, then the JIAJIA and MPI medians and spreads with
 * `work` per second (support/report.h). */
static inline void app_report(const char* title, const double* dsm, const double* mpi, int reps,
                              double work, const char* unit) {
  report_runs(title, "JIAJIA (DSM)", dsm, mpi, reps, work, unit);
}

/* The DSM side of support/report.h's traffic tally, as jia_traffic reads
 * it: bracket each JIAJIA repetition with these, each MPI one with
 * tally_begin_mpi and tally_end_mpi, then call tally_report (collective). */
static inline dsm_counts_t app_dsm_counts(void) {
  const jia_traffic_t t = jia_traffic();
  const dsm_counts_t counts = {t.messages, t.bytes, t.pages, t.intervals, t.waited_ns};
  return counts;
}
static inline void app_begin_dsm(traffic_tally_t* tally) {
  tally_begin_dsm(tally, app_dsm_counts());
}
static inline void app_end_dsm(traffic_tally_t* tally) {
  tally_end_dsm(tally, app_dsm_counts());
}

/* Host h's share of `items` items of `unit` elements each, as MPI's *v
 * collectives take them: items [items*h/P, items*(h+1)/P) at offsets[h],
 * counts[h] elements. The arrays are allocated here; free() them. */
static inline void app_block_shares(long items, long unit, int** counts, int** offsets) {
  *counts = malloc((size_t)jiahosts * sizeof(int));
  *offsets = malloc((size_t)jiahosts * sizeof(int));
  for (int h = 0; h < jiahosts; ++h) {
    (*offsets)[h] = (int)(items * h / jiahosts * unit);
    (*counts)[h] = (int)((items * (h + 1) / jiahosts - items * h / jiahosts) * unit);
  }
}

/* Every host learns whether all passed; host 0 says so. Returns the exit status. */
static inline int app_verdict(int ok, const char* what) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (jiapid == 0) printf("  verification: %s %s\n", what, all ? "correct" : "FAILED");
  fflush(stdout);
  return all ? 0 : 1;
}

#endif /* JIA_APP_H */
