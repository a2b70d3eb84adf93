// Resolves DSM faults whose resolution reaches UCX outside the signal
// handler.
//
// A SIGSEGV handler may make only async-signal-safe calls, and UCX's
// progress is not one: it allocates (request pools, reassembly of large
// active messages) and runs other ranks' callbacks. ThreadSanitizer flagged
// every such fault resolved in the handler. So such a fault takes a detour
// (fault_detour.hpp): the faulting thread leaves the handler, resolves the
// fault as ordinary code and retries the access. Where no detour can be
// taken (another architecture, valgrind, a fault on an alternate signal
// stack), the faulting thread posts the fault to this class's thread and
// sleeps on a futex; that thread resolves it and wakes it. Posting and
// waiting use atomics and the futex system call only.
//
// Faults that need no transport (every home and every record mapped on this
// node) stay in the handler: they cost an mprotect and a copy, which a
// detour or a thread hand-off would add to.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "fault_detour.hpp"

namespace mpidsm::detail {

class FaultServicer {
 public:
  // Resolves one fault. `caller_state` belongs to the faulting thread (its
  // own bookkeeping), which waits until this returns. Must not throw.
  using Resolver = DetourResolver;

  FaultServicer(Resolver resolve, void* owner);
  ~FaultServicer();  // stops and joins; no fault may be posted any more
  FaultServicer(const FaultServicer&) = delete;
  FaultServicer& operator=(const FaultServicer&) = delete;

  // Async-signal-safe, in the SIGSEGV handler (`context`: its ucontext, or
  // nullptr to rule out a detour). Either arranges a detour (`resolved`:
  // the access is retried once the detour has resolved it) or posts the
  // fault and sleeps until it is resolved.
  FaultOutcome resolve(void* address, FaultAccess access, void* caller_state, void* context);

 private:
  struct Request;
  void run();
  void serve(Request* list);

  Resolver resolve_;
  void* owner_;
  const bool detours_;  // fault_detours_supported(), unless a test hook forbids them
  std::atomic<Request*> pending_{nullptr};  // a lock-free stack of posted faults
  std::atomic<std::uint32_t> posted_{0};    // the futex this thread sleeps on
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace mpidsm::detail
