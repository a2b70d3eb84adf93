// Fault resolution, fetching into the bounded cache, twins, and pins.
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "dsm/protocol/page_runs.hpp"
#include "engine.hpp"
#include "prefetch.hpp"

namespace mpidsm {
namespace {

// The last fault a thread found nothing to change for. A second such fault
// at the same address with no mapping changed in between is one no
// protection explains.
struct UnexplainedFault {
  const void* address = nullptr;
  std::uint64_t at = 0;  // Engine::protection_changes_ then
};
// Initial-exec TLS: read in the signal handler.
thread_local UnexplainedFault last_unexplained __attribute__((tls_model("initial-exec")));

// Names the thread that waits for a fault's fetch while it waits.
class FetchingForFault {
 public:
  FetchingForFault(std::atomic<const void*>& marker, const void* thread) : marker_(marker) {
    marker_.store(thread, std::memory_order_relaxed);
  }
  ~FetchingForFault() { marker_.store(nullptr, std::memory_order_relaxed); }
  FetchingForFault(const FetchingForFault&) = delete;
  FetchingForFault& operator=(const FetchingForFault&) = delete;

 private:
  std::atomic<const void*>& marker_;
};

}  // namespace

const void* Dsm::Engine::this_thread() {
  return &last_unexplained;
}

// Runs in the SIGSEGV handler of the faulting thread: in place when no
// step can reach UCX, otherwise through the fault servicer (a detour out of
// the handler, or its thread). Even with a servicer, a fault on a page that
// is not invalid (a write to a cached copy or to a tracked home page, a
// parked home page) needs only a twin and an mprotect, and is resolved in
// place: a detour costs a system call, and a thread hand-off two thread
// wake-ups (on a node without a spare CPU a woken servicer may wait a whole
// time slice for one).
detail::FaultOutcome Dsm::Engine::handle_fault(void* address, detail::FaultAccess access,
                                               void* context) {
  if (runtime_alive_.expired()) {
    std::fprintf(stderr,
                 "mpidsm[rank %d]: DSM memory at %p was touched after its Runtime was "
                 "finalized; it cannot be fetched any more\n",
                 rank_, address);
    return detail::FaultOutcome::not_ours;
  }
  if (!fault_servicer_) return resolve_fault(this, address, access, &last_unexplained);
  if (auto outcome = resolve_in_place(address, access, &last_unexplained, true)) return *outcome;
  return fault_servicer_->resolve(address, access, &last_unexplained, context);
}

// Nothing may be thrown out of a signal handler, or out of the servicer's
// thread: an error means the access can never complete, so it is reported
// as mpidsm reports errors and the process aborts.
detail::FaultOutcome Dsm::Engine::resolve_fault(void* engine, void* address,
                                                detail::FaultAccess access,
                                                void* faulting_thread) noexcept {
  return *static_cast<Engine*>(engine)->resolve_in_place(address, access, faulting_thread, false);
}

// With `on_node_only`, leaves an invalid page (its fetch or first touch may
// need UCX) to the caller: nullopt.
std::optional<detail::FaultOutcome> Dsm::Engine::resolve_in_place(void* address,
                                                                  detail::FaultAccess access,
                                                                  void* faulting_thread,
                                                                  bool on_node_only) noexcept {
  auto& self = *this;
  auto& unexplained = *static_cast<UnexplainedFault*>(faulting_thread);
  try {
    detail::EngineLock guard(self.mutex_);
    self.note_thread(faulting_thread);
    const std::size_t page = self.page_of(address);
    if (on_node_only && self.state_[page] == PageState::invalid) return std::nullopt;
    const detail::FaultOutcome outcome = self.resolve(page, access);
    if (outcome == detail::FaultOutcome::not_ours && self.allocations_.placed_home(page) == -1)
      self.report_stray_access(address, access);
    if (outcome != detail::FaultOutcome::already_accessible) {
      unexplained.address = nullptr;
      return outcome;
    }
    // Usually another thread mapped the page while this one waited: retry.
    if (unexplained.address == address && unexplained.at == self.protection_changes_) {
      std::fprintf(stderr,
                   "mpidsm[rank %d]: a fault at %p in DSM memory persists although the page is "
                   "mapped for that access (an instruction fetch, or an access no protection "
                   "explains)\n",
                   self.rank_, address);
      unexplained.address = nullptr;
      return detail::FaultOutcome::not_ours;
    }
    unexplained = {address, self.protection_changes_};
    return detail::FaultOutcome::already_accessible;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s (while resolving a DSM fault at %p: the access cannot complete)\n",
                 e.what(), address);
    std::abort();
  }
}

// One line before the crash goes on to the previous handler (UCX's report
// or the default action), so the user sees that the address was DSM memory
// no allocation covers, and which allocation it was near.
void Dsm::Engine::report_stray_access(const void* address, detail::FaultAccess access) const {
  const char* what = access == detail::FaultAccess::write  ? "a store to"
                     : access == detail::FaultAccess::read ? "a load from"
                                                           : "an access to";
  const auto nearest = allocations_.nearest(page_of(address));
  if (!nearest) {
    std::fprintf(stderr,
                 "mpidsm[rank %d]: %s DSM address %p, which no allocation covers: the DSM region "
                 "holds none\n",
                 rank_, what, address);
    return;
  }
  const auto* begin = reinterpret_cast<const char*>(view(nearest->first));
  const auto* end = reinterpret_cast<const char*>(view(nearest->first + nearest->pages));
  const auto* at = static_cast<const char*>(address);
  char relation[64] = "which covered it";
  if (at < begin)
    std::snprintf(relation, sizeof relation, "which starts %zu bytes after it",
                  static_cast<std::size_t>(begin - at));
  else if (at >= end)
    std::snprintf(relation, sizeof relation, "which ends %zu bytes before it",
                  static_cast<std::size_t>(at - end));
  std::fprintf(stderr,
               "mpidsm[rank %d]: %s DSM address %p, which no live allocation covers: the nearest "
               "allocation is [%p, %p) (%zu bytes, %s), %s\n",
               rank_, what, address, static_cast<const void*>(begin), static_cast<const void*>(end),
               static_cast<std::size_t>(end - begin), nearest->freed ? "freed" : "live", relation);
}

// What the view of a page in each state allows.
int Dsm::Engine::protection_of(PageState state) {
  switch (state) {
    case PageState::cached:
    case PageState::home_clean:
      return PROT_READ;
    case PageState::dirty:
    case PageState::home_dirty:
    case PageState::home_exclusive:
      return PROT_READ | PROT_WRITE;
    default:
      return PROT_NONE;
  }
}

detail::FaultOutcome Dsm::Engine::resolve(std::size_t page, detail::FaultAccess access) {
  using detail::FaultAccess;
  using detail::FaultOutcome;
  // A step that failed part-way (an error in a release) may have left the
  // view more restrictive than the page's state: the state is the truth.
  if (const int needed = protection_of(state_[page]);
      needed != PROT_NONE && protection_.at(page) != needed) {
    protect(page, 1, needed);
    return FaultOutcome::resolved;
  }
  switch (state_[page]) {
    case PageState::invalid: {
      int home = home_of_page(page);
      if (home == -1) return FaultOutcome::not_ours;    // no allocation: a real crash
      const bool write = access == FaultAccess::write;  // unknown: read first, a write refaults
      ++(write ? stats_.write_faults : stats_.read_faults);
      if (write) note_write(page);
      if (home == detail::HomeDirectory::undecided) home = directory_.claim(page);
      if (home == rank_) {  // first touch: this rank's zero page is the master
        become_home(page);
        return FaultOutcome::resolved;
      }
      // A write miss gets its twin before the view becomes writable (one
      // mprotect), so no other thread's write can slip in before the twin.
      const std::size_t count = [&] {
        const FetchingForFault marked(fetching_for_fault_, this_thread());
        return fetch(page, home, write);
      }();
      if (write) make_twins(page, count);  // a write batch is consecutive
      return FaultOutcome::resolved;
    }
    case PageState::home_parked:
      ++(access == FaultAccess::write ? stats_.write_faults : stats_.read_faults);
      if (access == FaultAccess::write) note_write(page);
      map_home(page, access == FaultAccess::write);
      return FaultOutcome::resolved;
    case PageState::cached:
    case PageState::home_clean:
      // A readable page faults only for a write, or after another thread
      // mapped it while this one waited (which x86 tells apart).
      if (access == FaultAccess::read) return FaultOutcome::already_accessible;
      ++stats_.write_faults;
      note_write(page);
      if (state_[page] == PageState::home_clean) {
        map_home(page, true);
        if (state_[page] == PageState::home_exclusive) free_following_home_pages(page);
      } else {
        write_cached(page);
      }
      return FaultOutcome::resolved;
    case PageState::dirty:
    case PageState::home_dirty:
    case PageState::home_exclusive:
      return FaultOutcome::already_accessible;
  }
  return FaultOutcome::not_ours;
}

// A home page becomes accessible again: writable without tracking when no
// other rank holds a copy, otherwise tracked (read-only until written).
void Dsm::Engine::map_home(std::size_t page, bool write) {
  if (sharing_.sharers(page) == 0) {
    protect(page, 1, PROT_READ | PROT_WRITE);
    state_[page] = PageState::home_exclusive;
  } else if (write) {
    mark_dirty(page, PageState::home_dirty);
  } else {
    protect(page, 1, PROT_READ);
    state_[page] = PageState::home_clean;
  }
}

// The first write to a cached copy: its twin, then writable. Along a write
// stream (the page right after the previous write miss), the directly
// following cached pages (up to write_ahead_pages()) are twinned and made
// writable with it, in one mprotect, as a stream of write misses fetches
// ahead (fetch()).
void Dsm::Engine::write_cached(std::size_t page) {
  // A single_writer page is written home whole: one not written must not be.
  auto cached = [&](std::size_t q) {
    return state_[q] == PageState::cached && !pinned(q) &&
           policy_of_page(q) != Coherence::single_writer;
  };
  const std::size_t count =
      1 + (streams_.continues(page, true) ? pages_following(page, write_ahead_pages(), cached) : 0);
  for (std::size_t q = page; q < page + count; ++q) {
    settle_prefetch(q, q == page);
    cache_.touch(q);
  }
  make_twins(page, count);
  streams_.advance(true, page, page + count);
}

// A home page written after its last copy elsewhere was dropped became
// exclusive: the pages after it in the same state (read-only only because
// copies existed at the last release) become exclusive with it, in one
// mprotect, so a stream of writes over them (a rank rewriting its part)
// takes one fault, not one per page. No notice is lost: nobody holds them.
void Dsm::Engine::free_following_home_pages(std::size_t page) {
  const std::size_t count = pages_following(page, write_ahead_pages(), [&](std::size_t q) {
    return state_[q] == PageState::home_clean && !pinned(q) && sharing_.sharers(q) == 0;
  });
  if (count == 0) return;
  protect(page + 1, count, PROT_READ | PROT_WRITE);
  for (std::size_t q = page + 1; q <= page + count; ++q) state_[q] = PageState::home_exclusive;
}

std::size_t Dsm::Engine::fetch(std::size_t page, int home, bool for_write) {
  std::size_t count = 1;
  batch_[0] = page;
  // Prefetch serves misses along a stream only (prefetch.hpp).
  // A read stream takes the following pages of the same home; a write
  // stream only the directly following ones, all made writable with twins
  // (a page then left unwritten costs a twin and a compare, no diff).
  // The batch never exceeds the cache room that pinned pages leave.
  const std::size_t room = cache_room();
  const std::size_t ahead = std::min(batch_.size(), room) - std::min<std::size_t>(1, room);
  auto wanted = [&](std::size_t q) {
    return state_[q] == PageState::invalid && home_of_page(q) == home;
  };
  const Coherence policy = policy_of_page(page);
  if (for_write && ahead > 0 && policy != Coherence::single_writer &&
      streams_.continues(page, true)) {
    auto also_written = [&](std::size_t q) {
      return wanted(q) && policy_of_page(q) != Coherence::single_writer;
    };
    for (const std::size_t n = 1 + pages_following(page, ahead, also_written); count < n; ++count)
      batch_[count] = page + count;
  } else if (!for_write && ahead > 0 &&
             (policy == Coherence::read_mostly || streams_.continues(page, false))) {
    // A read_mostly miss copies what follows it at once: every rank reads it.
    count =
        detail::select_prefetch(page, pages_, ahead, max_checking_pages_, wanted, batch_.data());
  }
  fetch_batch(batch_.data(), count, home,
              for_write ? ViewAfterFetch::left : ViewAfterFetch::readable);
  stats_.prefetched += count - 1;
  streams_.advance(for_write, page, batch_[count - 1] + 1);
  if (!for_write)
    for (std::size_t i = 1; i < count; ++i) cache_.entry(batch_[i]).prefetched = true;
  return count;
}

void Dsm::Engine::fetch_batch(const std::size_t* pages, std::size_t count, int home,
                              ViewAfterFetch after) {
  const HomeBatch batch{pages, count, home};
  fetch_batches(&batch, 1, after);
}

// Asks the batch's home for its pages, a call per run of pages whose copies
// it counts alike (a page kept for a barrier's refetch is counted already).
void Dsm::Engine::ask_home(const HomeBatch& b, bool for_writing) {
  for (std::size_t i = 0; i < b.count;) {
    const bool count_copies = !sharing_.holds_copy(b.pages[i]);
    std::size_t j = i + 1;
    while (j < b.count && b.pages[j] == b.pages[j - 1] + 1 &&
           sharing_.holds_copy(b.pages[j]) != count_copies)
      ++j;
    for (std::size_t k = i; k < j; ++k) sharing_.take_copy(b.pages[k]);
    page_calls_.ask(b.home, b.pages[i], j - i, count_copies, for_writing, gets_);
    i = j;
  }
}

// Gets each batch's pages (increasing, all invalid, all homed at the batch's
// home) into the master view, which UCX may write without faulting: one get
// (or, with PageCalls, one call the home answers with the pages) per
// contiguous run, every batch's gets in flight together, each awaited
// by its own request: over tcp a flush after a get costs another round trip
// (a refetch at a barrier took 44 us with the flush, 28 without). The
// updates that count the copies at the home need no flush either: they are
// fenced before the gets, so a completed get means they were performed.
// Then the application's view becomes readable (unless `after` leaves that
// to the caller). On an error the pages leave the cache again, still invalid.
void Dsm::Engine::fetch_batches(const HomeBatch* batches, std::size_t count, ViewAfterFetch after) {
  const std::span<const HomeBatch> all(batches, count);
  std::size_t pages = 0;
  for (const HomeBatch& b : all) pages += b.count;
  make_room(pages);
  for (const HomeBatch& b : all)
    for (std::size_t i = 0; i < b.count; ++i) cache_.insert(b.pages[i]);
  auto direct = [&](const HomeBatch& b) {
    return mapped_master_[static_cast<std::size_t>(b.home)];
  };
  const bool remote = std::ranges::any_of(all, [&](const HomeBatch& b) { return !direct(b); });
  const std::uint64_t start = remote ? detail::TickClock::now() : 0;
  try {
    for (const HomeBatch& b : all) {
      if (!direct(b) && page_calls_.used()) {
        ask_home(b, after == ViewAfterFetch::left);
        continue;
      }
      // The home counts these copies before they are read: through UCX a
      // fence orders the gets after the updates.
      const bool updates_in_flight = sharing_.add_copies(b.home, b.pages, b.count);
      if (std::byte* mapped = direct(b)) {
        if (updates_in_flight) transport_.flush(b.home);
        detail::for_each_run(b.pages, b.count, [&](std::size_t first, std::size_t length) {
          std::memcpy(master(first), mapped + first * page_size_, length * page_size_);
        });
      } else {
        detail::for_each_run(b.pages, b.count, [&](std::size_t first, std::size_t length) {
          gets_.push_back(transport_.get_nb(b.home, master_, first * page_size_, master(first),
                                            length * page_size_));
        });
      }
    }
    for (Request& get : gets_) get.wait();
    page_calls_.check_answers(gets_);
    gets_.clear();
    if (remote) {
      ++stats_.fetch_waits;
      fetch_wait_ticks_ += detail::TickClock::now() - start;
    }
    for (const HomeBatch& b : all) {
      if (after == ViewAfterFetch::left) break;
      detail::for_each_run(b.pages, b.count, [&](std::size_t first, std::size_t length) {
        // Watched pages lose the view's page-table entries, so the kernel
        // shows which of them get touched (touched_since_mapped; the cost is
        // a minor fault per used page, about 1 us here). Prefetched pages
        // are watched only with statistics on.
        if (after == ViewAfterFetch::watched || (b.count > 1 && track_prefetch_use_))
          madvise(view(first), length * page_size_, MADV_DONTNEED);
        protect(first, length, PROT_READ);
      });
    }
  } catch (...) {
    gets_.clear();  // each waits for its get: the pages are not written after this
    page_calls_.clear();
    for (const HomeBatch& b : all)
      for (std::size_t i = 0; i < b.count; ++i)
        if (cache_.contains(b.pages[i])) {
          if (protection_.at(b.pages[i]) != PROT_NONE) protect(b.pages[i], 1, PROT_NONE);
          forget_copy(b.pages[i]);
        }
    throw;
  }
  for (const HomeBatch& b : all) {
    for (std::size_t i = 0; i < b.count; ++i) cache_fetched(b.pages[i], !direct(b));
    stats_.pages_fetched += b.count;
  }
}

void Dsm::Engine::cache_fetched(std::size_t page, bool through_ucx) {
  state_[page] = PageState::cached;
  cache_.entry(page).fetched_in = epoch_.load(std::memory_order_relaxed);
  if (through_ucx) updates_.note_fetched(page);
  note_refetch(page);
}

// Cache slots a fetch may use: all but those pinned pages hold.
std::size_t Dsm::Engine::cache_room() const {
  const std::size_t pinned = pins_.remote_pinned();
  return cache_.capacity() > pinned ? cache_.capacity() - pinned : 0;
}

// Frees cache slots until `slots` are free: the least recently faulted
// pages are written home if dirty, then dropped. Pinned pages, and pages of
// a batch being fetched (still invalid), are skipped (made recent); pin()
// keeps pinned pages below the capacity and fetches stay within
// cache_room(), so victims exist: the bound only guards that promise.
void Dsm::Engine::make_room(std::size_t slots) {
  while (cache_.capacity() - cache_.size() < slots) {
    for (std::size_t tries = 0;
         pinned(cache_.oldest()) || state_[cache_.oldest()] == PageState::invalid; ++tries) {
      if (tries == cache_.capacity())
        throw Error(Errc::no_memory, rank_,
                    "DSM: every cached page is in use by a transfer (MPIDSM_CACHE_PAGES=" +
                        std::to_string(cache_.capacity()) + ")");
      cache_.touch(cache_.oldest());
    }
    drop_cached(cache_.oldest());
    ++stats_.evictions;
  }
}

// A cached page (clean or dirty, not pinned) leaves the cache: its changes
// go home first, its home stops counting this copy.
void Dsm::Engine::drop_cached(std::size_t page) {
  if (state_[page] == PageState::dirty) {
    write_diff(page);
    flush_written_homes();
  }
  drop_view(page);
  forget_copy(page);
}

// This rank's copy of a remote page is gone (its view no longer mapped): the
// cache slot is freed and the page's home stops counting the copy.
void Dsm::Engine::forget_copy(std::size_t page) {
  leave_cache(page);
  drop_registration(page);
}

// The cache slot of a page whose view is no longer mapped is freed; its home
// still counts the copy (drop_registration ends that).
void Dsm::Engine::leave_cache(std::size_t page) {
  settle_prefetch(page);
  state_[page] = PageState::invalid;
  reuse_[page] &= static_cast<std::uint8_t>(~kRewrittenUnderLocks);  // a new copy starts afresh
  cache_.erase(page);
}

void Dsm::Engine::drop_registration(std::size_t page) {
  if (!sharing_.holds_copy(page)) return;  // most pages of a freed allocation: no lookup
  const int home = home_of_page(page);
  if (sharing_.drop_copy(home, page)) homes_written_[static_cast<std::size_t>(home)] = true;
}

// Twins for the cached pages [first, first+count), then one mprotect makes
// them all writable (after their twins: no write can slip in before).
void Dsm::Engine::make_twins(std::size_t first, std::size_t count) {
  for (std::size_t page = first; page < first + count; ++page) {
    if (policy_of_page(page) == Coherence::single_writer) continue;  // written home whole
    cache_.entry(page).twinned_ahead = page != first;
    cache_.entry(page).twin = twins_.take();
    std::memcpy(twin(page), master(page), page_size_);
  }
  try {
    protect(first, count, PROT_READ | PROT_WRITE);
  } catch (...) {
    for (std::size_t page = first; page < first + count; ++page) drop_twin(page);
    throw;
  }
  for (std::size_t page = first; page < first + count; ++page) set_dirty(page, PageState::dirty);
}

void Dsm::Engine::drop_twin(std::size_t page) {
  std::int32_t& slot = cache_.entry(page).twin;
  if (slot == detail::PageCache::none) return;
  twins_.give_back(slot);
  slot = detail::PageCache::none;
}

void Dsm::Engine::mark_dirty(std::size_t page, PageState state) {
  protect(page, 1, PROT_READ | PROT_WRITE);
  set_dirty(page, state);
}

void Dsm::Engine::set_dirty(std::size_t page, PageState state) {
  state_[page] = state;
  if (!(listed_[page] & kInDirty)) {
    listed_[page] |= kInDirty;
    dirty_.push_back(page);
  }
}

void Dsm::Engine::pin(const void* address, std::size_t size, bool write) {
  detail::check_not_forked(rank_, "Dsm::make_accessible");
  note_thread(this_thread());
  detail::EngineLock guard(mutex_);
  const std::size_t first = page_of(address);
  const std::size_t last = page_of(static_cast<const std::byte*>(address) + size - 1);
  auto fail = [&](Errc code, const std::string& why) {
    throw Error(code, rank_,
                "DSM buffer at " + detail::describe_address(address) + " (" + std::to_string(size) +
                    " bytes) " + why);
  };
  // Pages that will hold a cache slot they did not hold before.
  std::size_t more = 0;
  for (std::size_t page = first; page <= last; ++page) {
    const int home = home_of_page(page);
    if (home == -1)
      fail(Errc::unregistered,
           "reaches unallocated DSM memory at " + detail::describe_address(view(page)));
    more += home != rank_ && !is_home(state_[page]) && !pins_.pinned(page);
  }
  if (pins_.remote_pinned() + more >= cache_.capacity())
    fail(Errc::no_memory,
         "and the DSM buffers already in transfer or made accessible need " +
             std::to_string(pins_.remote_pinned() + more) +
             " cached pages; MPIDSM_CACHE_PAGES=" + std::to_string(cache_.capacity()) +
             " keeps one for faults: raise it or transfer in parts");
  std::size_t page = first;
  try {
    for (; page <= last; ++page) {
      resolve(page, write ? detail::FaultAccess::write : detail::FaultAccess::read);
      if (!pins_.add(page, !is_home(state_[page])))
        fail(Errc::out_of_range, "is pinned 2^31 times");
    }
  } catch (...) {
    if (page > first) unpin(view(first), (page - first) * page_size_);
    throw;
  }
}

void Dsm::Engine::unpin(const void* address, std::size_t size) {
  const std::size_t first = page_of(address);
  const std::size_t last = page_of(static_cast<const std::byte*>(address) + size - 1);
  for (std::size_t page = first; page <= last; ++page) pins_.remove(page);
}

}  // namespace mpidsm
