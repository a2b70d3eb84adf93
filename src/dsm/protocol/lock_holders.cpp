#include "lock_holders.hpp"

#include <string>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {

void LockHolders::claim(std::size_t id, bool wait_for_threads,
                        std::unique_lock<std::mutex>& guard) {
  const std::thread::id me = std::this_thread::get_id();
  while (held_[id]) {
    if (holder_[id] == me)
      throw Error(Errc::invalid_state, rank_,
                  "Dsm::lock: lock " + std::to_string(id) +
                      " is already held by this thread (DSM locks are not recursive)");
    if (!wait_for_threads)
      throw Error(Errc::invalid_state, rank_,
                  "Dsm::lock: lock " + std::to_string(id) +
                      " is held by another thread of this rank; DSM locks belong to the "
                      "rank: threads that share lock ids use Dsm::lock_among_threads or "
                      "mpidsm::DsmThreadMutex, which wait for each other");
    unclaimed_.wait(guard);
  }
  held_[id] = true;  // also keeps a second thread of this rank out of the queue
  holder_[id] = me;
}

bool LockHolders::claim_for_rank(std::size_t id) {
  if (held_[id]) return false;
  held_[id] = true;
  holder_[id] = std::thread::id();
  return true;
}

void LockHolders::unclaim(std::size_t id) {
  held_[id] = false;
  unclaimed_.notify_all();
}

}  // namespace mpidsm::detail
