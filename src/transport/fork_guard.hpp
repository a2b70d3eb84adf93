// mpidsm in a child process after fork(): the child is not a rank of the
// runtime (UCX's endpoints, MPI and the peers know only its parent, and it
// shares the parent's mappings of peers' memory), so every call there is
// refused with an error instead of reaching, or hanging on, the parent's
// peers. One relaxed load per call.
#pragma once

#include <atomic>

namespace mpidsm::detail {

extern std::atomic<bool> forked_child;

// Registers the fork handler that marks a child (once per process).
void watch_for_fork();

// Throws Errc::invalid_state naming `operation` in a forked child.
void refuse_in_forked_child(int rank, const char* operation);
inline void check_not_forked(int rank, const char* operation) {
  if (forked_child.load(std::memory_order_relaxed)) [[unlikely]]
    refuse_in_forked_child(rank, operation);
}

}  // namespace mpidsm::detail
