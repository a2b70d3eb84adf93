#include "test_hooks.hpp"

#include <time.h>

#include <array>
#include <atomic>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

std::array<std::atomic<bool>, static_cast<std::size_t>(FailurePoint::count)> armed{};
std::atomic<bool> access_reported{true};
std::atomic<bool> detours_allowed{true};
std::atomic<unsigned> copy_log_delay_ms{0};

const char* name_of(FailurePoint point) {
  switch (point) {
    case FailurePoint::barrier_release:
      return "the release of Dsm::barrier";
    case FailurePoint::sync_release:
      return "the release of Dsm::sync_with";
    case FailurePoint::allocate_homes:
      return "mapping the homes of Dsm::allocate";
    case FailurePoint::free_unmap:
      return "unmapping the pages of Dsm::free";
    case FailurePoint::count:
      break;
  }
  return "?";
}

}  // namespace

void inject_failure(FailurePoint point) {
  armed[static_cast<std::size_t>(point)].store(true, std::memory_order_relaxed);
}

void fail_if_injected(FailurePoint point, int rank) {
  auto& flag = armed[static_cast<std::size_t>(point)];
  if (!flag.load(std::memory_order_relaxed) || !flag.exchange(false)) return;
  throw Error(Errc::no_memory, rank, std::string("injected failure in ") + name_of(point));
}

void set_fault_access_reported(bool reported) {
  access_reported.store(reported, std::memory_order_relaxed);
}

bool fault_access_reported() {
  return access_reported.load(std::memory_order_relaxed);
}

void set_fault_detours_allowed(bool allowed) {
  detours_allowed.store(allowed, std::memory_order_relaxed);
}

bool fault_detours_allowed() {
  return detours_allowed.load(std::memory_order_relaxed);
}

void delay_next_copy_log_entry(unsigned milliseconds) {
  copy_log_delay_ms.store(milliseconds, std::memory_order_relaxed);
}

// Runs inside the fault handler: nanosleep is async-signal-safe.
void delay_copy_log_entry_if_asked() {
  if (copy_log_delay_ms.load(std::memory_order_relaxed) == 0) return;
  const unsigned ms = copy_log_delay_ms.exchange(0);
  const timespec pause{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  nanosleep(&pause, nullptr);
}

}  // namespace mpidsm::detail
