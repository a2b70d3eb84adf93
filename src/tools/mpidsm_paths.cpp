// mpidsm_paths: run under mpirun to see how every pair of ranks is joined:
// the hosts, the UCX transports of the endpoint, and whether mpidsm reaches
// the peer's memory with loads and stores (same node) or through UCX.
//   mpirun -np 4 mpidsm_paths [-h] [-V]
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "mpidsm/pgas.hpp"
#include "mpidsm/runtime.hpp"
#include "mpidsm/version.hpp"

namespace {

// Every rank's host name, by rank.
std::vector<std::string> host_names(int size) {
  constexpr int kName = 64;
  char mine[kName] = {};
  gethostname(mine, kName - 1);
  std::vector<char> all(static_cast<std::size_t>(size) * kName);
  MPI_Allgather(mine, kName, MPI_CHAR, all.data(), kName, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> names;
  for (int r = 0; r < size; ++r) names.emplace_back(&all[static_cast<std::size_t>(r) * kName]);
  return names;
}

// Every rank's text, concatenated in rank order, on rank 0.
std::string gather(const std::string& mine, int rank, int size) {
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(lengths.size());
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(rank == 0 ? total : 0), '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  return all;
}

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: mpirun -np N mpidsm_paths [-h] [-V]\n"
               "  Prints, for every pair of ranks, their hosts, whether mpidsm reaches the\n"
               "  peer's memory with loads and stores or through UCX, and the UCX transports\n"
               "  of the endpoint.\n"
               "  -V, --version  the version of mpidsm\n"
               "  -h, --help     this text\n");
}

// What the command line asks before any measuring: -1 to go on, else the
// exit status (rank 0 has printed what was asked).
int parse(int argc, char** argv, int rank) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      if (rank == 0) usage(stdout);
      return 0;
    }
    if (arg == "-V" || arg == "--version") {
      if (rank == 0) std::printf("mpidsm_paths (mpidsm %s)\n", mpidsm::build::version);
      return 0;
    }
    if (rank == 0) {
      std::fprintf(stderr, "mpidsm_paths: unknown option '%s'\n", argv[i]);
      usage(stderr);
    }
    return 2;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (const int done = parse(argc, argv, world_rank); done >= 0) {
    MPI_Finalize();
    return done;
  }
  int status = 0;
  try {
    mpidsm::Runtime runtime(MPI_COMM_WORLD);
    mpidsm::Pgas pgas(runtime);
    const int me = runtime.rank(), n = runtime.size();
    const std::vector<std::string> hosts = host_names(n);
    auto who = [&](int r) {
      return std::to_string(r) + " (" + hosts[static_cast<std::size_t>(r)] + ")";
    };
    std::string lines;
    char line[512];
    for (int peer = 0; peer < n; ++peer) {
      if (peer == me) continue;
      std::snprintf(line, sizeof line, "  %-18s %-18s %-13s %s\n", who(me).c_str(),
                    who(peer).c_str(), pgas.direct(peer) ? "loads/stores" : "ucx",
                    runtime.transport().path_to(peer).c_str());
      lines += line;
    }
    const std::string all = gather(lines, me, n);
    if (me == 0)
      std::printf("# mpidsm paths, %d rank%s\n  %-18s %-18s %-13s %s\n%s", n, n == 1 ? "" : "s",
                  "rank (host)", "peer (host)", "memory", "UCX transports", all.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpidsm_paths: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
