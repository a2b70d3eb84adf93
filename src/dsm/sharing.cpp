#include "sharing.hpp"

#include <atomic>
#include <cstring>

namespace mpidsm::detail {

SharingRecord::SharingRecord(Transport& transport, std::size_t pages, bool direct_access)
    : words_(transport, flag_offset(pages), direct_access), known_copied_(pages) {}

void SharingRecord::mark_copied(int home, std::size_t first, std::size_t count) {
  bool first_copy = false;
  for (std::size_t page = first; page < first + count; ++page) {
    if (known_copied_[page]) continue;
    known_copied_[page] = 1;
    first_copy = words_.swap32(home, flag_offset(page), 1) == 0 || first_copy;
  }
  if (first_copy) words_.add64(home, kCounter, 1);
}

bool SharingRecord::new_copies_since_last_check() {
  // A locked read-modify-write orders this rank's earlier writes before the
  // read (a plain load could pass them) at the cost of one atomic.
  const std::uint64_t now =
      std::atomic_ref<std::uint64_t>(words_.local<std::uint64_t>(kCounter)).fetch_add(0);
  if (now == last_counter_) return false;
  last_counter_ = now;
  return true;
}

bool SharingRecord::copied(std::size_t page) const {
  return std::atomic_ref<std::uint32_t>(words_.local<std::uint32_t>(flag_offset(page))).load() != 0;
}

void SharingRecord::forget(std::size_t first, std::size_t count) {
  std::memset(&words_.local<std::uint32_t>(flag_offset(first)), 0, count * 4);
  known_copied_.reset(first, count);
}

}  // namespace mpidsm::detail
