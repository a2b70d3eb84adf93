// With MPIDSM_PROGRESS_THREAD=off the UCX worker is created single-threaded:
// no lock inside UCX, and two threads in it at once corrupt its state (over
// tcp, UCX 1.13 aborts on `worker->inprogress++ == 0`). Every Transport call
// that touches the worker enters this guard, which lets one thread in at a
// time (re-entry by that thread is fine) and reports a second one as an
// Errc::invalid_state error naming both calls, before UCX is touched.
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

 private:
  void enter(const char* operation) {
    const std::thread::id me = std::this_thread::get_id();
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return;
    }
    std::thread::id nobody{};
    if (!owner_.compare_exchange_strong(nobody, me, std::memory_order_acquire))
      throw Error(Errc::invalid_state, rank_,
                  std::string(operation) + ": another thread of this rank is inside mpidsm (" +
                      operation_.load(std::memory_order_relaxed) +
                      ") and MPIDSM_PROGRESS_THREAD=off makes UCX's worker single-threaded: call "
                      "mpidsm from one thread at a time, or leave MPIDSM_PROGRESS_THREAD at "
                      "auto (docs/threading.md)");
    depth_ = 1;
    operation_.store(operation, std::memory_order_relaxed);
  }
  void leave() {
    if (--depth_ == 0) owner_.store(std::thread::id{}, std::memory_order_release);
  }

  bool single_threaded_ = false;
  int rank_ = no_rank;
  std::atomic<std::thread::id> owner_{};
  int depth_ = 0;  // touched by the owner only
  std::atomic<const char*> operation_{""};
};

}  // namespace mpidsm::detail
