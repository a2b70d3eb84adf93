// The per-rank statistics table (Dsm::print_stats, MPIDSM_STATS=1).
#include <cinttypes>
#include <vector>

#include "common/mpi_exchange.hpp"
#include "engine.hpp"

namespace mpidsm {

void Dsm::Engine::print_stats(std::FILE* out) {
  const DsmStats mine = stats();
  std::vector<std::uint64_t> values;
  std::vector<const char*> names;
  auto add = [&](const char* name, std::uint64_t value) {
    names.push_back(name);
    values.push_back(value);
  };
  mine.for_each(add);
  mine.for_each_gauge(add);
  const int ranks = runtime_.size();
  std::vector<std::uint64_t> all(rank_ == 0 ? values.size() * static_cast<std::size_t>(ranks) : 0);
  detail::gather(runtime_.comm(), rank_, values.data(), all.data(), static_cast<int>(values.size()),
                 MPI_UINT64_T, 0, "Dsm::print_stats");
  if (rank_ != 0) return;
  // One row per counter, one column per rank, then the total.
  std::fprintf(out, "# mpidsm DSM statistics\n%-20s", "# counter");
  for (int r = 0; r < ranks; ++r) std::fprintf(out, " %14s", ("rank " + std::to_string(r)).c_str());
  std::fprintf(out, " %14s\n", "total");
  for (std::size_t c = 0; c < names.size(); ++c) {
    std::fprintf(out, "%-20s", names[c]);
    std::uint64_t total = 0;
    for (int r = 0; r < ranks; ++r) {
      const std::uint64_t v = all[static_cast<std::size_t>(r) * names.size() + c];
      total += v;
      std::fprintf(out, " %14" PRIu64, v);
    }
    std::fprintf(out, " %14" PRIu64 "\n", total);
  }
  std::fflush(out);
}

}  // namespace mpidsm
