// What the DSM examples share: options, the report of interleaved
// repetitions (DSM, then MPI-native, per repetition, so machine noise hits
// both) and of each side's traffic.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpidsm/dsm.hpp"
#include "mpidsm/runtime.hpp"
#include "support/report.h"

namespace mpidsm::examples {

// "-n 1024 -r 3 -i 50": integer options by letter, with defaults.
class Options {
 public:
  // -h prints the usage and exits 0; a bad option prints it and exits 2.
  // Rank 0 prints, and every rank leaves through MPI_Finalize (every rank
  // sees the same arguments, so all take the same way out).
  Options(int argc, char** argv, const char* usage) {
    for (int i = 1; i < argc; ++i) {
      const bool help = std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0;
      if (help || argv[i][0] != '-' || std::strlen(argv[i]) != 2 || i + 1 >= argc ||
          std::atol(argv[i + 1]) <= 0) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) std::fprintf(help ? stdout : stderr, "usage: %s %s\n", argv[0], usage);
        MPI_Finalize();
        std::exit(help ? 0 : 2);
      }
      values_.emplace_back(argv[i][1], std::atol(argv[i + 1]));
      ++i;
    }
  }
  long get(char letter, long fallback) const {
    for (auto [l, v] : values_)
      if (l == letter) return v;
    return fallback;
  }

 private:
  std::vector<std::pair<char, long>> values_;
};

// Rank 0 prints the title, the machine, the medians and spreads of the
// interleaved repetitions and the ratio (support/report.h); the rate is
// `work` per second, in the unit named by `rate_unit`.
inline void report(const char* what, const std::vector<double>& dsm, const std::vector<double>& mpi,
                   double work, const char* rate_unit) {
  report_runs(what, "DSM", dsm.data(), mpi.data(), static_cast<int>(dsm.size()), work, rate_unit);
}

// What each side of an example sent (support/report.h's tally), with the
// DSM's own counts read from the runtime's transport and the Dsm's
// statistics. report() prints it per interval (collective).
class TrafficTally {
 public:
  TrafficTally(Runtime& runtime, Dsm& dsm) : runtime_(runtime), dsm_(dsm) {}
  void begin_dsm() { tally_begin_dsm(&tally_, counts()); }
  void end_dsm() { tally_end_dsm(&tally_, counts()); }
  void begin_mpi() { tally_begin_mpi(&tally_); }
  void end_mpi() { tally_end_mpi(&tally_); }
  void report() const { tally_report(&tally_); }

 private:
  dsm_counts_t counts() const {
    const TransportTraffic sent = runtime_.transport().traffic();
    const DsmStats s = dsm_.stats();
    return {sent.messages, sent.bytes, s.pages_brought_in(), s.intervals_ended(), s.waited_ns()};
  }
  Runtime& runtime_;
  Dsm& dsm_;
  traffic_tally_t tally_{};
};

// Every rank learns whether all ranks passed; rank 0 says so.
inline bool agree_verified(bool mine, const char* what) {
  int ok = mine, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf(
        "  verification: %s\n",
        all ? (std::string(what) + " equal the sequential result bit for bit").c_str() : "FAILED");
  return all != 0;
}

}  // namespace mpidsm::examples
