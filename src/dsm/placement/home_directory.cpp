#include "home_directory.hpp"

namespace mpidsm::detail {

HomeDirectory::HomeDirectory(MPI_Comm comm, Transport& transport, std::size_t pages,
                             const MappablePeers& mappable)
    : ranks_(static_cast<std::size_t>(transport.size())),
      rank_(transport.rank()),
      words_(comm, transport, (pages + ranks_ - 1) / ranks_ * 4, mappable, "DSM home directory"),
      known_(pages) {}

int HomeDirectory::claim(std::size_t page) {
  const auto mine = static_cast<std::uint32_t>(rank_ + 1);
  const std::uint32_t previous =
      words_.compare_swap<std::uint32_t>(static_cast<int>(owner(page)), offset(page), 0, mine);
  known_[page] = previous == 0 ? mine : previous;
  return known(page);
}

int HomeDirectory::look_up(std::size_t page) {
  const std::uint32_t recorded =
      words_.load<std::uint32_t>(static_cast<int>(owner(page)), offset(page));
  if (recorded != 0) known_[page] = recorded;
  return recorded == 0 ? undecided : static_cast<int>(recorded) - 1;
}

// The words of the pages this rank owns in the range are consecutive: page
// p's is followed by page p + ranks's.
void HomeDirectory::forget(std::size_t first, std::size_t count) {
  known_.reset(first, count);
  const auto me = static_cast<std::size_t>(rank_);
  const std::size_t mine = first + (me + ranks_ - first % ranks_) % ranks_;  // the first owned here
  if (count == 0 || mine >= first + count) return;
  const std::size_t last = first + count - 1;
  const std::size_t last_mine = last - (last % ranks_ + ranks_ - me) % ranks_;
  words_.clear_local(offset(mine), offset(last_mine) + 4 - offset(mine));
}

}  // namespace mpidsm::detail
