// Open MPI's progress loop drives mpidsm's UCX worker while this rank waits
// in a blocking MPI call. Remote ranks' operations on this rank (emulated
// RMA and atomics over tcp, DSM fetch calls, diffs) need its progress; the
// progress thread gives it, but a thread woken from poll() on a node whose
// cores all run ranks spinning in MPI costs tens of microseconds each time
// (measured across two simulated hosts: a 4 KiB get from a rank blocked in
// MPI_Barrier took 73 us with the thread alone, 31 us with the hook).
// MPI's own wait spins anyway; one more poll per round of it serves remote
// ranks at transport speed.
//
// The hook is Open MPI's opal_progress_register, looked up at run time: with
// another MPI it is absent, and the progress thread alone serves.
#pragma once

#include <cstddef>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class MpiProgressHook {
 public:
  // Starts driving `transport` from MPI's progress loop (when Open MPI's is
  // there); the transport must outlive the hook.
  explicit MpiProgressHook(Transport& transport);
  // Stops, once no call from MPI's loop is inside the transport.
  ~MpiProgressHook();
  MpiProgressHook(const MpiProgressHook&) = delete;
  MpiProgressHook& operator=(const MpiProgressHook&) = delete;

  // Whether MPI's progress loop drives the transport (Open MPI found).
  bool active() const { return slot_ != kNoSlot; }

 private:
  static constexpr std::size_t kNoSlot = ~std::size_t{0};
  std::size_t slot_ = kNoSlot;
};

}  // namespace mpidsm::detail
