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
  bool try_borrow() {
    // Counted before the claim, so a thread that finds the worker taken
    // knows a borrower may hold it.
    borrowers_.fetch_add(1, std::memory_order_seq_cst);
    if (claim("Open MPI's progress loop")) return true;
    borrowers_.fetch_sub(1, std::memory_order_release);
    return false;
  }
  void give_back() {
    leave();
    borrowers_.fetch_sub(1, std::memory_order_release);
  }

 private:
  void enter(const char* operation) {
    if (owner_.load(std::memory_order_relaxed) == std::this_thread::get_id()) {
      ++depth_;
      return;
    }
    while (!claim(operation)) {
      // A borrower leaves after one poll of the worker; anyone else is a
      // second thread inside.
      if (borrowers_.load(std::memory_order_seq_cst) == 0)
        throw Error(Errc::invalid_state, rank_,
                    std::string(operation) + ": another thread of this rank is inside mpidsm (" +
                        operation_.load(std::memory_order_relaxed) +
                        ") and MPIDSM_PROGRESS_THREAD=off makes UCX's worker single-threaded: "
                        "call mpidsm from one thread at a time, or leave "
                        "MPIDSM_PROGRESS_THREAD at auto (docs/threading.md)");
      std::this_thread::yield();
    }
  }
  // Takes the worker for this thread when nobody holds it.
  bool claim(const char* operation) {
    std::thread::id nobody{};
    if (!owner_.compare_exchange_strong(nobody, std::this_thread::get_id(),
                                        std::memory_order_acquire))
      return false;
    depth_ = 1;
    operation_.store(operation, std::memory_order_relaxed);
    return true;
  }
  void leave() {
    if (--depth_ == 0) owner_.store(std::thread::id{}, std::memory_order_release);
  }

  bool single_threaded_ = false;
  int rank_ = no_rank;
  std::atomic<std::thread::id> owner_{};
  int depth_ = 0;  // touched by the owner only
  std::atomic<const char*> operation_{""};
  std::atomic<int> borrowers_{0};  // MPI progress loops claiming or holding the worker
};

}  // namespace mpidsm::detail
