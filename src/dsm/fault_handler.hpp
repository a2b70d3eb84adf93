// The SIGSEGV handler of the DSM. Installed when the first region registers
// (after MPI_Init and UCX, whose own handlers it then chains to), it handles
// only faults inside registered regions and passes every other fault, and
// every fault the protocol cannot resolve, to the handler it replaced, so a
// real crash still crashes with its usual report.
//
// It also lets the transport and the application make DSM buffers accessible
// before UCX or the kernel touch them (pin): neither raises SIGSEGV for its
// own accesses (a system call fails with EFAULT; a fault inside UCX would
// re-enter UCX from the handler and deadlock).
#pragma once

#include <atomic>
#include <cstddef>

#include "transport/fork_guard.hpp"

namespace mpidsm::detail {

// What the faulting access was, when the CPU says (x86-64's page-fault error
// code); `unknown` elsewhere: the engine then infers it from the page's state.
enum class FaultAccess { read, write, unknown };

enum class FaultOutcome {
  resolved,            // the page's mapping changed: retry the access
  already_accessible,  // nothing to change (another thread resolved it, or
                       // the access is one no protection explains)
  not_ours,            // no allocation, or an error: the previous handler gets it
};

class FaultTarget {
 public:
  // Resolves an access fault at `address`. Runs in the signal handler
  // (`context`: its ucontext): it must not throw, and reports errors itself.
  virtual FaultOutcome handle_fault(void* address, FaultAccess access, void* context) = 0;
  // Makes [address, address+size) (inside the target's range) readable, or
  // writable when `write`, until a matching unpin; throws Error when part of
  // it is unallocated or more pages would be pinned than the cache holds.
  virtual void pin(const void* address, std::size_t size, bool write) = 0;
  // Lock-free: may run inside UCX progress or with the engine's lock held.
  virtual void unpin(const void* address, std::size_t size) = 0;

 protected:
  ~FaultTarget() = default;
};

void register_fault_range(const void* base, std::size_t size, FaultTarget* target);
// Errc::invalid_state in a child process after fork() (the DSM does not
// support fork: the child is not a rank, and its view is cut off).
void unregister_fault_range(const void* base);

extern std::atomic<int> fault_ranges_registered;
bool pin_slow(const void* address, std::size_t size, bool write);
void unpin_slow(const void* address, std::size_t size);

// Called by the transport on every local buffer it hands to UCX: free when no
// DSM region exists, a range check otherwise. True when part of the buffer is
// DSM memory, which must then be unpinned once UCX is done with it.
inline bool pin(const void* address, std::size_t size, bool write) {
  return fault_ranges_registered.load(std::memory_order_relaxed) != 0 &&
         pin_slow(address, size, write);
}
// Unpins what pin() pinned; a no-op when the region is gone meanwhile.
inline void unpin(const void* address, std::size_t size) {
  if (fault_ranges_registered.load(std::memory_order_relaxed) != 0) unpin_slow(address, size);
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
