// The SIGSEGV handler of the DSM. Installed when the first region registers
// (after MPI_Init and UCX, whose own handlers it then chains to), it handles
// only faults inside registered regions and passes every other fault to the
// handler it replaced, so a real crash still crashes with its usual report.
//
// It also lets the transport make DSM buffers accessible before UCX touches
// them: a fault inside UCX would re-enter UCX from the handler and deadlock.
#pragma once

#include <atomic>
#include <cstddef>

namespace mpidsm::detail {

class FaultTarget {
 public:
  // Resolves an access fault at `address`; false when it is not a protocol
  // fault (e.g. an unallocated page), which then crashes as usual. Runs in
  // the signal handler, so it must not throw.
  virtual bool handle_fault(void* address, bool write) = 0;
  // Makes [address, address+size) (inside the target's range) readable, or
  // writable when `write`; throws Error when part of it is unallocated.
  virtual void make_accessible(const void* address, std::size_t size, bool write) = 0;

 protected:
  ~FaultTarget() = default;
};

void register_fault_range(const void* base, std::size_t size, FaultTarget* target);
void unregister_fault_range(const void* base);

extern std::atomic<int> fault_ranges_registered;
void make_accessible_slow(const void* address, std::size_t size, bool write);

// Called by the transport on every local buffer it hands to UCX: free when no
// DSM region exists, a range check otherwise.
inline void make_accessible(const void* address, std::size_t size, bool write) {
  if (fault_ranges_registered.load(std::memory_order_relaxed) != 0)
    make_accessible_slow(address, size, write);
}

}  // namespace mpidsm::detail
