// Resolves DSM faults whose resolution reaches UCX on a thread of its own.
//
// A SIGSEGV handler may make only async-signal-safe calls, and UCX's
// progress is not one: it allocates (request pools, reassembly of large
// active messages) and runs other ranks' callbacks. ThreadSanitizer flagged
// every such fault resolved in the handler. So when a fault may need the
// transport, the faulting thread posts it here and sleeps on a futex; this
// thread resolves it in ordinary thread context and wakes it. Posting and
// waiting use atomics and the futex system call only.
//
// Faults that need no transport (every home and every record mapped on this
// node) stay in the handler: they cost an mprotect and a copy, which a
// thread hand-off would double.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "fault_handler.hpp"

namespace mpidsm::detail {

class FaultServicer {
 public:
  // Resolves one fault. `caller_state` belongs to the faulting thread (its
  // own bookkeeping), which sleeps until this returns. Must not throw.
  using Resolver = FaultOutcome (*)(void* owner, void* address, FaultAccess access,
                                    void* caller_state) noexcept;

  FaultServicer(Resolver resolve, void* owner);
  ~FaultServicer();  // stops and joins; no fault may be posted any more
  FaultServicer(const FaultServicer&) = delete;
  FaultServicer& operator=(const FaultServicer&) = delete;

  // Async-signal-safe: posts the fault and sleeps until it is resolved.
  FaultOutcome resolve(void* address, FaultAccess access, void* caller_state);

 private:
  struct Request;
  void run();
  void serve(Request* list);

  Resolver resolve_;
  void* owner_;
  std::atomic<Request*> pending_{nullptr};  // a lock-free stack of posted faults
  std::atomic<std::uint32_t> posted_{0};    // the futex this thread sleeps on
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace mpidsm::detail
