#include "fork_guard.hpp"

#include <pthread.h>

#include <mutex>
#include <string>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {

std::atomic<bool> forked_child{false};

void watch_for_fork() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, [] { forked_child.store(true); }); });
}

void refuse_in_forked_child(int rank, const char* operation) {
  throw Error(Errc::invalid_state, rank,
              std::string(operation) +
                  ": mpidsm was used in a child process after fork(), which it does not "
                  "support (the child is not a rank of the runtime): use it in the parent only, "
                  "or exec() in the child");
}

}  // namespace mpidsm::detail
