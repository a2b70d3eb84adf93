#include "pinned_ranges.hpp"

#include <array>
#include <mutex>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

struct Range {
  std::atomic<const std::byte*> base{nullptr};
  std::atomic<std::size_t> size{0};
  std::atomic<RangeOwner*> owner{nullptr};
};

// A few runtimes may each have a region; lookups scan this small array
// without locks.
std::array<Range, 16> ranges;
std::mutex registry_mutex;

// Calls f(owner, part, part_size) for the part of [address, address+size)
// inside each range.
template <class F>
void for_each_part(const void* address, std::size_t size, F&& f) {
  auto* first = static_cast<const std::byte*>(address);
  for (auto& range : ranges) {
    const std::byte* base = range.base.load(std::memory_order_acquire);
    if (!base) continue;
    const std::byte* end = base + range.size.load(std::memory_order_relaxed);
    const std::byte* lo = first > base ? first : base;
    const std::byte* hi = first + size < end ? first + size : end;
    if (lo >= hi) continue;
    if (RangeOwner* owner = range.owner.load(std::memory_order_acquire))
      f(*owner, lo, static_cast<std::size_t>(hi - lo));
  }
}

}  // namespace

std::atomic<int> pinned_ranges{0};

bool pin_slow(const void* address, std::size_t size, bool write) {
  bool any = false;
  if (size != 0)
    for_each_part(address, size, [&](RangeOwner& owner, const void* part, std::size_t bytes) {
      owner.pin(part, bytes, write);
      any = true;
    });
  return any;
}

void unpin_slow(const void* address, std::size_t size) {
  if (size != 0)
    for_each_part(address, size, [](RangeOwner& owner, const void* part, std::size_t bytes) {
      owner.unpin(part, bytes);
    });
}

bool add_pinned_range(const void* base, std::size_t size, RangeOwner* owner) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  for (auto& range : ranges) {
    if (range.base.load() != nullptr) continue;
    range.size.store(size);
    range.owner.store(owner);
    range.base.store(static_cast<const std::byte*>(base), std::memory_order_release);
    return pinned_ranges.fetch_add(1) == 0;
  }
  throw Error(Errc::no_memory, no_rank, "DSM: more than 16 regions in one process");
}

bool remove_pinned_range(const void* base) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  for (auto& range : ranges) {
    if (range.base.load() != base) continue;
    range.base.store(nullptr, std::memory_order_release);
    range.owner.store(nullptr);
    return pinned_ranges.fetch_sub(1) == 1;
  }
  return false;
}

RangeOwner* owner_of(const void* address, std::size_t size) {
  auto* at = static_cast<const std::byte*>(address);
  for (auto& range : ranges) {
    const std::byte* base = range.base.load(std::memory_order_acquire);
    if (!base || at < base || at + size > base + range.size.load(std::memory_order_relaxed))
      continue;
    return range.owner.load(std::memory_order_acquire);
  }
  return nullptr;
}

void for_each_pinned_range(void (*f)(const void* base, std::size_t size)) {
  for (auto& range : ranges)
    if (const std::byte* base = range.base.load()) f(base, range.size.load());
}

}  // namespace mpidsm::detail
