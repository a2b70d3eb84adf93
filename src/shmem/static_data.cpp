#include "static_data.hpp"

#include <link.h>

#include <algorithm>
#include <cstdint>

namespace mpidsm::shmem {
namespace {

// dl_iterate_phdr names the main executable first.
int first_object(dl_phdr_info* info, std::size_t, void* out) {
  std::uintptr_t begin = UINTPTR_MAX, end = 0, read_only_end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + header.p_vaddr;
    if (header.p_type == PT_LOAD && (header.p_flags & PF_W)) {
      begin = std::min(begin, start);
      end = std::max(end, start + header.p_memsz);
    } else if (header.p_type == PT_GNU_RELRO) {
      read_only_end = start + header.p_memsz;
    }
  }
  begin = std::max(begin, read_only_end);
  if (begin < end) *static_cast<StaticData*>(out) = {reinterpret_cast<void*>(begin), end - begin};
  return 1;  // the executable only: shared libraries' variables are not symmetric
}

}  // namespace

StaticData program_static_data() {
  StaticData data;
  dl_iterate_phdr(first_object, &data);
  return data;
}

}  // namespace mpidsm::shmem
