// The queues of the locks a home keeps itself. Where every rank is alone on
// its node and reaches every home through messages (tcp), every acquire and
// release of a lock passes through its home's CPU anyway: the home then
// holds the whole queue (who holds the lock, who waits, in order) instead
// of the MCS links between waiters (lock_table.hpp), and hands the lock to
// the next waiter itself when a release arrives. A releasing rank then
// waits for nothing: its release is a one-way call, completed at its next
// flush of the home, and no successor waits on it. Each waiter leaves its
// `Call` (what it asked for) with its place: the home answers it when the
// lock becomes the waiter's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "dsm/memory/lazy_array.hpp"

namespace mpidsm::detail {

template <class Call>
class LockQueues {
 public:
  explicit LockQueues(std::size_t locks) : queues_(locks) {}

  // `rank` asks for lock `id` with `call`: true when it holds it now, false
  // when it queued behind the holder and those already waiting.
  bool take(std::size_t id, int rank, const Call& call);
  // `rank`, the holder of `id`, released it: the waiter that holds it now,
  // with the call it queued with (into `call`), or -1 when it is free.
  // Aborts when `rank` does not hold it (only a broken peer releases a lock
  // it does not hold).
  int pass(std::size_t id, int rank, Call& call);

 private:
  // Per lock, zero while it is free: memory only for locks used here.
  struct Queue {
    std::uint32_t holder;       // rank + 1; 0: free
    std::uint32_t first, last;  // waiters' entries + 1 in waiters_; 0: none
  };
  struct Waiter {
    std::uint32_t rank;
    std::uint32_t next;  // the next waiter's entry + 1, or the next free entry + 1
    Call call;
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

template <class Call>
bool LockQueues<Call>::take(std::size_t id, int rank, const Call& call) {
  std::lock_guard<std::mutex> guard(mutex_);
  Queue& q = queues_[id];
  const auto asker = static_cast<std::uint32_t>(rank) + 1;
  if (q.holder == 0) {
    q.holder = asker;
    return true;
  }
  if (free_ == 0) {
    waiters_.push_back({0, 0, {}});
    free_ = static_cast<std::uint32_t>(waiters_.size());
  }
  const std::uint32_t entry = free_;
  Waiter& w = waiters_[entry - 1];
  free_ = w.next;
  w = {asker - 1, 0, call};
  if (q.last != 0)
    waiters_[q.last - 1].next = entry;
  else
    q.first = entry;
  q.last = entry;
  return false;
}

template <class Call>
int LockQueues<Call>::pass(std::size_t id, int rank, Call& call) {
  std::lock_guard<std::mutex> guard(mutex_);
  Queue& q = queues_[id];
  if (q.holder != static_cast<std::uint32_t>(rank) + 1) {
    std::fprintf(stderr, "mpidsm: rank %d released DSM lock %zu, which rank %d holds\n", rank, id,
                 static_cast<int>(q.holder) - 1);
    std::abort();
  }
  if (q.first == 0) {
    q.holder = 0;
    return -1;
  }
  const std::uint32_t entry = q.first;
  Waiter& w = waiters_[entry - 1];
  q.holder = w.rank + 1;
  q.first = w.next;
  if (q.first == 0) q.last = 0;
  call = w.call;
  w.next = free_;
  free_ = entry;
  return static_cast<int>(q.holder) - 1;
}

}  // namespace mpidsm::detail
