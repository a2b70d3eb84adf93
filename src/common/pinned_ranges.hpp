// Memory ranges whose owner must prepare them before the kernel or UCX
// touches them: the DSM's views, where a page stays inaccessible until the
// protocol fetches it. Neither raises SIGSEGV for its own accesses (a system
// call fails with EFAULT; a fault inside UCX would re-enter UCX from the
// handler and deadlock), so the transport pins every local buffer it hands
// to UCX (free while no range exists) and the application makes buffers
// accessible before handing them to the kernel. The DSM's fault handler
// finds a faulting address's owner here too.
//
// Lookups are lock-free: ranges change only when a region is created or
// destroyed (collectively), a few per process at most.
#pragma once

#include <atomic>
#include <cstddef>

namespace mpidsm::detail {

class RangeOwner {
 public:
  // Makes [address, address+size) (inside the owner's range) readable, or
  // writable when `write`, until a matching unpin; throws Error when part of
  // it cannot be (unallocated, or more pages than the owner can pin).
  virtual void pin(const void* address, std::size_t size, bool write) = 0;
  // Lock-free: may run inside UCX progress or with the owner's lock held.
  virtual void unpin(const void* address, std::size_t size) = 0;

 protected:
  ~RangeOwner() = default;
};

// Adds a range; true when it is the only one (Errc::no_memory when 16 exist).
bool add_pinned_range(const void* base, std::size_t size, RangeOwner* owner);
// Removes the range starting at `base`; true when none is left.
bool remove_pinned_range(const void* base);
// The owner of the range holding [address, address+size), or nullptr.
RangeOwner* owner_of(const void* address, std::size_t size = 1);
// Calls f(base, size) for every range (lock-free: also in a fork handler).
void for_each_pinned_range(void (*f)(const void* base, std::size_t size));

extern std::atomic<int> pinned_ranges;  // ranges that exist
bool pin_slow(const void* address, std::size_t size, bool write);
void unpin_slow(const void* address, std::size_t size);

// Called on every local buffer handed to UCX: free when no range exists, a
// range check otherwise. True when part of the buffer lies in a range and
// must be unpinned once UCX is done with it.
inline bool pin(const void* address, std::size_t size, bool write) {
  return pinned_ranges.load(std::memory_order_relaxed) != 0 && pin_slow(address, size, write);
}
// Unpins what pin() pinned; a no-op when the range is gone meanwhile.
inline void unpin(const void* address, std::size_t size) {
  if (pinned_ranges.load(std::memory_order_relaxed) != 0) unpin_slow(address, size);
}

// Pins a buffer for the duration of a blocking operation.
class ScopedPin {
 public:
  ScopedPin(const void* address, std::size_t size, bool write)
      : address_(address), size_(size), pinned_(pin(address, size, write)) {}
  ~ScopedPin() {
    if (pinned_) unpin(address_, size_);
  }
  ScopedPin(const ScopedPin&) = delete;
  ScopedPin& operator=(const ScopedPin&) = delete;

 private:
  const void* address_;
  std::size_t size_;
  bool pinned_;
};

}  // namespace mpidsm::detail
