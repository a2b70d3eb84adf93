#include "pin_counts.hpp"

namespace mpidsm::detail {

bool PinCounts::add(std::size_t page, bool remote) {
  std::atomic_ref<std::uint32_t> count(counts_[page]);
  std::uint32_t now = count.load();
  std::uint32_t next;
  do {
    if ((now & kCount) == kCount) return false;
    next = now == 0 && remote ? kRemote | 1 : now + 1;
  } while (!count.compare_exchange_weak(now, next));
  if ((next & kCount) == 1) pinned_pages_.fetch_add(1);
  if (next == (kRemote | 1)) remote_pinned_.fetch_add(1);
  return true;
}

void PinCounts::remove(std::size_t page) {
  std::atomic_ref<std::uint32_t> count(counts_[page]);
  std::uint32_t left = count.fetch_sub(1) - 1;
  if ((left & kCount) == 0) pinned_pages_.fetch_sub(1);
  if (left == kRemote && count.compare_exchange_strong(left, 0)) remote_pinned_.fetch_sub(1);
}

}  // namespace mpidsm::detail
