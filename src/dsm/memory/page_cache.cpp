#include "page_cache.hpp"

namespace mpidsm::detail {

PageCache::PageCache(std::size_t capacity, std::size_t region_pages)
    : slots_(capacity), slot_of_(region_pages) {
  free_.reserve(capacity);
  for (std::size_t s = capacity; s-- > 0;) free_.push_back(static_cast<std::int32_t>(s));
}

void PageCache::insert(std::size_t page) {
  const std::int32_t slot = free_.back();
  free_.pop_back();
  slots_[slot].page = static_cast<std::int64_t>(page);
  slots_[slot].entry = Entry{};
  slot_of_[page] = slot + 1;
  push_front(slot);
  ++used_;
}

void PageCache::touch(std::size_t page) {
  const std::int32_t slot = slot_of_[page] - 1;
  if (slot == head_) return;
  unlink(slot);
  push_front(slot);
}

void PageCache::erase(std::size_t page) {
  const std::int32_t slot = slot_of_[page] - 1;
  unlink(slot);
  slots_[slot].page = none;
  slot_of_[page] = 0;
  free_.push_back(slot);
  --used_;
}

void PageCache::unlink(std::int32_t slot) {
  Slot& s = slots_[slot];
  if (s.prev != none)
    slots_[s.prev].next = s.next;
  else
    head_ = s.next;
  if (s.next != none)
    slots_[s.next].prev = s.prev;
  else
    tail_ = s.prev;
  s.prev = s.next = none;
}

void PageCache::push_front(std::int32_t slot) {
  Slot& s = slots_[slot];
  s.prev = none;
  s.next = head_;
  if (head_ != none) slots_[head_].prev = slot;
  head_ = slot;
  if (tail_ == none) tail_ = slot;
}

}  // namespace mpidsm::detail
