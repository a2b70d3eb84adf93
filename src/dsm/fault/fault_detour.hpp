// Resolves a fault on the faulting thread itself, outside the signal handler.
//
// A fault whose resolution reaches UCX may not be resolved inside the
// SIGSEGV handler (UCX's progress allocates and runs callbacks; see
// fault_servicer.hpp). Handing it to another thread costs two thread
// wake-ups per miss (about 6 us of a 49 us read miss across two simulated
// hosts). A detour costs one system call instead: the handler saves the
// interrupted context (every register, the vector state, the signal mask)
// on the thread's stack and returns into a resolver function, which then
// runs as ordinary code of the faulting thread; when it returns, a stub
// restores the saved context with rt_sigreturn, exactly as the kernel
// returns from a signal, and the faulting access runs again.
//
// Supported on x86-64 Linux, where the signal frame's layout is the kernel's
// ABI. Not taken under valgrind (which replaces the kernel's frames), with
// user shadow stacks on (rt_sigreturn there expects a token the detour
// cannot provide), or for a fault on an alternate signal stack (usually too
// small for a resolution): the caller then falls back to a thread.
#pragma once

#include "fault_handler.hpp"

namespace mpidsm::detail {

using DetourResolver = FaultOutcome (*)(void* owner, void* address, FaultAccess access,
                                        void* caller_state) noexcept;

// Whether this process can take detours. Not async-signal-safe: asked once,
// when the DSM is set up.
bool fault_detours_supported();

// In the SIGSEGV handler, with its ucontext: arranges for the thread to run
// resolve(owner, address, access, caller_state) once the handler returns,
// then to retry the access. False (nothing changed) where a detour cannot
// be taken. Async-signal-safe.
bool detour_fault(void* context, DetourResolver resolve, void* owner, void* address,
                  FaultAccess access, void* caller_state);

// Whether the last detour of this thread resolved `address` as not the
// DSM's (no allocation there): the retried access faults again, and this
// tells the handler to pass it on. Clears the record.
bool detour_refused(const void* address);

}  // namespace mpidsm::detail
