#include "placement.hpp"

namespace mpidsm::detail {

int home_of(const Placement& placement, std::size_t page, std::size_t pages, int ranks) {
  switch (placement.kind) {
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
