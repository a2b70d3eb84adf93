#include "lock_queues.hpp"

#include <cstdio>
#include <cstdlib>

namespace mpidsm::detail {

bool LockQueues::take(std::size_t id, int rank) {
  std::lock_guard<std::mutex> guard(mutex_);
  Queue& q = queues_[id];
  const auto asker = static_cast<std::uint32_t>(rank) + 1;
  if (q.holder == 0) {
    q.holder = asker;
    return true;
  }
  if (free_ == 0) {
    waiters_.push_back({0, 0});
    free_ = static_cast<std::uint32_t>(waiters_.size());
  }
  const std::uint32_t entry = free_;
  Waiter& w = waiters_[entry - 1];
  free_ = w.next;
  w = {asker - 1, 0};
  if (q.last != 0)
    waiters_[q.last - 1].next = entry;
  else
    q.first = entry;
  q.last = entry;
  return false;
}

int LockQueues::pass(std::size_t id, int rank) {
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
  w.next = free_;
  free_ = entry;
  return static_cast<int>(q.holder) - 1;
}

}  // namespace mpidsm::detail
