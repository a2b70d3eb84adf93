#include "placement.hpp"

#include <algorithm>

namespace mpidsm::detail {

BlockStarts block_starts(const std::vector<PlacementBlock>& blocks, std::size_t page_size) {
  BlockStarts starts;
  std::size_t begin = 0;  // the block's first byte
  for (const PlacementBlock& block : blocks) {
    // Pages whose first byte lies in [begin, begin + bytes).
    const std::size_t first_page = (begin + page_size - 1) / page_size;
    begin += block.bytes;
    if (first_page * page_size < begin) starts.emplace_back(first_page, block.home);
  }
  return starts;
}

int home_of(const Placement& placement, std::size_t page, std::size_t pages, int ranks,
            const BlockStarts& starts) {
  switch (placement.kind) {
    case Placement::Kind::blocks: {
      auto after =
          std::upper_bound(starts.begin(), starts.end(), page,
                           [](std::size_t p, const auto& start) { return p < start.first; });
      return after == starts.begin() ? 0 : (after - 1)->second;
    }
    case Placement::Kind::on_rank:
      return placement.rank;
    case Placement::Kind::first_touch:
      return decided_at_first_touch;
    case Placement::Kind::cyclic:
      return static_cast<int>(
          (page / placement.pages_per_block + static_cast<std::size_t>(placement.rank)) %
          static_cast<std::size_t>(ranks));
    case Placement::Kind::block: {
      const std::size_t slab = (pages + static_cast<std::size_t>(ranks) - 1) / ranks;
      return static_cast<int>(page / (slab == 0 ? 1 : slab));
    }
  }
  return 0;
}

}  // namespace mpidsm::detail
