#include "fault_handler.hpp"

#include <signal.h>
#include <ucontext.h>

#include <array>
#include <atomic>
#include <mutex>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {
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

// x86-64 reports whether the access was a write in the page-fault error code;
// elsewhere a first write to an invalid page is resolved as a read and then
// faults again as a write.
bool was_write(void* context) {
#if defined(__x86_64__)
  auto* uc = static_cast<ucontext_t*>(context);
  return (uc->uc_mcontext.gregs[REG_ERR] & 0x2) != 0;
#else
  (void)context;
  return false;
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

void on_segv(int signal, siginfo_t* info, void* context) {
  auto* at = static_cast<const std::byte*>(info->si_addr);
  for (auto& range : ranges) {
    const std::byte* base = range.base.load(std::memory_order_acquire);
    if (!base || at < base || at >= base + range.size.load(std::memory_order_relaxed)) continue;
    FaultTarget* target = range.target.load(std::memory_order_acquire);
    if (target && target->handle_fault(info->si_addr, was_write(context))) return;
    break;
  }
  chain(signal, info, context);
}

}  // namespace

std::atomic<int> fault_ranges_registered{0};

void make_accessible_slow(const void* address, std::size_t size, bool write) {
  if (size == 0) return;
  auto* first = static_cast<const std::byte*>(address);
  for (auto& range : ranges) {
    const std::byte* base = range.base.load(std::memory_order_acquire);
    if (!base) continue;
    const std::byte* end = base + range.size.load(std::memory_order_relaxed);
    const std::byte* lo = first > base ? first : base;
    const std::byte* hi = first + size < end ? first + size : end;
    if (lo >= hi) continue;
    if (FaultTarget* target = range.target.load(std::memory_order_acquire))
      target->make_accessible(lo, static_cast<std::size_t>(hi - lo), write);
  }
}

void register_fault_range(const void* base, std::size_t size, FaultTarget* target) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  for (auto& range : ranges) {
    if (range.base.load() != nullptr) continue;
    range.size.store(size);
    range.target.store(target);
    range.base.store(static_cast<const std::byte*>(base), std::memory_order_release);
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
