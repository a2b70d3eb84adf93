// What every benchmark's header says of its run, in one format for all of
// them (harness tests, dsm_footprint, startup_scaling):
//   # mpidsm <Title> v<version>
//   # <MPI library>; MPI one-sided <osc>; mpidsm rank 0 to 1: <UCX transports>
//   # CPU <model> (<vector extensions>); <N> ranks on <host>, <date>
// and with --csv, one comment line of key=value facts that benchmarks/plot
// reads:
//   # mpidsm=...; mpi=...; mpi_osc=...; transport=...; cpu=...; vector=...; ranks=...; host=...;
//   date=...
// The CPU's model and vector extensions are there because a figure holds
// for a CPU: the DSM's diffs take a different path without AVX-512.
#pragma once

#include <cstdio>
#include <string>

#include "mpidsm/runtime.hpp"

namespace mpidsm::bench {

struct RunFacts {
  std::string mpi;        // "Open MPI v4.1.4"
  std::string mpi_osc;    // "osc/sm", or "none: <MPI's error>" where MPI gives no window
  std::string transport;  // UCX transports from rank 0 to rank 1, "self" alone
  std::string cpu;        // "AMD EPYC 7R13 Processor"
  std::string vector;     // "avx2 bmi2, no avx512f avx512bw"
  std::string host, date;
  int ranks = 0;
};

// Collective over MPI_COMM_WORLD (it opens and frees an MPI window to name
// the one-sided component). `runtime`: where to read the transport from.
RunFacts gather_run_facts(Runtime& runtime);

// The three header lines, or the CSV facts line, to `out`.
void print_run_facts(std::FILE* out, const RunFacts& facts, const std::string& title, bool csv);

}  // namespace mpidsm::bench
