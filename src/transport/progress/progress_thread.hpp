// A thread that gives remote ranks target-side progress when UCX emulates
// RMA and atomics with active messages (tcp). It sleeps in poll() on the
// worker's event fd when the worker is idle, so it costs nothing on
// transports where nothing arrives for it (shared memory, RDMA NICs).
// Waking from poll() costs tens of microseconds (more in a VM), which a
// remote rank would pay on every put, get or atomic: after finding work the
// thread keeps polling for a short window (MPIDSM_PROGRESS_SPIN_US), so a
// stream of remote operations is served at transport speed, and only the
// first of a burst pays the wake-up; not when the node has no CPU to spare.
// While a thread of this rank waits inside the transport (and so drives
// it), events do not wake the progress thread (ProgressHandoff). It runs
// with a short scheduling slice (MPIDSM_PROGRESS_SLICE_US,
// scheduler_slice.hpp), so that a request preempts the computing rank.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "mpidsm/transport.hpp"
#include "progress_control.hpp"

namespace mpidsm::detail {

class ProgressThread {
 public:
  // The transport must have been created thread-safe. `slice` 0 leaves the
  // kernel's scheduling slice.
  ProgressThread(Transport& transport, std::chrono::microseconds spin,
                 std::chrono::microseconds slice);
  ~ProgressThread();  // stops and joins
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

 private:
  void run();
  void keep_polling();

  ProgressControl transport_;
  std::chrono::microseconds spin_;
  std::chrono::microseconds slice_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace mpidsm::detail
