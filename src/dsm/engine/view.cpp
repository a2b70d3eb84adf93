// The application view's protection, kept within the process's mapping
// budget (mapping_budget.hpp). A view that would exceed it first unmaps
// everything it can (coalesce): clean copies are dropped, dirty ones written
// home first, and home pages parked (PROT_NONE, mapped again at their next
// access). Pinned pages and the pages being changed stay as they are. The
// view is then a few mappings again, at the cost of refaulting what is used.
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dsm/protocol/page_runs.hpp"
#include "engine.hpp"

namespace mpidsm {

void Dsm::Engine::protect(std::size_t page, std::size_t count, int protection) {
  apply_drops();  // the kernel then changes protections in the order protection_ did
  std::ptrdiff_t change = protection_.change_if(page, count, protection);
  if (!budget_.try_take(change)) {
    coalesce(page, count);
    change = protection_.change_if(page, count, protection);
    if (!budget_.try_take(change))
      throw Error(Errc::no_memory, rank_,
                  "DSM: the view needs more than the " + std::to_string(budget_.limit()) +
                      " mappings this process may use for it (half of what vm.max_map_count "
                      "leaves): pages pinned by transfers and DsmAccess are scattered over " +
                      std::to_string(protection_.mappings()) + " mappings");
  }
  if (protection != PROT_READ) leave_read_only(page, count);
  if (mprotect(view(page), count * page_size_, protection) != 0) {
    const int error = errno;
    budget_.try_take(-change);
    throw Error(Errc::no_memory, rank_,
                "DSM: mprotect of " + std::to_string(count) + " pages at " +
                    detail::describe_address(view(page)) + " failed: " + std::strerror(error) +
                    " (the view holds " + std::to_string(protection_.mappings()) +
                    " mappings; the DSM's budget is " + std::to_string(budget_.limit()) + ")");
  }
  if (protection == PROT_READ) guards_.view_read_only(page, count);
  protection_.set(page, count, protection);
  ++protection_changes_;
  ++stats_.view_protections;
}

// Read-only pages of [first, first+count) about to change protection: those
// storing into them at this home (master_guards.hpp) stop storing whole
// vectors before the view may let a store in.
void Dsm::Engine::leave_read_only(std::size_t first, std::size_t count) {
  for (std::size_t page = first; page < first + count; ++page)
    if (protection_.at(page) == PROT_READ) guards_.view_leaves_read_only(page);
}

// An acquire drops copies in the order its notices name them, one page at
// a time. Linux flushes the TLB page by page for a change of up to 33 pages
// (tlb_single_page_flush_ceiling), and once for a longer one: in a PVM
// guest each page's flush exits to the hypervisor, which made an mprotect
// of one page cost 7.6 us and one of 64 pages 0.75 us per page. jia_lu's
// barriers dropped its 60-page panels one page at a time, 1.1 ms per
// barrier. So inside a DropBatch the bookkeeping changes at once (a second
// notice of the page sees it dropped) and the system calls wait for the
// batch's end, sorted into runs. Until then the view still lets the
// dropped copies be read: only the thread in the acquire holds the engine,
// and another thread reading them meanwhile races the acquire anyway. A
// writable copy leaves at once: a store into it after its diff went home
// would be lost with it.
void Dsm::Engine::drop_view(std::size_t page) {
  if (drop_batches_ == 0 || protection_.at(page) != PROT_READ) return protect(page, 1, PROT_NONE);
  const std::ptrdiff_t change = protection_.change_if(page, 1, PROT_NONE);
  if (!budget_.try_take(change)) return protect(page, 1, PROT_NONE);  // coalesces
  leave_read_only(page, 1);
  protection_.set(page, 1, PROT_NONE);
  ++protection_changes_;
  drops_.push_back(page);
}

// The view would otherwise let a rank read a copy its bookkeeping dropped,
// stale data nothing would ever correct: a refusal here ends the process.
// mprotect refuses a drop only when out of memory for a mapping split,
// which the mapping budget keeps away.
void Dsm::Engine::apply_drops() noexcept {
  if (drops_.empty()) return;
  std::sort(drops_.begin(), drops_.end());
  detail::for_each_run(drops_.data(), drops_.size(), [&](std::size_t first, std::size_t count) {
    ++stats_.view_protections;
    if (mprotect(view(first), count * page_size_, PROT_NONE) == 0) return;
    std::fprintf(stderr, "mpidsm: rank %d: mprotect dropping %zu DSM pages at %p failed: %s\n",
                 rank_, count, static_cast<void*>(view(first)), std::strerror(errno));
    std::abort();
  });
  drops_.clear();
}

void Dsm::Engine::coalesce(std::size_t keep_first, std::size_t keep_count) {
  apply_drops();
  ++stats_.mapping_resets;
  auto droppable = [&](std::size_t page) {
    if (protection_.at(page) == PROT_NONE || pinned(page)) return false;
    if (page >= keep_first && page < keep_first + keep_count) return false;
    // A cached page still invalid belongs to a batch being fetched.
    return state_[page] != PageState::invalid;
  };
  // Mapped pages lie in chunks whose protection changed; the rest are
  // PROT_NONE and never read.
  auto give_back = [&](std::size_t begin, std::size_t last) {
    for (std::size_t page = begin; page < last;) {
      if (!droppable(page)) {
        ++page;
        continue;
      }
      std::size_t end = page + 1;
      while (end < last && droppable(end)) ++end;
      // Nothing writes these pages from here on; the budget may be exceeded
      // for this one call, which gives back far more than it takes.
      leave_read_only(page, end - page);
      if (mprotect(view(page), (end - page) * page_size_, PROT_NONE) != 0)
        throw Error(Errc::no_memory, rank_,
                    std::string("DSM: mprotect while giving mappings back failed: ") +
                        std::strerror(errno));
      budget_.try_take(protection_.change_if(page, end - page, PROT_NONE), true);
      protection_.set(page, end - page, PROT_NONE);
      ++protection_changes_;
      ++stats_.view_protections;
      for (; page < end; ++page) {
        switch (state_[page]) {
          case PageState::dirty:
            write_diff(page, true);
            [[fallthrough]];
          case PageState::cached:
            forget_copy(page);
            break;
          case PageState::home_exclusive:
            // Written without notices so far: a copy made meanwhile needs one.
            if (sharing_.sharers(page) != 0) record_notice(page, true);
            state_[page] = PageState::home_parked;
            break;
          case PageState::home_dirty:
            record_home_notice(page);
            [[fallthrough]];
          default:
            state_[page] = PageState::home_parked;
        }
      }
    }
  };
  detail::for_each_used_range(0, pages_, {&protection_.used()}, give_back);
  flush_written_homes();
}

}  // namespace mpidsm
