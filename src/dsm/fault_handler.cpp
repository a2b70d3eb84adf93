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

#include "engine_lock.hpp"
#include "mpidsm/error.hpp"
#include "test_hooks.hpp"

namespace mpidsm::detail {

thread_local int inside_engine __attribute__((tls_model("initial-exec"))) = 0;

namespace {

struct Range {
  std::atomic<const std::byte*> base{nullptr};
  std::atomic<std::size_t> size{0};
  std::atomic<FaultTarget*> target{nullptr};
};

// A few runtimes may each have a region; the handler scans this small array
// without locks (slots change only in collective create/destroy).
std::array<Range, 16> ranges;
std::mutex registry_mutex;
struct sigaction previous {};

// In a child process after fork() its DSM views are cut off from the
// protocol (its stores would reach homes it shares memory with, or nobody),
// so every page is made inaccessible and the first access is reported.
void after_fork_in_child() {
  forked_child.store(true);  // whichever fork handler runs first
  for (auto& range : ranges)
    if (const std::byte* base = range.base.load())
      mprotect(const_cast<std::byte*>(base), range.size.load(), PROT_NONE);
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

FaultTarget* target_of(const void* address, std::size_t size = 1) {
  auto* at = static_cast<const std::byte*>(address);
  for (auto& range : ranges) {
    const std::byte* base = range.base.load(std::memory_order_acquire);
    if (!base || at < base || at + size > base + range.size.load(std::memory_order_relaxed))
      continue;
    return range.target.load(std::memory_order_acquire);
  }
  return nullptr;
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

std::atomic<int> fault_ranges_registered{0};

namespace {

// Calls f(target, part, part_size) for the part of [address, address+size)
// inside each registered region.
template <class F>
void for_each_part(const void* address, std::size_t size, F&& f) {
  auto* first = static_cast<const std::byte*>(address);
  for (auto& range : ranges) {
    const std::byte* base = range.base.load(std::memory_order_acquire);
    if (!base) continue;
    const std::byte* end = base + range.size.load(std::memory_order_relaxed);
    const std::byte* lo = first > base ? first : base;
    const std::byte* hi = first + size < end ? first + size : end;
    if (lo >= hi) continue;
    if (FaultTarget* target = range.target.load(std::memory_order_acquire))
      f(*target, lo, static_cast<std::size_t>(hi - lo));
  }
}

}  // namespace

bool pin_slow(const void* address, std::size_t size, bool write) {
  bool any = false;
  if (size != 0)
    for_each_part(address, size, [&](FaultTarget& target, const void* part, std::size_t bytes) {
      target.pin(part, bytes, write);
      any = true;
    });
  return any;
}

void unpin_slow(const void* address, std::size_t size) {
  if (size != 0)
    for_each_part(address, size, [](FaultTarget& target, const void* part, std::size_t bytes) {
      target.unpin(part, bytes);
    });
}

void register_fault_range(const void* base, std::size_t size, FaultTarget* target) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  for (auto& range : ranges) {
    if (range.base.load() != nullptr) continue;
    range.size.store(size);
    range.target.store(target);
    range.base.store(static_cast<const std::byte*>(base), std::memory_order_release);
    static std::once_flag fork_handler;
    std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, after_fork_in_child); });
    if (fault_ranges_registered.fetch_add(1) == 0) {
      struct sigaction action {};
      action.sa_sigaction = on_segv;
      action.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&action.sa_mask);
      sigaction(SIGSEGV, &action, &previous);
    }
    return;
  }
  throw Error(Errc::no_memory, no_rank, "DSM: more than 16 regions in one process");
}

void unregister_fault_range(const void* base) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  for (auto& range : ranges) {
    if (range.base.load() != base) continue;
    range.base.store(nullptr, std::memory_order_release);
    range.target.store(nullptr);
    if (fault_ranges_registered.fetch_sub(1) == 1) sigaction(SIGSEGV, &previous, nullptr);
    return;
  }
}

}  // namespace mpidsm::detail
