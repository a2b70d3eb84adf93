#include "hot_home_pages.hpp"

#include <algorithm>
#include <cstring>

namespace mpidsm::detail {

HotHomePages::HotHomePages(std::size_t pages, std::size_t page_size)
    : page_size_(page_size),
      last_written_(pages),
      slot_of_(pages),
      buffers_((kSlots + 1) * page_size),
      snapshot_(kSlots),
      idle_(kSlots),
      spare_(static_cast<std::uint32_t>(kSlots)) {
  static_assert(kSlots < 255, "slot_of_ holds a slot + 1 in a byte");
  for (std::uint32_t s = 0; s < kSlots; ++s) snapshot_[s] = s;
  free_slots_.reserve(kSlots);
  for (std::uint32_t s = kSlots; s > 0; --s) free_slots_.push_back(s - 1);
  pages_.reserve(kSlots);
  listed_.reserve(kSlots);
}

bool HotHomePages::written(std::size_t page) {
  const std::uint64_t last = last_written_[page];
  last_written_[page] = release_;
  return last != 0 && release_ - last <= kCoolAfter && !free_slots_.empty() && !hot(page);
}

void HotHomePages::adopt(std::size_t page, const std::byte* bytes) {
  const std::uint32_t s = free_slots_.back();
  free_slots_.pop_back();
  slot_of_[page] = static_cast<std::uint8_t>(s + 1);
  idle_[s] = 0;
  std::memcpy(buffer(snapshot_[s]), bytes, page_size_);
  pages_.push_back(page);
}

bool HotHomePages::changed(std::size_t page, const std::byte* bytes) {
  const std::size_t s = slot(page);
  std::byte* now = buffer(spare_);
  std::memcpy(now, bytes, page_size_);
  const bool differs = std::memcmp(now, buffer(snapshot_[s]), page_size_) != 0;
  std::swap(spare_, snapshot_[s]);
  idle_[s] = differs ? 0 : static_cast<std::uint8_t>(std::min(idle_[s] + 1, 255));
  if (differs) last_written_[page] = release_;  // a write, as a fault would have told
  return differs;
}

void HotHomePages::drop(std::size_t page) {
  free_slots_.push_back(static_cast<std::uint32_t>(slot(page)));
  slot_of_[page] = 0;
  // Unordered: the last one takes its place.
  *std::find(pages_.begin(), pages_.end(), page) = pages_.back();
  pages_.pop_back();
}

void HotHomePages::forget(std::size_t page) {
  if (hot(page)) drop(page);
  last_written_[page] = 0;
}

void HotHomePages::forget(std::size_t first, std::size_t count) {
  for (std::size_t i = 0; i < pages_.size();)
    if (pages_[i] >= first && pages_[i] < first + count)
      drop(pages_[i]);  // moves the last hot page to i
    else
      ++i;
  last_written_.reset(first, count);
}

}  // namespace mpidsm::detail
