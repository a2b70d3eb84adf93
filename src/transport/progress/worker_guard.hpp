// With MPIDSM_PROGRESS_THREAD=off the UCX worker is created single-threaded:
// no lock inside UCX, and two threads in it at once corrupt its state (over
// tcp, UCX 1.13 aborts on `worker->inprogress++ == 0`). Every Transport call
// that touches the worker enters this guard, which lets one thread in at a
// time (re-entry by that thread is fine) and reports a second one as an
// Errc::invalid_state error naming both calls, before UCX is touched.
// Open MPI's progress loop borrows the worker (MpiProgressHook) only when
// nobody is inside, and a thread that finds it borrowed waits for the
// borrower's single poll instead of failing: a rank blocked in MPI serves
// its peers without making the application's own calls fail.
// A multi-threaded worker needs no guard: entering costs one load then.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {

class WorkerGuard {
 public:
  void enable_single_threaded(int rank) {
    rank_ = rank;
    single_threaded_ = true;
  }

  class Use {
   public:
    Use(WorkerGuard& guard, const char* operation) {
      if (!guard.single_threaded_) return;
      guard.enter(operation);
      guard_ = &guard;
    }
    ~Use() {
      if (guard_) guard_->leave();
    }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    WorkerGuard* guard_ = nullptr;
  };

  bool single_threaded() const { return single_threaded_; }

  // For MPI's progress loop: enters when no thread is inside (true; leave()
  // ends it), else false, as the thread inside drives the worker itself.
  bool try_borrow() { return claim("Open MPI's progress loop", kBorrowed) == 0; }
  void give_back() { leave(); }

 private:
  // The holder is MPI's progress loop (lowest bit of owner_).
  static constexpr std::uintptr_t kBorrowed = 1;
  // Identifies the calling thread: the address of a thread_local int, whose
  // lowest bit is clear.
  static std::uintptr_t this_thread_token() noexcept {
    static thread_local int anchor = 0;
    return reinterpret_cast<std::uintptr_t>(&anchor);
  }

  void enter(const char* operation) {
    if ((owner_.load(std::memory_order_relaxed) & ~kBorrowed) == this_thread_token()) {
      ++depth_;
      return;
    }
    // A borrower leaves after one poll of the worker; anyone else is a
    // second thread inside. Whether the holder borrows is read by the same
    // compare-exchange that found the worker taken, so a borrower that
    // leaves meanwhile is never mistaken for a second thread.
    for (std::uintptr_t holder; (holder = claim(operation, 0)) != 0; std::this_thread::yield())
      if ((holder & kBorrowed) == 0)
        throw Error(Errc::invalid_state, rank_,
                    std::string(operation) + ": another thread of this rank is inside mpidsm (" +
                        operation_.load(std::memory_order_relaxed) +
                        ") and MPIDSM_PROGRESS_THREAD=off makes UCX's worker single-threaded: "
                        "call mpidsm from one thread at a time, or leave "
                        "MPIDSM_PROGRESS_THREAD at auto (docs/threading.md)");
  }
  // Takes the worker for this thread when nobody holds it: 0, or the
  // holder's owner_ value.
  std::uintptr_t claim(const char* operation, std::uintptr_t borrowed) {
    std::uintptr_t holder = 0;
    if (!owner_.compare_exchange_strong(holder, this_thread_token() | borrowed,
                                        std::memory_order_acquire))
      return holder;
    depth_ = 1;
    operation_.store(operation, std::memory_order_relaxed);
    return 0;
  }
  void leave() {
    if (--depth_ == 0) owner_.store(0, std::memory_order_release);
  }

  bool single_threaded_ = false;
  int rank_ = no_rank;
  std::atomic<std::uintptr_t> owner_{0};  // 0: nobody
  int depth_ = 0;                         // touched by the owner only
  std::atomic<const char*> operation_{""};
};

}  // namespace mpidsm::detail
