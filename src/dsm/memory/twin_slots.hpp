// Twins: the copy of a remote page taken before this rank's first write to
// it, against which its diff is computed at the release. One slot per cache
// slot: a dirty page is always cached, so twins never run out, and the
// memory is only that of the slots in use (a lazy array).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lazy_array.hpp"

namespace mpidsm::detail {

class TwinSlots {
 public:
  TwinSlots(std::size_t slots, std::size_t page_size);

  // A free slot; the caller holds at most `slots` at once (one per cached page).
  std::int32_t take() {
    const std::int32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void give_back(std::int32_t slot) { free_.push_back(slot); }
  std::byte* at(std::int32_t slot) { return &bytes_[static_cast<std::size_t>(slot) * page_size_]; }
  std::size_t free_slots() const { return free_.size(); }

 private:
  std::size_t page_size_;
  LazyArray<std::byte> bytes_;
  std::vector<std::int32_t> free_;  // reserved for every slot: giving back never allocates
};

}  // namespace mpidsm::detail
