#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "mpi_window.hpp"
#include "mpidsm/version.hpp"

namespace mpidsm::bench {
namespace {

// Each row is measured in this many slices, alternating mpidsm and MPI, so
// both see the same machine noise; -f prints the best and worst slice.
constexpr int kSlices = 5;

Options default_options(const Spec& spec) {
  Options o;
  if (spec.unit == Unit::bandwidth_mbs) {
    o.iterations = 100;
    o.iterations_large = 20;
    o.warmup = 10;
    o.warmup_large = 2;
  }
  return o;
}

std::string usage(const char* program, const Spec& spec) {
  std::string text = std::string("usage: mpirun -np 2 ") + program + " [options]\n  " + spec.name +
                     ", mpidsm and MPI side by side\n";
  if (spec.sizes)
    text +=
        "  -m, --message-size [MIN:]MAX  message sizes in bytes (default 1:4194304; MIN: keeps\n"
        "                                the default MAX)\n";
  const Options defaults = default_options(spec);
  text += "  -i, --iterations ITER   iterations for small messages (default " +
          std::to_string(defaults.iterations) + "; " + std::to_string(defaults.iterations_large) +
          " above 8 KiB)\n"
          "  -x, --warmup ITER       warm-up iterations (default " +
          std::to_string(defaults.warmup) + "; " + std::to_string(defaults.warmup_large) +
          " above 8 KiB)\n";
  if (spec.window) text += "  -W, --window-size SIZE  messages in flight per window (default 64)\n";
  if (spec.ucx) text += "      --ucx               add the same pattern written against UCP\n";
  text +=
      "  -f, --full              add min/max across ranks and the iteration count\n"
      "      --csv               comma-separated output\n"
      "      --csv-to FILE       print the table, and append the CSV to FILE\n"
      "  -v, --version           print the version and exit\n"
      "  -h, --help              print this help and exit\n";
  return text;
}

std::optional<std::size_t> parse_count(const std::string& text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end || value == 0) return std::nullopt;
  return static_cast<std::size_t>(value);
}

}  // namespace

double seconds() {
  return MPI_Wtime();
}

Command parse_command(int argc, char** argv, const Spec& spec) {
  Command c;
  c.options = default_options(spec);
  Options& o = c.options;
  auto fail = [&](std::string problem) {
    c.action = Command::Action::error;
    c.problem = std::move(problem);
    return c;
  };
  // Long options as OSU spells them; "--name=value" and "--name value" both work.
  static const std::pair<const char*, const char*> long_names[] = {
      {"--message-size", "-m"}, {"--iterations", "-i"}, {"--warmup", "-x"}, {"--window-size", "-W"},
      {"--full", "-f"},         {"--version", "-v"},    {"--help", "-h"}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;
    for (auto [name, short_name] : long_names) {
      const std::string n = name;
      if (arg == n) {
        arg = short_name;
      } else if (arg.rfind(n + "=", 0) == 0) {
        inline_value = arg.substr(n.size() + 1);
        arg = short_name;
      }
    }
    std::string value;
    auto take_value = [&]() {
      if (inline_value) {
        value = *inline_value;
        return true;
      }
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    if (arg == "-h") {
      c.action = Command::Action::help;
      return c;
    }
    if (arg == "-v") {
      c.action = Command::Action::version;
      return c;
    }
    if (arg == "-f") {
      o.full = true;
    } else if (arg == "--csv") {
      o.csv = true;
    } else if (arg == "--ucx" && spec.ucx) {
      o.ucx = true;
    } else if (arg == "--csv-to") {
      if (!take_value()) return fail("missing value for --csv-to");
      o.csv_to = value;
    } else if (arg == "-m" || arg == "-i" || arg == "-x" || (arg == "-W" && spec.window)) {
      if (!take_value()) return fail("missing value for " + std::string(argv[i]));
      if (arg == "-m") {
        const auto colon = value.find(':');
        const std::string low = colon == std::string::npos ? "" : value.substr(0, colon);
        const std::string high = colon == std::string::npos ? value : value.substr(colon + 1);
        if (!low.empty()) {
          auto v = parse_count(low);
          if (!v) return fail("-m: '" + low + "' is not a positive size");
          o.min_size = *v;
        }
        if (!high.empty()) {
          auto v = parse_count(high);
          if (!v) return fail("-m: '" + high + "' is not a positive size");
          o.max_size = *v;
        }
        if (o.min_size > o.max_size) return fail("-m: MIN is larger than MAX");
        continue;
      }
      auto v = parse_count(value);
      if (!v || *v > 100000000)
        return fail(arg + ": expected a positive count, not '" + value + "'");
      const int n = static_cast<int>(*v);
      if (arg == "-i") {
        // OSU's ratio of large to small counts, kept for a chosen count.
        o.iterations_large = std::max(1, n * o.iterations_large / o.iterations);
        o.iterations = n;
      } else if (arg == "-x") {
        o.warmup_large = std::max(1, n * o.warmup_large / o.warmup);
        o.warmup = n;
      } else {
        o.window = n;
      }
    } else {
      return fail("unknown option " + std::string(argv[i]));
    }
  }
  return c;
}

Harness::Harness(int argc, char** argv, const Spec& spec) : spec_(spec), program_(argv[0]) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const Command command = parse_command(argc, argv, spec);
  switch (command.action) {
    case Command::Action::help:
      leave(usage(argv[0], spec), 0);
    case Command::Action::version:
      leave(std::string("# mpidsm ") + spec.name + " Test, mpidsm " + build::version + "\n", 0);
    case Command::Action::error:
      leave(program_ + ": " + command.problem + "\n" + usage(argv[0], spec), 2);
    case Command::Action::run:
      break;
  }
  options_ = command.options;
  if (size_ < spec.min_ranks)
    leave(program_ + ": this test needs at least " + std::to_string(spec.min_ranks) +
              " ranks (mpirun -np " + std::to_string(spec.min_ranks) + ")\n",
          2);
  if (spec.max_ranks > 0 && size_ > spec.max_ranks)
    leave(program_ + ": this test measures between ranks 0 and 1 and would leave " +
              std::to_string(size_ - spec.max_ranks) + " ranks idle: run it with mpirun -np " +
              std::to_string(spec.max_ranks) + "\n",
          2);
  if (std::string error; spec.mpi_window && !mpi_windows_work(MPI_COMM_WORLD, error))
    leave(program_ + ": " + no_mpi_window_text(error), 1);
  runtime_ = std::make_unique<Runtime>(MPI_COMM_WORLD);
  pgas_ = std::make_unique<Pgas>(*runtime_);
  messaging_ = std::make_unique<Messaging>(*runtime_);
  facts_ = gather_run_facts(*runtime_);
  if (rank_ == 0 && !options_.csv_to.empty()) {
    csv_to_ = std::fopen(options_.csv_to.c_str(), "a");
    if (!csv_to_)
      std::fprintf(stderr, "%s: cannot append to %s\n", argv[0], options_.csv_to.c_str());
  }
}

Harness::~Harness() {
  if (csv_to_) std::fclose(csv_to_);
}

int leave_on_error(const char* program, const std::exception& error) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::fprintf(stderr, "%s: %s\n", program, error.what());
    std::fflush(stderr);
  }
  MPI_Finalize();
  return 1;
}

void Harness::leave(const std::string& text, int code) {
  if (rank_ == 0) {
    std::fputs(text.c_str(), code == 0 ? stdout : stderr);
    std::fflush(code == 0 ? stdout : stderr);
  }
  MPI_Finalize();
  std::exit(code);
}

std::vector<std::size_t> Harness::sizes() const {
  std::vector<std::size_t> out;
  if (!spec_.sizes) return {8};
  for (std::size_t s = options_.min_size; s <= options_.max_size; s *= 2) out.push_back(s);
  return out;
}

int Harness::iterations_for(std::size_t size) const {
  return size > large_message ? options_.iterations_large : options_.iterations;
}

int Harness::warmup_for(std::size_t size) const {
  return size > large_message ? options_.warmup_large : options_.warmup;
}

void Harness::print_header() {
  if (rank_ != 0) return;
  if (options_.csv) {
    print_csv_header(stdout);
  } else {
    print_text_header(stdout);
  }
  if (csv_to_) print_csv_header(csv_to_);
  std::fflush(stdout);
}

void Harness::print_csv_header(std::FILE* out) const {
  const char* unit = spec_.unit == Unit::latency_us ? "us" : "MB/s";
  // One comment line of facts per section, then the section's own header:
  // sections differ in unit and columns.
  print_run_facts(out, facts_, std::string(spec_.name) + " Test", true);
  // min and max: over the repetitions; rank_min and rank_max (-f): over the ranks.
  std::fprintf(
      out,
      "test,size,mpidsm_%s,mpi_%s,mpidsm_over_mpi,mpidsm_min,mpidsm_max,mpi_min,mpi_max,"
      "ratio_min,ratio_max,mpi_counterpart%s",
      unit, unit,
      options_.full ? ",mpidsm_rank_min,mpidsm_rank_max,mpi_rank_min,mpi_rank_max,iterations" : "");
  if (options_.ucx) std::fprintf(out, ",ucx_%s,mpidsm_over_ucx,ucx_min,ucx_max", unit);
  std::fprintf(out, "\n");
}

void Harness::print_text_header(std::FILE* out) const {
  print_run_facts(out, facts_, std::string(spec_.name) + " Test", false);
  std::fprintf(out, "# %s; iterations %d (%d above 8 KiB), warm-up %d%s\n",
               spec_.unit == Unit::latency_us ? "latency in microseconds"
                                              : "bandwidth in MB/s (10^6 bytes per second)",
               options_.iterations, options_.iterations_large, options_.warmup,
               spec_.window ? (", window " + std::to_string(options_.window)).c_str() : "");
  std::fprintf(out, "# medians of %d interleaved repetitions; ratio-min/max: their spread\n",
               kSlices);
  if (options_.ucx) std::fprintf(out, "# UCX: %s\n", spec_.ucx);
  // Rows are message sizes, or named operations (README: "What each row measures").
  std::fprintf(out, "%-12s %14s %14s %12s %10s %10s  %-24s", spec_.sizes ? "# Size" : "# Test",
               "mpidsm", "MPI", "mpidsm/MPI", "ratio-min", "ratio-max", "vs");
  if (options_.full)
    std::fprintf(out, " %12s %12s %12s %12s %11s", "mpidsm-rmin", "mpidsm-rmax", "MPI-rmin",
                 "MPI-rmax", "Iterations");
  if (options_.ucx) std::fprintf(out, " %14s %12s", "UCX", "mpidsm/UCX");
  std::fprintf(out, "\n");
}

namespace {

// The smallest and largest of the ranks' figures, on rank 0. A rank that
// took no part (its slice returned 0 or nan) does not count.
std::pair<double, double> across_ranks(double mine) {
  const bool took_part = std::isfinite(mine) && mine > 0;
  double low = took_part ? mine : std::numeric_limits<double>::infinity();
  double high = took_part ? mine : -std::numeric_limits<double>::infinity();
  double lowest = 0, highest = 0;
  MPI_Reduce(&low, &lowest, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&high, &highest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return {lowest, highest};
}

// The median of the repetitions and their smallest and largest (nan
// figures, from a rank that took no part, sort last and count as they are).
struct Spread {
  double median, low, high;
};
Spread spread(std::vector<double> values) {
  std::sort(values.begin(), values.end(), [](double a, double b) {
    return std::isnan(b) ? !std::isnan(a) : (!std::isnan(a) && a < b);
  });
  return {values[values.size() / 2], values.front(), values.back()};
}

}  // namespace

void Harness::run(const Row& row) {
  const int total = iterations_for(row.size);
  const int iterations = std::max(1, total / kSlices);
  const int warmup = warmup_for(row.size);
  // A side not measured (a row without an MPI equivalent, or no --ucx)
  // prints nan in its columns and its ratio.
  const Slice not_measured = [](std::size_t, int) { return std::nan(""); };
  const Slice& mpi = row.mpi ? row.mpi : not_measured;
  const Slice& ucx = options_.ucx && row.ucx ? row.ucx : not_measured;
  row.mpidsm(row.size, warmup);
  mpi(row.size, warmup);
  ucx(row.size, warmup);
  std::vector<double> ours, theirs, raw;
  for (int slice = 0; slice < kSlices; ++slice) {
    ours.push_back(row.mpidsm(row.size, iterations));
    theirs.push_back(mpi(row.size, iterations));
    raw.push_back(ucx(row.size, iterations));
  }
  const std::size_t bytes = row.bytes ? row.bytes : row.size;
  // Microseconds per operation, or MB/s (bytes over time, not a mean of rates).
  auto figure = [&](double seconds_per_op) {
    if (!(seconds_per_op > 0)) return seconds_per_op;  // 0 or nan: this rank took no part
    return spec_.unit == Unit::latency_us ? seconds_per_op * 1e6 : bytes / seconds_per_op / 1e6;
  };
  std::vector<double> xs, ys, zs, ratios, over_raw;
  for (int slice = 0; slice < kSlices; ++slice) {
    xs.push_back(figure(ours[static_cast<std::size_t>(slice)]));
    ys.push_back(figure(theirs[static_cast<std::size_t>(slice)]));
    zs.push_back(figure(raw[static_cast<std::size_t>(slice)]));
    ratios.push_back(xs.back() / ys.back());
    over_raw.push_back(xs.back() / zs.back());
  }
  const Spread x = spread(xs), y = spread(ys), z = spread(zs), ratio = spread(ratios);
  std::pair<double, double> x_range, y_range;
  if (options_.full) {
    x_range = across_ranks(x.median);
    y_range = across_ranks(y.median);
  }
  if (rank_ != 0) return;
  const std::string label = row.label.empty() ? std::to_string(row.size) : row.label;
  const std::string vs = !row.mpi ? "(none)" : row.mpi_name.empty() ? spec_.mpi : row.mpi_name;
  const Measured m{.label = label,
                   .vs = vs,
                   .ours = x.median,
                   .theirs = y.median,
                   .ratio = ratio.median,
                   .ours_low = x.low,
                   .ours_high = x.high,
                   .theirs_low = y.low,
                   .theirs_high = y.high,
                   .ratio_low = ratio.low,
                   .ratio_high = ratio.high,
                   .ucx = z.median,
                   .ours_over_ucx = spread(over_raw).median,
                   .ucx_low = z.low,
                   .ucx_high = z.high,
                   .ours_ranks = x_range,
                   .theirs_ranks = y_range,
                   .iterations = iterations * kSlices};
  if (options_.csv) {
    print_csv_row(stdout, m);
  } else {
    print_text_row(stdout, m);
  }
  if (csv_to_) {
    print_csv_row(csv_to_, m);
    std::fflush(csv_to_);
  }
  std::fflush(stdout);
}

void Harness::print_csv_row(std::FILE* out, const Measured& m) const {
  std::fprintf(out, "%s,%s,%.4f,%.4f,%.3f,%.4f,%.4f,%.4f,%.4f,%.3f,%.3f,%s", spec_.name,
               m.label.c_str(), m.ours, m.theirs, m.ratio, m.ours_low, m.ours_high, m.theirs_low,
               m.theirs_high, m.ratio_low, m.ratio_high, m.vs.c_str());
  if (options_.full)
    std::fprintf(out, ",%.4f,%.4f,%.4f,%.4f,%d", m.ours_ranks.first, m.ours_ranks.second,
                 m.theirs_ranks.first, m.theirs_ranks.second, m.iterations);
  if (options_.ucx)
    std::fprintf(out, ",%.4f,%.3f,%.4f,%.4f", m.ucx, m.ours_over_ucx, m.ucx_low, m.ucx_high);
  std::fprintf(out, "\n");
}

void Harness::print_text_row(std::FILE* out, const Measured& m) const {
  const char* format = spec_.unit == Unit::latency_us
                           ? "%-12s %14.3f %14.3f %12.2f %10.2f %10.2f  %-24s"
                           : "%-12s %14.2f %14.2f %12.2f %10.2f %10.2f  %-24s";
  std::fprintf(out, format, m.label.c_str(), m.ours, m.theirs, m.ratio, m.ratio_low, m.ratio_high,
               m.vs.c_str());
  if (options_.full)
    std::fprintf(out, " %12.3f %12.3f %12.3f %12.3f %11d", m.ours_ranks.first, m.ours_ranks.second,
                 m.theirs_ranks.first, m.theirs_ranks.second, m.iterations);
  if (options_.ucx)
    std::fprintf(out, spec_.unit == Unit::latency_us ? " %14.3f %12.2f" : " %14.2f %12.2f", m.ucx,
                 m.ours_over_ucx);
  std::fprintf(out, "\n");
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
  allocate_mpi_window_or_abort(static_cast<MPI_Aint>(bytes), comm, &base_, &win_);
  std::memset(base_, 0, bytes);
  MPI_Win_lock_all(0, win_);
}

MpiWindow::~MpiWindow() {
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

}  // namespace mpidsm::bench
