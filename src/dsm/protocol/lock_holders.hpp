// Which DSM locks this rank holds, and which of its threads holds each. DSM
// locks belong to the rank (the queue at the home has one place per rank),
// so the rank's threads settle among themselves who may join it: a second
// thread asking for a lock its rank holds either waits for the first to
// unlock, or is told, rather than queueing behind its own rank. The
// engine's mutex guards every call; waits release it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

#include "dsm/memory/lazy_array.hpp"

namespace mpidsm::detail {

class LockHolders {
 public:
  LockHolders(std::size_t locks, int rank) : held_(locks), holder_(locks), rank_(rank) {}

  // Waits (releasing `guard`) until no thread of this rank holds or is
  // acquiring `id`, then claims it for the calling thread. Errc::invalid_state
  // when this thread holds it already (DSM locks are not recursive), or
  // another thread does and `wait_for_threads` is false.
  void claim(std::size_t id, bool wait_for_threads, std::unique_lock<std::mutex>& guard);
  // Claims `id` for this rank without a thread (a lock an abandoned wait
  // was granted, which the rank passes on); false when it is claimed already.
  bool claim_for_rank(std::size_t id);
  // The claim of `id` ended (released, or its acquire failed): a waiting
  // thread may claim it.
  void unclaim(std::size_t id);
  bool claimed(std::size_t id) const { return held_[id] != 0; }

  // A claimed lock was granted: it counts as held until released().
  void granted() { ++held_count_; }
  // A held lock is released; true when it was the last one held.
  bool released() { return --held_count_ == 0; }
  // Whether this rank holds any lock (a barrier then cannot end).
  bool any_held() const { return held_count_ > 0; }

 private:
  LazyArray<std::uint8_t> held_;       // per lock id: claimed by this rank
  LazyArray<std::thread::id> holder_;  // per lock id: the thread that claimed it
  std::condition_variable unclaimed_;
  std::size_t held_count_ = 0;
  int rank_;
};

}  // namespace mpidsm::detail
