// The protection of every page of the application's view, and how many
// mappings (VMAs) the kernel needs for it. Each change of protection between
// neighbouring pages splits a mapping, and a process may hold only
// vm.max_map_count of them (65530 by default), shared with everything else
// it maps: the DSM must count what it uses and stay within a budget. Plain
// bookkeeping (no system calls), so unit tests drive it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lazy_array.hpp"

namespace mpidsm::detail {

class ProtectionMap {
 public:
  explicit ProtectionMap(std::size_t pages) : pages_(pages), protection_(pages) {}

  int at(std::size_t page) const { return protection_[page]; }
  // The chunks of the view whose protection ever changed.
  const UsedChunks& used() const { return protection_.used(); }
  // Mappings of the view: one more than the changes of protection between
  // neighbouring pages.
  std::size_t mappings() const { return boundaries_ + 1; }
  // How mappings() would change if [first, first+count) became `protection`.
  std::ptrdiff_t change_if(std::size_t first, std::size_t count, int protection) const {
    return boundaries_after(first, count, protection) - boundaries_within(first, count);
  }
  void set(std::size_t first, std::size_t count, int protection) {
    boundaries_ = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(boundaries_) +
                                           change_if(first, count, protection));
    for (std::size_t p = first; p < first + count; ++p)
      protection_[p] = static_cast<std::uint8_t>(protection);
  }

 private:
  // Boundaries touching [first, first+count): inside it and at both ends.
  std::ptrdiff_t boundaries_within(std::size_t first, std::size_t count) const {
    std::ptrdiff_t n = 0;
    const std::size_t begin = first > 0 ? first - 1 : 0;
    const std::size_t end = first + count < pages_ ? first + count : pages_ - 1;
    for (std::size_t p = begin; p < end; ++p) n += protection_[p] != protection_[p + 1];
    return n;
  }
  std::ptrdiff_t boundaries_after(std::size_t first, std::size_t count, int protection) const {
    std::ptrdiff_t n = 0;
    if (first > 0) n += protection_[first - 1] != protection;
    if (first + count < pages_) n += protection_[first + count] != protection;
    return n;
  }

  std::size_t pages_;
  std::size_t boundaries_ = 0;
  LazyArray<std::uint8_t> protection_;  // PROT_* per page; 0 (PROT_NONE) at first
};

}  // namespace mpidsm::detail
