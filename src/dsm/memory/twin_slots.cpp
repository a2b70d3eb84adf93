#include "twin_slots.hpp"

namespace mpidsm::detail {

TwinSlots::TwinSlots(std::size_t slots, std::size_t page_size)
    : page_size_(page_size), bytes_(slots * page_size) {
  free_.reserve(slots);
  // Handed out from the lowest slot up, so the memory in use stays compact.
  for (std::size_t slot = slots; slot-- > 0;) free_.push_back(static_cast<std::int32_t>(slot));
}

}  // namespace mpidsm::detail
