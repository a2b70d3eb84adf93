// The queues of the locks a home keeps itself. Where every rank is alone on
// its node and reaches every home through messages (tcp), every acquire and
// release of a lock passes through its home's CPU anyway: the home then
// holds the whole queue (who holds the lock, who waits, in order) instead
// of the MCS links between waiters (lock_table.hpp), and hands the lock to
// the next waiter itself when a release arrives. A releasing rank then
// waits for nothing: its release is a one-way call, completed at its next
// flush of the home, and no successor waits on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "dsm/memory/lazy_array.hpp"

namespace mpidsm::detail {

class LockQueues {
 public:
  explicit LockQueues(std::size_t locks) : queues_(locks) {}

  // `rank` asks for lock `id`: true when it holds it now, false when it
  // queued behind the holder and those already waiting.
  bool take(std::size_t id, int rank);
  // `rank`, the holder of `id`, released it: the waiter that holds it now,
  // or -1 when it is free. Aborts when `rank` does not hold it (only a
  // broken peer releases a lock it does not hold).
  int pass(std::size_t id, int rank);

 private:
  // Per lock, zero while it is free: memory only for locks used here.
  struct Queue {
    std::uint32_t holder;       // rank + 1; 0: free
    std::uint32_t first, last;  // waiters' entries + 1 in waiters_; 0: none
  };
  struct Waiter {
    std::uint32_t rank;
    std::uint32_t next;  // the next waiter's entry + 1, or the next free entry + 1
  };
  // Handlers (in the progress thread) and this rank's own acquires and
  // releases share the queues; each holds the mutex for a few instructions.
  std::mutex mutex_;
  LazyArray<Queue> queues_;
  // Every waiter queued here, of every lock; grows (rarely) to the most
  // waiters seen at once, entries reused through the free list.
  std::vector<Waiter> waiters_;
  std::uint32_t free_ = 0;  // the first free entry + 1; 0: none
};

}  // namespace mpidsm::detail
