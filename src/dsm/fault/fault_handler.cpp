#include "fault_handler.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>

#include "dsm/test_hooks.hpp"
#include "engine_lock.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {

thread_local int inside_engine __attribute__((tls_model("initial-exec"))) = 0;

namespace {

std::mutex registry_mutex;  // installs and restores the handler with the ranges
struct sigaction previous {};

// In a child process after fork() its DSM views are cut off from the
// protocol (its stores would reach homes it shares memory with, or nobody),
// so every page is made inaccessible and the first access is reported.
void after_fork_in_child() {
  forked_child.store(true);  // whichever fork handler runs first
  for_each_pinned_range([](const void* base, std::size_t size) {
    mprotect(const_cast<void*>(base), size, PROT_NONE);
  });
}

// x86-64 reports the kind of access in the page-fault error code: bit 1 a
// write, bit 4 an instruction fetch (never resolvable: the view is not
// executable). Elsewhere the engine infers it from the page's state.
FaultAccess access_of(void* context, bool& instruction_fetch) {
  instruction_fetch = false;
  if (!fault_access_reported()) return FaultAccess::unknown;
#if defined(__x86_64__)
  const auto error = static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR];
  instruction_fetch = (error & 0x10) != 0;
  return (error & 0x2) ? FaultAccess::write : FaultAccess::read;
#else
  (void)context;
  return FaultAccess::unknown;
#endif
}

void chain(int signal, siginfo_t* info, void* context) {
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
    previous.sa_sigaction(signal, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
  } else {
    // Default action: restore it and return; the access faults again and the
    // process dies of SIGSEGV as it would have without mpidsm.
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigaction(SIGSEGV, &fallback, nullptr);
  }
}

// write(2) only: this runs in a signal handler.
void say(const char* text) {
  std::size_t length = 0;
  while (text[length]) ++length;
  while (length > 0) {
    const ssize_t n = write(STDERR_FILENO, text, length);
    if (n <= 0) return;
    text += n;
    length -= static_cast<std::size_t>(n);
  }
}

// Every range is a region's, whose owner is a FaultTarget.
FaultTarget* target_of(const void* address) {
  return static_cast<FaultTarget*>(owner_of(address));
}

void on_segv(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  FaultOutcome outcome = FaultOutcome::not_ours;
  if (FaultTarget* target = target_of(info->si_addr); target && info->si_code == SEGV_ACCERR) {
    bool instruction_fetch = false;
    const FaultAccess access = access_of(context, instruction_fetch);
    if (inside_engine != 0) {
      say("mpidsm: DSM memory was touched while this thread was inside mpidsm (from a signal "
          "handler or a callback); make it accessible first (Dsm::make_accessible) or do not "
          "touch it there\n");
    } else if (forked_child.load(std::memory_order_relaxed)) {
      say("mpidsm: DSM memory was touched in a child process after fork(); the DSM does not "
          "support fork (the child is not a rank of the runtime): use it in the parent only, "
          "or exec() in the child\n");
    } else if (!instruction_fetch) {
      outcome = target->handle_fault(info->si_addr, access, context);
    }
  }
  errno = saved_errno;
  if (outcome == FaultOutcome::not_ours) chain(signal, info, context);
}

}  // namespace

void register_fault_range(const void* base, std::size_t size, FaultTarget* target) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  static std::once_flag fork_handler;
  std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, after_fork_in_child); });
  if (add_pinned_range(base, size, target)) {
    struct sigaction action {};
    action.sa_sigaction = on_segv;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previous);
  }
}

void unregister_fault_range(const void* base) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  if (remove_pinned_range(base)) sigaction(SIGSEGV, &previous, nullptr);
}

}  // namespace mpidsm::detail
