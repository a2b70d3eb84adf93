// Refetch at a barrier (MPIDSM_BARRIER_REFETCH). Across nodes a miss goes to
// a home that is usually busy elsewhere (computing, or blocked in MPI), so
// its progress thread must wake for it: on a host without a spare CPU that
// costs far more than the transfer. A barrier is the one moment every home
// is inside mpidsm, polling. So the pages a barrier invalidates that this
// rank used in the ending interval (an iterative code's halo rows) are
// fetched again before anyone leaves: after the notices (every diff is home
// by then), before one more collective round that keeps the homes polling
// until every rank has its pages. The home never stops counting the copy,
// so a refetch is a get per run, every home's in flight at once: one round
// trip.
//
// "Used" means fetched in the ending interval (by a miss, its prefetch, or
// the previous barrier's refetch, then touched: the view's page-table entry
// tells, touched_since_mapped). A page refetched and then left alone is not
// refetched again, so a page its home rewrites every interval but this rank
// read once costs one refetch, not one per barrier. A notice the home sent
// only because it cannot tell (kPossiblyWritten) drops the copy without a
// refetch, but keeps the count until the next barrier (keep_counted).
#include <sys/mman.h>

#include <algorithm>

#include "engine.hpp"

namespace mpidsm {

bool Dsm::Engine::used_through_ucx(std::size_t page) {
  if (!barrier_refetch_ || state_[page] != PageState::cached || pinned(page)) return false;
  if (mapped_master_[static_cast<std::size_t>(home_of_page(page))]) return false;  // a memcpy away
  const detail::PageCache::Entry& entry = cache_.entry(page);
  if (entry.fetched_in != epoch_.load(std::memory_order_relaxed)) return false;
  return !entry.refetched || touched_since_mapped(page);
}

void Dsm::Engine::drop_keeping_count(std::size_t page) {
  ++stats_.invalidations;
  protect(page, 1, PROT_NONE);
  leave_cache(page);
}

bool Dsm::Engine::keep_for_refetch(std::size_t page) {
  if (!used_through_ucx(page)) return false;
  drop_keeping_count(page);
  refetch_.push_back(page);
  return true;
}

// The home cannot tell whether it wrote the page (it was writable without
// faults when this rank copied it), so the copy goes without a refetch. Had
// the count gone with it, the home would write the page without faults
// again, and every later notice for it would be such a notice: an
// iterative code's halo row would never be refetched. With the count kept,
// the home tracks its writes from now on.
bool Dsm::Engine::keep_counted(std::size_t page) {
  if (!used_through_ucx(page)) return false;
  drop_keeping_count(page);
  counted_uncached_.push_back(page);
  return true;
}

void Dsm::Engine::drop_uncached_counts(std::vector<std::size_t>& pages) {
  for (std::size_t page : pages)
    if (state_[page] == PageState::invalid && !cache_.contains(page)) drop_registration(page);
  pages.clear();
}

void Dsm::Engine::refetch_kept() {
  auto home_then_page = [&](std::size_t a, std::size_t b) {
    const int home_a = home_of_page(a), home_b = home_of_page(b);
    return home_a != home_b ? home_a < home_b : a < b;
  };
  std::sort(refetch_.begin(), refetch_.end(), home_then_page);
  refetch_batches_.clear();
  for (std::size_t i = 0; i < refetch_.size();) {
    const int home = home_of_page(refetch_[i]);
    std::size_t j = i + 1;
    while (j < refetch_.size() && home_of_page(refetch_[j]) == home) ++j;
    refetch_batches_.push_back({&refetch_[i], j - i, home});
    i = j;
  }
  try {
    fetch_batches(refetch_batches_.data(), refetch_batches_.size(), ViewAfterFetch::watched);
    const std::uint64_t next_interval = epoch_.load(std::memory_order_relaxed) + 1;
    for (std::size_t page : refetch_) {
      detail::PageCache::Entry& entry = cache_.entry(page);
      entry.refetched = true;
      entry.fetched_in = next_interval;
    }
    stats_.barrier_refetches += refetch_.size();
  } catch (const Error&) {
    // Only an optimisation: the pages stay invalid, and an access fetches
    // them as any miss does (and reports the failure if it persists).
    drop_uncached_counts(refetch_);
  }
  refetch_.clear();
}

}  // namespace mpidsm
