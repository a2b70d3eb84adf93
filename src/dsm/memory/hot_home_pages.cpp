#include "hot_home_pages.hpp"

#include <algorithm>
#include <cstring>

namespace mpidsm::detail {

HotHomePages::HotHomePages(std::size_t pages, std::size_t page_size)
    : page_size_(page_size),
      last_written_(pages),
      last_epoch_(pages),
      slot_of_(pages),
      buffers_((kSlots + 1) * page_size),
      snapshot_(kSlots),
      idle_(kSlots),
      cold_(kSlots),
      spare_(static_cast<std::uint32_t>(kSlots)) {
  static_assert(kSlots < 255, "slot_of_ holds a slot + 1 in a byte");
  for (std::uint32_t s = 0; s < kSlots; ++s) snapshot_[s] = s;
  free_slots_.reserve(kSlots);
  for (std::uint32_t s = kSlots; s > 0; --s) free_slots_.push_back(s - 1);
  pages_.reserve(kSlots);
  cold_pages_.reserve(kSlots);
  listed_.reserve(kSlots);
}

bool HotHomePages::written(std::size_t page) {
  const bool recent = last_written_[page] != 0 && (release_ - last_written_[page] <= kCoolAfter ||
                                                   epochs_since_write(page) <= kCoolAfter);
  note_write(page);
  return recent && !held(page) && (!free_slots_.empty() || !cold_pages_.empty());
}

void HotHomePages::adopt(std::size_t page, const std::byte* bytes) {
  if (free_slots_.empty()) drop(cold_pages_.front());
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
  if (differs) note_write(page);  // a write, as a fault would have told
  return differs;
}

void HotHomePages::cool(std::size_t page) {
  leave_list(page);
  cold_[slot(page)] = 1;
  cold_pages_.push_back(page);
}

bool HotHomePages::rewarm(std::size_t page, const std::byte* bytes) {
  leave_list(page);
  cold_[slot(page)] = 0;
  idle_[slot(page)] = 0;
  pages_.push_back(page);
  return changed(page, bytes);
}

void HotHomePages::drop(std::size_t page) {
  leave_list(page);
  const std::size_t s = slot(page);
  cold_[s] = 0;
  free_slots_.push_back(static_cast<std::uint32_t>(s));
  slot_of_[page] = 0;
}

void HotHomePages::leave_list(std::size_t page) {
  if (cold_[slot(page)]) {
    // In order: the longest cold first.
    cold_pages_.erase(std::find(cold_pages_.begin(), cold_pages_.end(), page));
  } else {
    *std::find(pages_.begin(), pages_.end(), page) = pages_.back();  // unordered
    pages_.pop_back();
  }
}

void HotHomePages::forget(std::size_t page) {
  if (held(page)) drop(page);
  last_written_[page] = 0;
}

void HotHomePages::forget(std::size_t first, std::size_t count) {
  auto drop_in_range = [&](const std::vector<std::size_t>& pages) {
    for (std::size_t page : listed(pages))
      if (page >= first && page < first + count) drop(page);
  };
  drop_in_range(pages_);
  drop_in_range(cold_pages_);
  last_written_.reset(first, count);
  last_epoch_.reset(first, count);
}

}  // namespace mpidsm::detail
