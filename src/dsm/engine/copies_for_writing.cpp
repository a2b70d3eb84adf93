// A home page written without faults (home_exclusive) that another rank
// fetches to write, through a call this rank answers (page_calls.hpp):
// the home starts tracking it before the copy is read.
#include <sys/mman.h>

#include "engine.hpp"

namespace mpidsm {

// At the home, when a fetch call's handler has counted copies of
// [first, first+count) that their fetcher is about to write, before it reads
// their bytes for the answer: the pages written here without faults become
// read-only first. A write of the home's after that faults and is noticed;
// one before is in the copy. So the release sends no "possibly written"
// notice for them, which would drop the copy its writer still writes
// (jia_is fetched its scattered pages twice for it). Read copies keep that
// notice: it drops them, the reader's next read fetches the page afresh,
// and that fetch marks the page as used in its interval, which is what
// lets later barriers bring it up to date (an iterative code's halo).
//
// The handler runs beside this rank's threads, or on one of them inside
// its own wait. It never waits for the engine: this thread may hold it, or
// another may hold it while it waits for the worker this handler runs in.
// So it acts when the engine is free at once, or when this thread holds it
// only to wait for a fault's fetch (nothing of the engine is half done
// then, and no application store of this thread can come before the fault
// returns); otherwise the pages stay exclusive and are noticed as before.
void Dsm::Engine::track_pages_copied_for_writing(void* engine, std::size_t first,
                                                 std::size_t count) {
  auto& self = *static_cast<Engine*>(engine);
  if (detail::inside_engine != 0) {
    if (self.fetching_for_fault_.load(std::memory_order_relaxed) == this_thread())
      self.track_untracked_home_pages(first, count);
    return;
  }
  const detail::EngineLock guard(self.mutex_, std::try_to_lock);
  if (guard.owns()) self.track_untracked_home_pages(first, count);
}

void Dsm::Engine::track_untracked_home_pages(std::size_t first, std::size_t count) {
  // Only the copy just counted: a copy served earlier, while the page was
  // written without faults, may lack a later write of the home's, which
  // only the "possibly written" notice tells its holder of.
  auto untracked = [&](std::size_t page) {
    return state_[page] == PageState::home_exclusive && !pinned(page) &&
           sharing_.sharers(page) == 1;
  };
  try {
    std::size_t page = first;
    while (page < first + count) {
      if (!untracked(page)) {
        ++page;
        continue;
      }
      const std::size_t run = 1 + pages_following(page, first + count - page - 1, untracked);
      protect(page, run, PROT_READ);
      for (std::size_t q = page; q < page + run; ++q) state_[q] = PageState::home_clean;
      page += run;
    }
  } catch (const Error&) {
    // The view's mappings ran out: the pages stay exclusive, and the
    // release notices them as possibly written.
  }
}

}  // namespace mpidsm
