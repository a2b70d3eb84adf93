#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

namespace mpidsm::bench {
namespace {

// Each row is measured in this many slices, alternating mpidsm and MPI, so
// both see the same machine noise; -f prints the best and worst slice.
constexpr int kSlices = 5;

[[noreturn]] void usage(const char* program, const Spec& spec, const char* problem) {
  if (problem) std::fprintf(stderr, "%s: %s\n", program, problem);
  std::fprintf(stderr,
               "usage: mpirun -np 2 %s [options]\n"
               "  %s, mpidsm and MPI side by side\n"
               "  -m [min:]max   message sizes in bytes (default 1:4194304)\n"
               "  -i n           iterations per size up to 8 KiB, a tenth above (default 10000)\n"
               "  -x n           warm-up iterations (default 100)\n"
               "%s"
               "  -f             add min/max columns (best and worst of %d slices)\n"
               "  --csv          comma-separated output\n",
               program, spec.name, spec.window ? "  -W n           window size (default 64)\n" : "",
               kSlices);
  std::exit(problem ? 2 : 0);
}

std::size_t parse_count(const char* program, const Spec& spec, const char* text) {
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (!text[0] || *end || value == 0) usage(program, spec, "expected a positive number");
  return static_cast<std::size_t>(value);
}

struct Stats {
  double mean = 0, min = 0, max = 0;
};

Stats summarize(const std::vector<double>& values) {
  Stats s;
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

}  // namespace

double seconds() {
  return MPI_Wtime();
}

Options parse_options(int argc, char** argv, const Spec& spec) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(argv[0], spec, ("missing value for " + arg).c_str());
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      usage(argv[0], spec, nullptr);
    } else if (arg == "-m") {
      std::string range = value();
      auto colon = range.find(':');
      if (colon == std::string::npos) {
        o.max_size = parse_count(argv[0], spec, range.c_str());
      } else {
        o.min_size = parse_count(argv[0], spec, range.substr(0, colon).c_str());
        o.max_size = parse_count(argv[0], spec, range.substr(colon + 1).c_str());
      }
      if (o.min_size > o.max_size) usage(argv[0], spec, "-m: min is larger than max");
    } else if (arg == "-i") {
      o.iterations = static_cast<int>(parse_count(argv[0], spec, value()));
    } else if (arg == "-x") {
      o.warmup = static_cast<int>(parse_count(argv[0], spec, value()));
    } else if (arg == "-W" && spec.window) {
      o.window = static_cast<int>(parse_count(argv[0], spec, value()));
    } else if (arg == "-f") {
      o.full = true;
    } else if (arg == "--csv") {
      o.csv = true;
    } else {
      usage(argv[0], spec, ("unknown option " + arg).c_str());
    }
  }
  return o;
}

Harness::Harness(int argc, char** argv, const Spec& spec)
    : spec_(spec), options_(parse_options(argc, argv, spec)) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (size_ < spec.min_ranks) {
    if (rank_ == 0)
      std::fprintf(stderr, "%s needs at least %d ranks (mpirun -np %d)\n", argv[0], spec.min_ranks,
                   spec.min_ranks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  runtime_ = std::make_unique<Runtime>(MPI_COMM_WORLD);
  pgas_ = std::make_unique<Pgas>(*runtime_);
  messaging_ = std::make_unique<Messaging>(*runtime_);
}

Harness::~Harness() = default;

std::vector<std::size_t> Harness::sizes() const {
  std::vector<std::size_t> out;
  if (!spec_.sizes) return {8};
  for (std::size_t s = options_.min_size; s <= options_.max_size; s *= 2) out.push_back(s);
  return out;
}

int Harness::iterations_for(std::size_t size) const {
  return size > 8192 ? std::max(1, options_.iterations / 10) : options_.iterations;
}

int Harness::warmup_for(std::size_t size) const {
  return size > 8192 ? std::max(1, options_.warmup / 10) : options_.warmup;
}

void Harness::print_header() {
  if (rank_ != 0) return;
  const char* unit = spec_.unit == Unit::latency_us ? "us" : "MB/s";
  if (options_.csv) {
    std::printf("test,size,mpidsm_%s,mpi_%s,mpidsm_over_mpi%s\n", unit, unit,
                options_.full ? ",mpidsm_min,mpidsm_max,mpi_min,mpi_max" : "");
  } else {
    std::printf("# mpidsm %s Test\n", spec_.name);
    std::printf("# %s, %d ranks, iterations %d, warm-up %d%s\n",
                spec_.unit == Unit::latency_us ? "latency in microseconds"
                                               : "bandwidth in MB/s (10^6 bytes per second)",
                size_, options_.iterations, options_.warmup,
                spec_.window ? (", window " + std::to_string(options_.window)).c_str() : "");
    std::printf("%-12s %14s %14s %12s", "# Size", "mpidsm", "MPI", "mpidsm/MPI");
    if (options_.full)
      std::printf(" %12s %12s %12s %12s", "mpidsm-min", "mpidsm-max", "MPI-min", "MPI-max");
    std::printf("\n");
  }
  std::fflush(stdout);
}

void Harness::run(const Row& row) {
  const int iterations = std::max(1, iterations_for(row.size) / kSlices);
  const int warmup = warmup_for(row.size);
  // A row without an MPI equivalent prints nan in the MPI and ratio columns.
  const Slice no_mpi = [](std::size_t, int) { return std::nan(""); };
  const Slice& mpi = row.mpi ? row.mpi : no_mpi;
  row.mpidsm(row.size, warmup);
  mpi(row.size, warmup);
  std::vector<double> ours, theirs;
  for (int slice = 0; slice < kSlices; ++slice) {
    ours.push_back(row.mpidsm(row.size, iterations));
    theirs.push_back(mpi(row.size, iterations));
  }
  if (rank_ != 0) return;
  const std::size_t bytes = row.bytes ? row.bytes : row.size;
  // Report microseconds per operation, or bandwidth in MB/s.
  auto figure = [&](double seconds_per_op) {
    return spec_.unit == Unit::latency_us ? seconds_per_op * 1e6 : bytes / seconds_per_op / 1e6;
  };
  std::vector<double> a, b;
  for (double v : ours) a.push_back(figure(v));
  for (double v : theirs) b.push_back(figure(v));
  Stats x = summarize(a), y = summarize(b);
  if (spec_.unit == Unit::bandwidth_mbs) {
    // Bandwidth: total bytes over total time, not the mean of rates.
    x.mean = figure(std::accumulate(ours.begin(), ours.end(), 0.0) / ours.size());
    y.mean = figure(std::accumulate(theirs.begin(), theirs.end(), 0.0) / theirs.size());
  }
  std::string label = row.label.empty() ? std::to_string(row.size) : row.label;
  if (options_.csv) {
    std::printf("%s,%s,%.4f,%.4f,%.3f", spec_.name, label.c_str(), x.mean, y.mean, x.mean / y.mean);
    if (options_.full) std::printf(",%.4f,%.4f,%.4f,%.4f", x.min, x.max, y.min, y.max);
  } else {
    const char* format = spec_.unit == Unit::latency_us ? "%-12s %14.3f %14.3f %12.2f"
                                                        : "%-12s %14.2f %14.2f %12.2f";
    std::printf(format, label.c_str(), x.mean, y.mean, x.mean / y.mean);
    if (options_.full) std::printf(" %12.3f %12.3f %12.3f %12.3f", x.min, x.max, y.min, y.max);
  }
  std::printf("\n");
  std::fflush(stdout);
}

PageBuffer::PageBuffer(std::size_t bytes) {
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, std::max<std::size_t>(bytes, 1)) != 0) std::abort();
  std::memset(memory, 1, bytes);
  data_ = static_cast<std::byte*>(memory);
}

PageBuffer::~PageBuffer() {
  std::free(data_);
}

MpiWindow::MpiWindow(std::size_t bytes, MPI_Comm comm) {
  MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm, &base_, &win_);
  std::memset(base_, 0, bytes);
  MPI_Win_lock_all(0, win_);
}

MpiWindow::~MpiWindow() {
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

}  // namespace mpidsm::bench
