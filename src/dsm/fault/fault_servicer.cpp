#include "fault_servicer.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dsm/test_hooks.hpp"

namespace mpidsm::detail {
namespace {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
              std::atomic<std::uint32_t>::is_always_lock_free);

std::uint32_t* futex_word(std::atomic<std::uint32_t>& word) {
  return reinterpret_cast<std::uint32_t*>(&word);
}

// Sleeps while `word` holds `expected` (returns at once otherwise, or on a
// spurious wake-up: callers re-check).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  syscall(SYS_futex, futex_word(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word) {
  syscall(SYS_futex, futex_word(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace

// Lives on the faulting thread's stack (in its signal frame) until `done`.
struct FaultServicer::Request {
  void* address;
  FaultAccess access;
  void* caller_state;
  FaultOutcome outcome = FaultOutcome::not_ours;
  std::atomic<std::uint32_t> done{0};
  Request* next = nullptr;
};

FaultServicer::FaultServicer(Resolver resolve, void* owner)
    : resolve_(resolve),
      owner_(owner),
      detours_(fault_detours_allowed() && fault_detours_supported()),
      thread_([this] { run(); }) {}

FaultServicer::~FaultServicer() {
  stopping_.store(true, std::memory_order_release);
  posted_.fetch_add(1, std::memory_order_release);
  futex_wake(posted_);
  thread_.join();
}

FaultOutcome FaultServicer::resolve(void* address, FaultAccess access, void* caller_state,
                                    void* context) {
  // The access retried after a detour that found no allocation there.
  if (detour_refused(address)) return FaultOutcome::not_ours;
  if (detours_ && context && detour_fault(context, resolve_, owner_, address, access, caller_state))
    return FaultOutcome::resolved;
  Request request{address, access, caller_state};
  Request* head = pending_.load(std::memory_order_relaxed);
  do request.next = head;
  while (!pending_.compare_exchange_weak(head, &request, std::memory_order_release,
                                         std::memory_order_relaxed));
  // The increment comes after the push: a servicer that read the old count
  // before finding the stack empty then finds the futex changed and stays up.
  posted_.fetch_add(1, std::memory_order_release);
  futex_wake(posted_);
  while (request.done.load(std::memory_order_acquire) == 0) futex_wait(request.done, 0);
  return request.outcome;
}

void FaultServicer::run() {
  for (;;) {
    const std::uint32_t seen = posted_.load(std::memory_order_acquire);
    if (Request* list = pending_.exchange(nullptr, std::memory_order_acquire)) {
      serve(list);
      continue;
    }
    if (stopping_.load(std::memory_order_acquire)) return;
    futex_wait(posted_, seen);
  }
}

void FaultServicer::serve(Request* list) {
  // The stack holds the latest fault first: serve in posting order.
  Request* ordered = nullptr;
  while (list) {
    Request* next = list->next;
    list->next = ordered;
    ordered = list;
    list = next;
  }
  while (ordered) {
    Request* request = ordered;
    ordered = request->next;  // read before `done`: the request then vanishes
    request->outcome = resolve_(owner_, request->address, request->access, request->caller_state);
    request->done.store(1, std::memory_order_release);
    futex_wake(request->done);
  }
}

}  // namespace mpidsm::detail
