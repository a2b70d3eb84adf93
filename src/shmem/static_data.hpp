// The executable's global and static variables, which OpenSHMEM makes
// symmetric: every PE runs the same executable, so each variable lies at the
// same offset into this range on every PE.
#pragma once

#include <cstddef>

namespace mpidsm::shmem {

struct StaticData {
  void* base = nullptr;
  std::size_t bytes = 0;  // 0: the executable has none
};

// The main executable's writable data (.data and .bss), without the part
// the loader makes read-only after relocation (PT_GNU_RELRO).
StaticData program_static_data();

}  // namespace mpidsm::shmem
