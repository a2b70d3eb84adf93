// Start-up and memory per rank at this job's size, for the growth laws of
// docs/scaling.md (benchmarks/startup-scaling runs it at np 2 to 32, on one
// node and across simulated hosts, and fits them). Each repetition creates
// and destroys, in order, a Runtime (UCX context, workers, endpoints to
// the ranks of its node), a Pgas (its symmetric heap registered) and a Dsm (its region
// and tables), and records:
//   *_ms        creation time, the slowest rank's (each step starts after a
//               barrier); MPI_Init's own time (once) is printed beside them
//   rss_*_MiB   resident memory each step added (VmRSS), the largest rank's
//   endpoints, remote_keys, addressing_KiB, registered_MiB, workers:
//               Transport::resources() with the Pgas and the Dsm alive, the
//               largest rank's
//   tcp_connections  established TCP connections this process gained (MPI's
//               own connections, made before, are not counted)
// Printed and written (--csv) as the median of the repetitions and their
// spread (min-max).
//   mpirun -np N startup_scaling [-r repetitions] [--csv] [--layout NAME]
#include <mpi.h>

#include <dirent.h>
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mpidsm/dsm.hpp"
#include "mpidsm/pgas.hpp"
#include "mpidsm/runtime.hpp"
#include "mpidsm/transport.hpp"
#include "run_facts.hpp"

using namespace mpidsm;

namespace {

double now() {
  return MPI_Wtime();
}

// VmRSS of this process, in bytes.
double resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024;
  return 0;
}

// Inodes of this process's sockets.
std::set<std::string> socket_inodes() {
  std::set<std::string> inodes;
  DIR* fds = opendir("/proc/self/fd");
  if (!fds) return inodes;
  while (dirent* entry = readdir(fds)) {
    char target[128];
    const std::string link = std::string("/proc/self/fd/") + entry->d_name;
    const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (std::strncmp(target, "socket:[", 8) == 0)
      inodes.insert(std::string(target + 8, std::strchr(target, ']')));
  }
  closedir(fds);
  return inodes;
}

// Established TCP connections (IPv4 and IPv6) whose socket this process holds.
double tcp_connections() {
  const std::set<std::string> mine = socket_inodes();
  double count = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      if (state == "01" && mine.count(inode)) ++count;  // 01: ESTABLISHED
    }
  }
  return count;
}

double slowest(double seconds) {
  double result = 0;
  MPI_Allreduce(&seconds, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return result;
}

// Times `create` on every rank after a barrier; the slowest rank's milliseconds.
template <class Create>
double timed_ms(Create&& create) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = now();
  create();
  return slowest(now() - start) * 1e3;
}

constexpr double kMiB = 1024.0 * 1024.0;

// One repetition's figures, in the order they are printed.
struct Sample {
  std::vector<std::pair<std::string, double>> values;
  void add(const std::string& metric, double value) { values.emplace_back(metric, value); }
  void set(const std::string& metric, double value) { add(metric, slowest(value)); }
};

Sample one_repetition() {
  Sample sample;
  const double tcp_before = tcp_connections();
  double rss = resident_bytes();
  auto rss_step = [&] {  // MiB since the last step
    const double after = resident_bytes();
    const double added = (after - rss) / kMiB;
    rss = after;
    return added;
  };
  Runtime* runtime = nullptr;
  sample.add("runtime_ms", timed_ms([&] { runtime = new Runtime(MPI_COMM_WORLD); }));
  const double rss_runtime = rss_step();
  Pgas* pgas = nullptr;
  sample.add("pgas_ms", timed_ms([&] { pgas = new Pgas(*runtime); }));
  const double rss_pgas = rss_step();
  Dsm* dsm = nullptr;
  sample.add("dsm_ms", timed_ms([&] { dsm = new Dsm(*runtime); }));
  sample.set("rss_runtime_MiB", rss_runtime);
  sample.set("rss_pgas_MiB", rss_pgas);
  sample.set("rss_dsm_MiB", rss_step());
  const TransportResources held = runtime->transport().resources();
  sample.set("workers", static_cast<double>(held.workers));
  sample.set("endpoints", static_cast<double>(held.endpoints));
  sample.set("remote_keys", static_cast<double>(held.remote_keys));
  sample.set("addressing_KiB", static_cast<double>(held.addressing_bytes) / 1024);
  sample.set("registered_MiB", static_cast<double>(held.registered_bytes) / kMiB);
  sample.set("tcp_connections", tcp_connections() - tcp_before);
  delete dsm;
  delete pgas;
  delete runtime;
  return sample;
}

}  // namespace

int main(int argc, char** argv) {
  // MPI_Wtime is not defined before MPI_Init: the monotonic clock times it.
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  MPI_Init(&argc, &argv);
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double init_ms = slowest(static_cast<double>(t1.tv_sec - t0.tv_sec) +
                                 static_cast<double>(t1.tv_nsec - t0.tv_nsec) * 1e-9) *
                         1e3;
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int repetitions = 5;
  bool csv = false;
  std::string layout = "one node";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-r" && i + 1 < argc)
      repetitions = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--csv")
      csv = true;
    else if (arg == "--layout" && i + 1 < argc)
      layout = argv[++i];
    else {
      if (rank == 0)
        std::fprintf(stderr, "usage: startup_scaling [-r repetitions] [--csv] [--layout NAME]\n");
      MPI_Finalize();
      return 2;
    }
  }
  std::vector<Sample> samples;
  for (int r = 0; r < repetitions; ++r) samples.push_back(one_repetition());
  bench::RunFacts facts;
  {
    Runtime runtime(MPI_COMM_WORLD);  // after the measured ones: for the header only
    facts = bench::gather_run_facts(runtime);
  }
  if (rank == 0) {
    bench::print_run_facts(stdout, facts, "Start-up Scaling Test", csv);
    if (!csv)
      std::printf("# per rank, %s; median of %d repetitions (min-max)\n# %-16s %12s\n",
                  layout.c_str(), repetitions, "Metric", "median");
    else
      std::printf("ranks,layout,metric,median,min,max\n");
    // MPI's own start-up, once per process: the reference for runtime_ms.
    if (csv)
      std::printf("%d,%s,mpi_init_ms,%.3f,%.3f,%.3f\n", ranks, layout.c_str(), init_ms, init_ms,
                  init_ms);
    else
      std::printf("%-18s %12.3f  (once)\n", "mpi_init_ms", init_ms);
    for (std::size_t m = 0; m < samples.front().values.size(); ++m) {
      const std::string& metric = samples.front().values[m].first;
      std::vector<double> values;
      for (const Sample& s : samples) values.push_back(s.values[m].second);
      std::sort(values.begin(), values.end());
      const double median = values[values.size() / 2];
      if (csv)
        std::printf("%d,%s,%s,%.3f,%.3f,%.3f\n", ranks, layout.c_str(), metric.c_str(), median,
                    values.front(), values.back());
      else
        std::printf("%-18s %12.3f  (%.3f-%.3f)\n", metric.c_str(), median, values.front(),
                    values.back());
    }
  }
  MPI_Finalize();
}
