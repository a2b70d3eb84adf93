// The engine's lock, and a per-thread mark of being inside the engine. A
// fault taken while the mark is set (a user's signal handler touching DSM
// memory while this thread runs mpidsm, a fault inside a callback) would wait
// for a lock its own thread holds: the fault handler checks the mark and
// reports the misuse instead of deadlocking.
#pragma once

#include <mutex>

namespace mpidsm::detail {

// Initial-exec TLS: read from the signal handler, where the general dynamic
// model may call into the dynamic loader (which may allocate).
extern thread_local int inside_engine __attribute__((tls_model("initial-exec")));

class EngineLock {
 public:
  explicit EngineLock(std::mutex& mutex) : lock_(mutex) { ++inside_engine; }
  // Only if nobody holds the mutex (owns() tells); the caller must not hold
  // it already (inside_engine is 0 on its thread).
  EngineLock(std::mutex& mutex, std::try_to_lock_t) : lock_(mutex, std::try_to_lock) {
    ++inside_engine;
  }
  bool owns() const { return lock_.owns_lock(); }
  ~EngineLock() { --inside_engine; }
  EngineLock(const EngineLock&) = delete;
  EngineLock& operator=(const EngineLock&) = delete;
  // For condition variables (the mark stays set while waiting: the thread
  // is inside mpidsm all the same).
  std::unique_lock<std::mutex>& held() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace mpidsm::detail
