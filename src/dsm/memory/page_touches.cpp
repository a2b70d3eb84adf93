#include "page_touches.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>

namespace mpidsm::detail {

PageTouches::PageTouches()
    : fd_(open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)),
      page_size_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))) {}

PageTouches::~PageTouches() {
  if (fd_ >= 0) close(fd_);
}

bool PageTouches::touched(const void* address) const {
  if (fd_ < 0) return false;
  std::uint64_t entry = 0;
  const auto at =
      static_cast<off_t>(reinterpret_cast<std::uintptr_t>(address) / page_size_ * sizeof entry);
  if (pread(fd_, &entry, sizeof entry, at) != sizeof entry) return false;
  return (entry >> 63) != 0;  // "page present"
}

}  // namespace mpidsm::detail
