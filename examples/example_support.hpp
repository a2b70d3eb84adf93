// What the DSM examples share: options, the report of interleaved
// repetitions (DSM, then MPI-native, per repetition, so machine noise hits
// both) and of each side's traffic.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
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

// What each side of an example sent: the DSM's repetitions through mpidsm's
// transport and MPI (its barriers across nodes), the twin's through MPI;
// and the DSM intervals they took (each barrier, sync_with and lock acquire
// ends one). report() prints it per interval.
class TrafficTally {
 public:
  TrafficTally(Runtime& runtime, Dsm& dsm) : runtime_(runtime), dsm_(dsm) {}
  void begin_dsm() {
    mark_ = sent();
    const DsmStats s = dsm_.stats();
    intervals_at_ = intervals_ended(s);
    pages_at_ = pages_brought_in(s);
  }
  void end_dsm() {
    add(dsm_sent_, traffic_since(sent(), mark_));
    const DsmStats s = dsm_.stats();
    intervals_ += intervals_ended(s) - intervals_at_;
    pages_ += pages_brought_in(s) - pages_at_;
  }
  void begin_mpi() { mark_ = mpi_traffic(); }
  void end_mpi() { add(mpi_sent_, traffic_since(mpi_traffic(), mark_)); }
  // Collective.
  void report() const { report_traffic(dsm_sent_, pages_, mpi_sent_, intervals_); }

 private:
  mpi_traffic_t sent() const {
    mpi_traffic_t t = mpi_traffic();
    const TransportTraffic u = runtime_.transport().traffic();
    t.messages += u.messages;
    t.bytes += u.bytes;
    return t;
  }
  // Intervals end at barriers, syncs and lock acquires.
  static std::uint64_t intervals_ended(const DsmStats& s) {
    return s.barriers + s.syncs + s.lock_acquires;
  }
  // By misses and prefetch, and brought up to date at synchronisations.
  static std::uint64_t pages_brought_in(const DsmStats& s) {
    return s.pages_fetched + s.barrier_refetches + s.sync_refetches + s.updates_received;
  }
  static void add(mpi_traffic_t& sum, mpi_traffic_t more) {
    sum.messages += more.messages;
    sum.bytes += more.bytes;
  }
  Runtime& runtime_;
  Dsm& dsm_;
  mpi_traffic_t mark_{}, dsm_sent_{}, mpi_sent_{};
  std::uint64_t intervals_at_ = 0, pages_at_ = 0;
  unsigned long long intervals_ = 0, pages_ = 0;
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
