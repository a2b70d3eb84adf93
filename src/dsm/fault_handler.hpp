// The SIGSEGV handler of the DSM. Installed when the first region registers
// (after MPI_Init and UCX, whose own handlers it then chains to), it handles
// only faults inside registered regions and passes every other fault to the
// handler it replaced, so a real crash still crashes with its usual report.
#pragma once

#include <cstddef>

namespace mpidsm::detail {

class FaultTarget {
 public:
  // Resolves an access fault at `address`; false when it is not a protocol
  // fault (e.g. an unallocated page), which then crashes as usual.
  virtual bool handle_fault(void* address, bool write) = 0;

 protected:
  ~FaultTarget() = default;
};

void register_fault_range(const void* base, std::size_t size, FaultTarget* target);
void unregister_fault_range(const void* base);

}  // namespace mpidsm::detail
