// The SIGSEGV handler of the DSM. Installed when the first region registers
// (after MPI_Init and UCX, whose own handlers it then chains to), it handles
// only faults inside registered regions and passes every other fault, and
// every fault the protocol cannot resolve, to the handler it replaced, so a
// real crash still crashes with its usual report.
#pragma once

#include <atomic>
#include <cstddef>

#include "common/pinned_ranges.hpp"
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

// A region's owner: it resolves faults in its range and pins parts of it
// (common/pinned_ranges.hpp, where the range is registered).
class FaultTarget : public RangeOwner {
 public:
  // Resolves an access fault at `address`. Runs in the signal handler
  // (`context`: its ucontext): it must not throw, and reports errors itself.
  virtual FaultOutcome handle_fault(void* address, FaultAccess access, void* context) = 0;

 protected:
  ~FaultTarget() = default;
};

// Installs the handler with the first range. In a child process after
// fork() every range is made inaccessible, and its first access reported
// (the child is not a rank, and its view is cut off).
void register_fault_range(const void* base, std::size_t size, FaultTarget* target);
void unregister_fault_range(const void* base);

}  // namespace mpidsm::detail
