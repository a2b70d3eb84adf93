#include "home_directory.hpp"

#include <atomic>

namespace mpidsm::detail {

HomeDirectory::HomeDirectory(Transport& transport, std::size_t pages, bool direct_access)
    : ranks_(static_cast<std::size_t>(transport.size())),
      rank_(transport.rank()),
      words_(transport, (pages + ranks_ - 1) / ranks_ * 4, direct_access),
      known_(pages) {}

int HomeDirectory::claim(std::size_t page) {
  const auto mine = static_cast<std::uint32_t>(rank_ + 1);
  const std::uint32_t previous =
      words_.compare_swap32(static_cast<int>(owner(page)), offset(page), 0, mine);
  known_[page] = previous == 0 ? mine : previous;
  return known(page);
}

int HomeDirectory::look_up(std::size_t page) {
  const std::uint32_t recorded = words_.load32(static_cast<int>(owner(page)), offset(page));
  if (recorded != 0) known_[page] = recorded;
  return recorded == 0 ? undecided : static_cast<int>(recorded) - 1;
}

void HomeDirectory::forget(std::size_t first, std::size_t count) {
  for (std::size_t page = first; page < first + count; ++page)
    if (owner(page) == static_cast<std::size_t>(rank_))
      std::atomic_ref<std::uint32_t>(words_.local<std::uint32_t>(offset(page))).store(0);
  known_.reset(first, count);
}

}  // namespace mpidsm::detail
