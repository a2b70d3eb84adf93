// A thread that gives remote ranks target-side progress when UCX emulates
// RMA and atomics with active messages (tcp). It sleeps in poll() on the
// worker's event fd whenever the worker is idle, so it costs nothing on
// transports where nothing arrives for it (shared memory, RDMA NICs).
#pragma once

#include <atomic>
#include <thread>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class ProgressThread {
 public:
  // The transport must have been created thread-safe.
  explicit ProgressThread(Transport& transport);
  ~ProgressThread();  // stops and joins
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

 private:
  void run();

  Transport& transport_;
  int wake_fd_ = -1;  // eventfd written to stop the thread
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace mpidsm::detail
