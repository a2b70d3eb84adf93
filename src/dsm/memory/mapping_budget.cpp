#include "mapping_budget.hpp"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>

namespace mpidsm::detail {
namespace {

std::atomic<std::ptrdiff_t> used_mappings{0};

std::size_t read_max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::size_t value = 0;
  return in >> value ? value : 65530;  // the kernel's default
}

}  // namespace

std::size_t count_mappings(std::uintptr_t begin, std::uintptr_t end) {
  std::ifstream maps("/proc/self/maps");
  std::size_t count = 0;
  for (std::string line; std::getline(maps, line);) {
    unsigned long low = 0, high = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &low, &high) == 2 && low < end && high > begin)
      ++count;
  }
  return count;
}

MappingBudget& MappingBudget::process() {
  static MappingBudget budget([] {
    const std::size_t max = read_max_map_count(), now = count_mappings();
    const std::size_t left = max > now ? max - now : 0;
    return left / 2 > 1024 ? left / 2 : std::size_t{1024};
  }());
  return budget;
}

bool MappingBudget::try_take(std::ptrdiff_t delta, bool force) {
  std::ptrdiff_t now = used_mappings.load(std::memory_order_relaxed);
  do {
    if (!force && delta > 0 && now + delta > static_cast<std::ptrdiff_t>(limit_)) return false;
  } while (!used_mappings.compare_exchange_weak(now, now + delta, std::memory_order_relaxed));
  return true;
}

}  // namespace mpidsm::detail
