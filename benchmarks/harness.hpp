// OSU-style benchmark harness. Each executable measures one operation with
// mpidsm and with its MPI equivalent, interleaved in 5 repetitions within
// each size, and prints the medians with the ratio's spread and the MPI call
// each row is measured against:
//   # Size (or # Test)  mpidsm  MPI  mpidsm/MPI  ratio-min  ratio-max  vs
//   [-f: min/max across ranks, iterations]  [--ucx: UCX  mpidsm/UCX]
// Options as OSU's: -m/--message-size [min:][max], -i/--iterations,
// -x/--warmup, -W/--window-size, -f/--full, -v/--version, -h/--help; and
// --csv, --csv-to FILE, and where the benchmark has a raw UCX side (Spec::ucx)
// --ucx. Headers are run_facts.hpp's. Usage and errors are printed once, by
// rank 0, and every rank then leaves through MPI_Finalize.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpidsm/messaging.hpp"
#include "mpidsm/pgas.hpp"
#include "mpidsm/runtime.hpp"
#include "run_facts.hpp"

namespace mpidsm::bench {

enum class Unit { latency_us, bandwidth_mbs };

// Messages above this size count as large (OSU's LARGE_MESSAGE_SIZE).
inline constexpr std::size_t large_message = 8192;

struct Options {
  std::size_t min_size = 1;
  std::size_t max_size = std::size_t{4} << 20;
  // OSU's counts: latency 10000 iterations (1000 large) after 100 (10)
  // warm-up; bandwidth 100 windows (20 large) after 10 (2).
  int iterations = 10000;
  int iterations_large = 1000;
  int warmup = 100;
  int warmup_large = 10;
  int window = 64;
  bool full = false;
  bool csv = false;
  std::string csv_to;  // --csv-to: the CSV is also appended to this file
  bool ucx = false;    // --ucx: add the raw UCX column (Spec::ucx)
};

struct Spec {
  const char* name;  // "Put Latency"
  Unit unit;
  bool sizes = true;    // false: one 8-byte row (or named rows)
  bool window = false;  // accepts -W
  int min_ranks = 2;
  // The MPI call each row is measured against, unless the row names its own
  // ("MPI_Put + MPI_Win_flush"; no comma: it is a CSV field).
  const char* mpi = "";
  // 0: any number of ranks; 2: a test between ranks 0 and 1, which refuses
  // more (as OSU's point-to-point tests do) rather than leave ranks idle.
  int max_ranks = 0;
  // Its MPI side needs an MPI window: where MPI gives none, the run stops
  // before it starts, with MPI's error and the setting that gives one.
  bool mpi_window = false;
  // What the raw UCX column (--ucx) measures, where the benchmark has one
  // (raw_ucx.hpp); null: --ucx is refused.
  const char* ucx = nullptr;
};

// What the command line asks for: a run with these options, or usage,
// version or an error to print before leaving.
struct Command {
  enum class Action { run, help, version, error } action = Action::run;
  Options options;
  std::string problem;  // for error
};
// Parses argv without printing or exiting (every rank calls it).
Command parse_command(int argc, char** argv, const Spec& spec);

// What one measurement slice does: run `iterations` operations of `size`
// bytes (all ranks call it) and return seconds per operation on rank 0.
using Slice = std::function<double(std::size_t size, int iterations)>;

// Per-operation work for one row; `label` replaces the size column when set.
struct Row {
  std::string label;
  std::size_t size = 8;
  Slice mpidsm;
  Slice mpi;
  // The same pattern written directly against UCP (--ucx).
  Slice ucx;
  // The MPI call `mpi` measures, when it differs from the Spec's (no comma:
  // it is a CSV field).
  std::string mpi_name;
  // Bytes moved per operation, for bandwidth (defaults to size).
  std::size_t bytes = 0;
};

// An error no row caught (a setting too small for what the benchmark
// allocates, a transfer refused): rank 0 prints it in one line, every rank
// finalizes MPI, and the program exits 1, instead of std::terminate's abort
// and a core dump per rank. Errors the runtime raises in collectives reach
// every rank alike.
int leave_on_error(const char* program, const std::exception& error);

class Harness {
 public:
  Harness(int argc, char** argv, const Spec& spec);
  ~Harness();

  const Options& options() const { return options_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  Runtime& runtime() { return *runtime_; }
  Pgas& pgas() { return *pgas_; }
  Messaging& messaging() { return *messaging_; }
  // Sizes from -m, doubling.
  std::vector<std::size_t> sizes() const;
  int iterations_for(std::size_t size) const;
  int warmup_for(std::size_t size) const;

  void print_header();
  void run(const Row& row);

 private:
  // One row's figures, as printed.
  struct Measured {
    std::string label, vs;
    double ours, theirs, ratio, ours_low, ours_high, theirs_low, theirs_high, ratio_low, ratio_high;
    double ucx, ours_over_ucx, ucx_low, ucx_high;        // --ucx
    std::pair<double, double> ours_ranks, theirs_ranks;  // -f: across ranks
    int iterations;
  };
  // Rank 0 prints `text` (to stderr when `code` is not 0); every rank then
  // finalizes MPI and exits with `code`.
  [[noreturn]] void leave(const std::string& text, int code);
  void print_text_header(std::FILE* out) const;
  void print_csv_header(std::FILE* out) const;
  void print_text_row(std::FILE* out, const Measured& m) const;
  void print_csv_row(std::FILE* out, const Measured& m) const;

  Spec spec_;
  std::string program_;
  RunFacts facts_;
  std::FILE* csv_to_ = nullptr;  // rank 0, --csv-to
  Options options_;
  int rank_ = 0;
  int size_ = 0;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Pgas> pgas_;
  std::unique_ptr<Messaging> messaging_;
};

// MPI-3 RMA window of `bytes` per rank from MPI_Win_allocate, under
// MPI_Win_lock_all for the window's lifetime.
class MpiWindow {
 public:
  MpiWindow(std::size_t bytes, MPI_Comm comm);
  ~MpiWindow();
  MPI_Win win() const { return win_; }
  void* base() const { return base_; }

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  void* base_ = nullptr;
};

double seconds();

// A zeroed, page-aligned buffer, as OSU's benchmarks use: copy speed depends on
// the relative alignment of source and destination, so both sides get pages.
class PageBuffer {
 public:
  explicit PageBuffer(std::size_t bytes);
  ~PageBuffer();
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  std::byte* data() const { return data_; }

 private:
  std::byte* data_ = nullptr;
};

// Runs body() `iterations` times and returns seconds per iteration.
template <class Body>
double per_iteration(int iterations, Body&& body) {
  const double start = seconds();
  for (int i = 0; i < iterations; ++i) body(i);
  return (seconds() - start) / iterations;
}

}  // namespace mpidsm::bench
