// Resident memory per rank of a DSM region against its size and the pages
// used. For each region size, every rank creates the region, writes `pages`
// pages homed on it, reads `pages` pages homed on the next rank, and passes a
// barrier; the table shows what that cost in resident memory (VmRSS) and at
// its peak (VmHWM, reset before each size), as the maximum over ranks.
// Memory the kernel gives a process counts when it is touched, so this is
// what the runtime's per-page metadata (home directory, sharing counts, page
// tables, lock records) costs for a region that size: it should follow the
// pages used, not the region's size. The last column is the same pages in an
// MPI window sized for the pages used, MPI's footprint for the same data
// (an MPI window cannot be larger than the memory behind it).
//   mpirun -np 2 dsm_footprint [-s 256M,1T,16T] [-p pages] [-l locks] [--csv]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_window.hpp"
#include "mpidsm/dsm.hpp"
#include "run_facts.hpp"

using namespace mpidsm;

namespace {

constexpr std::size_t kPage = 4096;

// The value of `field` ("VmRSS") in /proc/self/status, in bytes.
std::size_t status_bytes(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::size_t length = std::strlen(field);
  while (std::getline(status, line))
    if (line.compare(0, length, field) == 0 && line[length] == ':')
      return std::stoull(line.substr(length + 1)) * 1024;  // "  1234 kB"
  return 0;
}

// Peak resident memory starts again from the current one.
void reset_peak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
}

std::size_t max_over_ranks(std::size_t value) {
  unsigned long long mine = value, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return static_cast<std::size_t>(all);
}

std::string mib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / (1 << 20));
  return text;
}

struct Options {
  std::vector<std::string> sizes{"256M", "1T", "16T"};
  std::size_t pages = 100;
  std::size_t locks = 0;  // 0: the runtime's setting
  bool csv = false;
};

std::size_t parse_size(const std::string& text) {
  std::size_t used = 0;
  std::size_t value = std::stoull(text, &used);
  const std::string suffix = text.substr(used);
  const std::string units = "KMGT";
  if (!suffix.empty()) {
    const auto power = units.find(suffix[0]);
    if (suffix.size() != 1 || power == std::string::npos)
      throw std::invalid_argument("unknown size suffix in '" + text + "'");
    value <<= 10 * (power + 1);
  }
  return value;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-s") {
      options.sizes.clear();
      std::stringstream list(value());
      for (std::string size; std::getline(list, size, ',');) options.sizes.push_back(size);
    } else if (arg == "-p") {
      options.pages = std::stoull(value());
    } else if (arg == "-l") {
      options.locks = std::stoull(value());
    } else if (arg == "--csv") {
      options.csv = true;
    } else {
      throw std::invalid_argument("unknown option " + arg +
                                  " (usage: dsm_footprint [-s 256M,1T,16T] [-p pages] "
                                  "[-l locks] [--csv])");
    }
  }
  return options;
}

struct Row {
  std::size_t rss = 0, peak = 0;
};

// One region of `size` bytes: its growth of this rank's resident memory.
Row measure(Runtime& runtime, std::size_t size, const Options& options) {
  const int me = runtime.rank();
  const int ranks = runtime.size();
  MPI_Barrier(MPI_COMM_WORLD);
  const std::size_t before = status_bytes("VmRSS");
  reset_peak();
  Row row;
  {
    DsmSettings settings = DsmSettings::from(runtime.config());
    settings.size = size;
    if (options.locks) settings.locks = options.locks;
    Dsm dsm(runtime, settings);
    const std::size_t block = options.pages * kPage;
    auto* data = dsm.allocate<std::byte>(block * static_cast<std::size_t>(ranks));
    std::byte* mine = data + block * static_cast<std::size_t>(me);
    for (std::size_t p = 0; p < options.pages; ++p) mine[p * kPage] = std::byte{1};
    dsm.barrier();
    const std::byte* next = data + block * static_cast<std::size_t>((me + 1) % ranks);
    unsigned sum = 0;
    for (std::size_t p = 0; p < options.pages; ++p)
      sum += static_cast<unsigned>(*reinterpret_cast<const volatile std::byte*>(next + p * kPage));
    if (sum != options.pages)
      std::fprintf(stderr, "rank %d: read %u of %zu written pages\n", me, sum, options.pages);
    dsm.barrier();
    row.rss = status_bytes("VmRSS") - std::min(before, status_bytes("VmRSS"));
    row.peak = status_bytes("VmHWM") - std::min(before, status_bytes("VmHWM"));
  }
  return {max_over_ranks(row.rss), max_over_ranks(row.peak)};
}

// MPI's footprint for the same data: a window of the pages this rank homes.
std::size_t mpi_window_growth(const Options& options) {
  MPI_Barrier(MPI_COMM_WORLD);
  const std::size_t before = status_bytes("VmRSS");
  void* base = nullptr;
  MPI_Win window;
  const std::size_t bytes = options.pages * kPage;
  if (std::string error; !bench::allocate_mpi_window(static_cast<MPI_Aint>(bytes), MPI_COMM_WORLD,
                                                     &base, &window, error))
    throw std::runtime_error(bench::no_mpi_window_text(error));
  for (std::size_t p = 0; p < options.pages; ++p) static_cast<char*>(base)[p * kPage] = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  const std::size_t growth = status_bytes("VmRSS") - std::min(before, status_bytes("VmRSS"));
  MPI_Win_free(&window);
  return max_over_ranks(growth);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Runtime runtime(MPI_COMM_WORLD);
    const bool printer = runtime.rank() == 0;
    try {
      const Options options = parse(argc, argv);
      const std::size_t mpi = mpi_window_growth(options);
      const bench::RunFacts facts = bench::gather_run_facts(runtime);
      if (printer) {
        bench::print_run_facts(stdout, facts, "DSM Footprint Test", options.csv);
        if (!options.csv)
          std::printf(
              "# per rank: %zu pages written (homed), %zu read (cached); MiB, the most of any "
              "rank\n",
              options.pages, options.pages);
        std::printf(
            options.csv ? "region,rss_mib,peak_mib,mpi_window_mib\n" : "# %-10s %12s %12s %16s\n",
            "Region", "RSS MiB", "Peak MiB", "MPI window MiB");
      }
      for (const auto& text : options.sizes) {
        const Row row = measure(runtime, parse_size(text), options);
        if (printer)
          std::printf(options.csv ? "%s,%s,%s,%s\n" : "  %-10s %12s %12s %16s\n", text.c_str(),
                      mib(row.rss).c_str(), mib(row.peak).c_str(), mib(mpi).c_str());
        std::fflush(stdout);
      }
    } catch (const std::exception& e) {
      if (printer) std::fprintf(stderr, "dsm_footprint: %s\n", e.what());
      status = 1;
    }
  }
  MPI_Finalize();
  return status;
}
