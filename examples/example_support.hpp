// What the DSM examples share: options, timing of interleaved repetitions
// (DSM, then MPI-native, per repetition, so machine noise hits both), and
// the report line.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Rank 0 prints "<what>: DSM x s (rate), MPI y s (rate), DSM/MPI z" with the
// medians; the rate is `work` per second, in the unit named by `rate_unit`.
inline void report(const char* what, const std::vector<double>& dsm, const std::vector<double>& mpi,
                   double work, const char* rate_unit) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  const double d = median(dsm), m = median(mpi);
  std::printf("%s\n", what);
  std::printf("  DSM         %9.4f s  %9.2f %s   (first run %.4f s)\n", d, work / d, rate_unit,
              dsm.front());
  std::printf("  MPI-native  %9.4f s  %9.2f %s   (first run %.4f s)\n", m, work / m, rate_unit,
              mpi.front());
  std::printf("  DSM/MPI     %9.3f   (medians of %zu runs)\n", d / m, dsm.size());
}

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
