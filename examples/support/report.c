/* The examples' report (report.h). */
#include "report.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_rank_zero(void) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

/* /proc/cpuinfo's "model name" (x86) or "CPU part" (Arm). */
static void cpu_model(char* model, size_t size) {
  snprintf(model, size, "unknown CPU");
  FILE* info = fopen("/proc/cpuinfo", "r");
  if (!info) return;
  char line[512];
  while (fgets(line, sizeof line, info)) {
    if (strncmp(line, "model name", 10) != 0 && strncmp(line, "CPU part", 8) != 0) continue;
    const char* value = strchr(line, ':');
    if (!value) continue;
    value += 1 + strspn(value + 1, " \t");
    snprintf(model, size, "%.*s", (int)strcspn(value, "\n"), value);
    break;
  }
  fclose(info);
}

/* The extensions the DSM's diff kernels choose between. */
static const char* vector_extensions(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bw")) return "avx2, avx512f, avx512bw";
  if (__builtin_cpu_supports("avx2")) return "avx2, no avx512bw";
  return "no avx2, no avx512bw";
#elif defined(__aarch64__)
  return "neon";
#else
  return "no vector extensions known";
#endif
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

typedef struct {
  double median, min, max;
} spread_t;

static spread_t spread_of(const double* values, int count) {
  double* sorted = malloc((size_t)count * sizeof(double));
  memcpy(sorted, values, (size_t)count * sizeof(double));
  qsort(sorted, (size_t)count, sizeof(double), compare_doubles);
  const spread_t s = {sorted[count / 2], sorted[0], sorted[count - 1]};
  free(sorted);
  return s;
}

double start_together(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime();
}

/* "<label>  <median> s  <rate> <unit>   (min-max <min>-<max> s)" */
static void print_times(const char* label, spread_t s, double work, const char* unit) {
  printf("  %-12s  %9.4f s  %10.2f %s   (min-max %.4f-%.4f s)\n", label, s.median, work / s.median,
         unit, s.min, s.max);
}

/* "<name>  <ratio of medians>   (min-max <per-repetition ratios> ...)" of
 * `times` to the MPI twin's. */
static void print_ratio(const char* name, const double* times, const double* mpi, int reps) {
  double* ratios = malloc((size_t)reps * sizeof(double));
  for (int r = 0; r < reps; ++r) ratios[r] = times[r] / mpi[r];
  const spread_t t = spread_of(times, reps), m = spread_of(mpi, reps), q = spread_of(ratios, reps);
  free(ratios);
  printf("  %-12s  %9.3f   (min-max %.3f-%.3f over %d interleaved runs)\n", name,
         t.median / m.median, q.min, q.max, reps);
}

void report_runs(const char* title, const char* dsm_label, const double* dsm, const double* mpi,
                 int reps, double work, const char* unit) {
  if (!is_rank_zero() || reps <= 0) return;
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  char model[256];
  cpu_model(model, sizeof model);
  printf("%s\n", title);
  printf("  machine       %s (%s), %d rank%s\n", model, vector_extensions(), ranks,
         ranks == 1 ? "" : "s");
  print_times(dsm_label, spread_of(dsm, reps), work, unit);
  print_times("MPI-native", spread_of(mpi, reps), work, unit);
  print_ratio("DSM/MPI", dsm, mpi, reps);
  fflush(stdout);
}

void report_reference(const char* label, const char* ratio_name, const double* times,
                      const double* mpi, int reps, double work, const char* unit) {
  if (!is_rank_zero() || reps <= 0) return;
  print_times(label, spread_of(times, reps), work, unit);
  print_ratio(ratio_name, times, mpi, reps);
  fflush(stdout);
}

void tally_begin_dsm(traffic_tally_t* tally, dsm_counts_t now) {
  tally->dsm_mark = now;
  tally->mpi_mark = mpi_traffic();
}

void tally_end_dsm(traffic_tally_t* tally, dsm_counts_t now) {
  const mpi_traffic_t mpi = mpi_traffic();
  tally->dsm.messages +=
      now.messages - tally->dsm_mark.messages + mpi.messages - tally->mpi_mark.messages;
  tally->dsm.bytes += now.bytes - tally->dsm_mark.bytes + mpi.bytes - tally->mpi_mark.bytes;
  tally->dsm.pages += now.pages - tally->dsm_mark.pages;
  tally->dsm.intervals += now.intervals - tally->dsm_mark.intervals;
  tally->dsm.waited_ns += now.waited_ns - tally->dsm_mark.waited_ns;
}

void tally_begin_mpi(traffic_tally_t* tally) {
  tally->mpi_mark = mpi_traffic();
}

void tally_end_mpi(traffic_tally_t* tally) {
  const mpi_traffic_t mpi = mpi_traffic();
  tally->mpi.messages += mpi.messages - tally->mpi_mark.messages;
  tally->mpi.bytes += mpi.bytes - tally->mpi_mark.bytes;
}

void tally_report(const traffic_tally_t* tally) {
  const dsm_counts_t* dsm = &tally->dsm;
  unsigned long long mine[5] = {dsm->messages, dsm->bytes, dsm->pages, tally->mpi.messages,
                                tally->mpi.bytes},
                     all[5];
  PMPI_Allreduce(mine, all, 5, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  int ranks = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct {
    double ms;
    int rank;
  } waited = {(double)dsm->waited_ns / 1e6, rank}, least, most;
  PMPI_Allreduce(&waited, &least, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
  PMPI_Allreduce(&waited, &most, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  if (rank != 0) return;
  const double per = (double)ranks * (double)(dsm->intervals ? dsm->intervals : 1);
  printf(
      "  per interval  DSM %.1f messages %.0f bytes %.1f pages fetched, MPI %.1f messages %.0f"
      " bytes   (per rank, %llu DSM intervals)\n",
      (double)all[0] / per, (double)all[1] / per, (double)all[2] / per, (double)all[3] / per,
      (double)all[4] / per, dsm->intervals);
  printf(
      "  DSM waits     %.1f ms (rank %d) to %.1f ms (rank %d) per rank, in barriers, syncs and"
      " locks\n",
      least.ms, least.rank, most.ms, most.rank);
  fflush(stdout);
}
