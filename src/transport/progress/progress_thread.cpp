#include "progress_thread.hpp"

#include <cstdio>

#include "scheduler_slice.hpp"

namespace mpidsm::detail {

ProgressThread::ProgressThread(Transport& transport, std::chrono::microseconds spin,
                               std::chrono::microseconds slice)
    : transport_(transport), spin_(spin), slice_(slice) {
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), "mpidsm-progress");
}

ProgressThread::~ProgressThread() {
  stopping_.store(true, std::memory_order_release);
  transport_.interrupt_sleep();
  thread_.join();
}

// Keeps progressing until the worker has been idle for spin_ (no clock read
// while work keeps coming), or until a thread waiting in the transport
// drives it. Not at all when the node has no CPU to spare: polling would
// then delay the very rank whose operations need this progress (measured
// here: a put+quiet across hosts went from 0.13 ms to 3.9 ms), while a
// thread woken from poll() preempts a spinning one at once.
void ProgressThread::keep_polling() {
  using Clock = std::chrono::steady_clock;
  if (transport_.no_spare_cpu()) return;
  Clock::time_point idle_since = Clock::now();
  while (!stopping_.load(std::memory_order_relaxed) && !transport_.others_progressing()) {
    if (transport_.progress_as_helper()) {
      idle_since = Clock::time_point{};
      continue;
    }
    const Clock::time_point now = Clock::now();
    if (idle_since == Clock::time_point{}) idle_since = now;
    if (now - idle_since >= spin_) return;
  }
}

void ProgressThread::run() {
  if (slice_.count() > 0) request_scheduler_slice(slice_);  // a refusal leaves the default
  try {
    while (!stopping_.load(std::memory_order_acquire)) {
      if (transport_.progress_as_helper()) {
        keep_polling();  // more is likely to follow: a remote rank is active
        continue;
      }
      // Threads waiting inside the transport handle the events that come
      // while they wait; this one sleeps through them.
      transport_.sleep_until_events();
    }
  } catch (const Error& e) {
    // Nothing can propagate out of a thread; report the reason peers will stall.
    std::fprintf(stderr, "%s (progress thread stopped)\n", e.what());
  }
}

}  // namespace mpidsm::detail
