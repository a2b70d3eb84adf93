// Barrier updates, the engine's side (MPIDSM_BARRIER_REFETCH; the messages
// and the per-barrier lists are BarrierUpdates', protocol/barrier_updates.hpp).
// Across nodes a miss goes to a home that is usually busy
// elsewhere (computing, or blocked in MPI), so its progress thread must wake
// for it: on a host without a spare CPU that costs far more than the
// transfer. A barrier is the one moment every home is inside mpidsm,
// polling. So the pages a barrier invalidates that this rank used in the
// ending interval (an iterative code's halo rows) come back before it
// leaves: it subscribes to them as the barrier starts, and their homes send
// the noticed ones once the exchange is over (every diff is home by then).
// The home never stops counting the copy, which stays cached throughout.
//
// "Used" means fetched in the ending interval (by a miss, its prefetch, or
// the previous barrier's update, then touched: the view's page-table entry
// tells, touched_since_mapped). A page updated and then left alone is not
// subscribed again, so a page its home rewrites every interval but this
// rank read once costs one update, not one per barrier. A notice the home
// sent only because it cannot tell (ReleaseNotice::possibly_written) drops
// the copy without an update, but keeps the count until the next barrier
// (keep_counted).
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "engine.hpp"

namespace mpidsm {

using detail::PageCache;

bool Dsm::Engine::used_through_ucx(std::size_t page) {
  return barrier_refetch_ && state_[page] == PageState::cached &&
         cache_.entry(page).fetched_in == epoch_.load(std::memory_order_relaxed) &&
         !mapped_master_[static_cast<std::size_t>(home_of_page(page))] && used_since_updated(page);
}

// A page whose policy keeps copies is brought up to date whether used or
// not; an invalidate page never is.
bool Dsm::Engine::used_since_updated(std::size_t page) {
  if (state_[page] != PageState::cached || pinned(page)) return false;
  if (keeps_copies(page)) return true;
  if (policy_of_page(page) == Coherence::invalidate) return false;
  if (mapped_master_[static_cast<std::size_t>(home_of_page(page))]) return false;  // a memcpy away
  return !cache_.entry(page).refetched || read_since_updated(page);
}

bool Dsm::Engine::read_since_updated(std::size_t page) {
  PageCache::Entry& entry = cache_.entry(page);
  const bool read = touched_since_mapped(page);
  if (!entry.read_counted)
    entry.reads_in_a_row =
        read ? static_cast<std::uint8_t>(std::min(entry.reads_in_a_row + 1, 255)) : 0;
  entry.read_counted = true;
  return read;
}

namespace {

// Updates between two watches of a copy found read at its last
// `reads_in_a_row` watched updates: 1, then 4 << 0..4 (every 4th to every
// 64th update).
int watch_every(std::uint8_t reads_in_a_row) {
  constexpr int kWatchLessAfter = 4, kMostDoublings = 4;
  if (reads_in_a_row < kWatchLessAfter) return 1;
  return kWatchLessAfter << std::min(reads_in_a_row - kWatchLessAfter, kMostDoublings);
}

}  // namespace

// The copy stays mapped for reads while its bytes change: the application's
// threads are in the synchronisation, or race it (and so read old or new
// words). Its page-table entries go, so touched_since_mapped tells whether
// the next interval uses it. Watching costs an madvise, a refault and a
// read of /proc/self/pagemap per update: a third of a sync with a
// neighbour across nodes where a system call is cheap, 20-25 us on a guest
// whose mprotect takes 8 (kernel_costs' watch row), where watching every
// 4th update made a barrier with a halo page 1.72x MPI_Sendrecv across
// hosts, and 1.26x once watched less (docs/consistency.md). So a copy
// found read at every watched update is watched ever less often: at every
// 4th update after 4 reads in a row, then every 8th, 16th, 32nd and 64th
// as each watch finds it read again (watch_every), and counts as read in
// between. A reader that stops reading it finds out at the next watched
// update: the unread updates until then are at most about as many as the
// reads that grew the interval (docs/consistency.md's bound of what an
// update may cost).
void Dsm::Engine::watch_updated(std::size_t first, std::size_t count) {
  std::size_t run = 0;  // pages before `page` to watch, in a row
  auto drop_entries = [&](std::size_t end) {
    if (run) madvise(view(end - run), run * page_size_, MADV_DONTNEED);
    run = 0;
  };
  for (std::size_t page = first; page < first + count; ++page) {
    PageCache::Entry& entry = cache_.entry(page);
    if (++entry.unwatched_updates < watch_every(entry.reads_in_a_row)) {
      entry.refetched = false;  // as a copy fetched by a fault: used
      drop_entries(page);
      continue;
    }
    entry.unwatched_updates = 0;
    ++stats_.updates_watched;
    entry.refetched = true;
    entry.read_counted = false;
    ++run;
  }
  drop_entries(first + count);
}

bool Dsm::Engine::home_then_page(std::size_t a, std::size_t b) const {
  const int home_a = home_of_page(a), home_b = home_of_page(b);
  return home_a != home_b ? home_a < home_b : a < b;
}

void Dsm::Engine::drop_keeping_count(std::size_t page) {
  ++stats_.invalidations;
  note_loss(page);
  drop_view(page);
  leave_cache(page);
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

void Dsm::Engine::prepare_updates(BarrierScratch& x) {
  auto home_of = [this](std::size_t page) { return home_of_page(page); };
  updates_.begin(epoch_.load(std::memory_order_relaxed));
  for (std::size_t page :
       updates_.candidates([this](std::size_t a, std::size_t b) { return home_then_page(a, b); }))
    if (used_through_ucx(page) && updates_.subscribe(home_of_page(page), page))
      listed_[page] |= kSubscribed;
  // The pages homed here this release surely changed: pushed to the
  // readers whose last subscriptions name them.
  updates_.prepare_pushes(x.outgoing, home_of,
                          [&](std::size_t page) -> const std::byte* { return master(page); });
  updates_.mark(x.mask.data(), x.mask.size() / detail::BarrierUpdates::kMasks);
}

void Dsm::Engine::finish_updates(const BarrierScratch& x, bool failed, std::int64_t total) {
  if (failed || total == 0)
    updates_.learn_notices({}, {}, {}, {});
  else
    updates_.learn_notices(x.incoming, x.sizes, x.offsets,
                           [this](std::size_t page) { return home_of_page(page); });
  updates_.finish(epoch_.load(std::memory_order_relaxed), x.subscribers, x.renewers, x.pushers,
                  failed, [&](std::size_t page) -> const std::byte* { return master(page); });
  stats_.barrier_updates_sent += updates_.take_pages_sent();
}

bool Dsm::Engine::await_update(std::size_t page) {
  if (!(listed_[page] & kSubscribed) || state_[page] != PageState::cached || pinned(page))
    return false;
  if (!(listed_[page] & kAwaitingUpdate)) {
    listed_[page] |= kAwaitingUpdate;
    updates_.await(page);
  }
  return true;
}

void Dsm::Engine::install_updates() {
  const std::uint64_t next_interval = epoch_.load(std::memory_order_relaxed) + 1;
  updates_.for_each_update([&](std::size_t page, const std::byte* bytes) {
    if (page >= pages_ || !(listed_[page] & kAwaitingUpdate)) return;
    listed_[page] &= static_cast<std::uint8_t>(~kAwaitingUpdate);
    if (state_[page] != PageState::cached || pinned(page)) return invalidate(page);
    std::memcpy(master(page), bytes, page_size_);
    watch_updated(page, 1);
    count_as_fetched_next(page);
    ++stats_.barrier_refetches;
  });
  for (std::size_t page : updates_.awaited_pages())  // noticed, but its home sent no bytes
    if ((listed_[page] & kAwaitingUpdate) && !refresh_later(page)) invalidate(page);
  // A subscribed copy this barrier left cached, of a page whose copies this
  // rank keeps (update, read_mostly, a recurrent adaptive page), stays a
  // candidate for the next barrier, though the interval between may not
  // touch it: its next notice would bring it afresh anyway, and inside the
  // barrier, from its home's push or late answer, rather than after it,
  // from a home that may have left the barrier to compute. jia_water reads
  // its peers' positions while computing forces but not while moving its
  // own: it subscribed to them at every other barrier only, and across
  // 1+1+1 hosts the refresh at the others made the last rank leave the
  // barrier 2 ms after the rest. Copies this rank does not keep subscribe
  // only when used, or a page read once would be refreshed at every barrier.
  for (std::size_t page : updates_.subscribed_pages())
    if (state_[page] == PageState::cached && keeps_copies(page) &&
        cache_.entry(page).fetched_in != next_interval)  // installed above
      count_as_fetched_next(page);
  forget_updates();
}

void Dsm::Engine::forget_updates(bool resend) {
  constexpr auto marks = static_cast<std::uint8_t>(~(kSubscribed | kAwaitingUpdate));
  for (std::size_t page : updates_.awaited_pages()) listed_[page] &= marks;
  for (std::size_t page : updates_.subscribed_pages()) listed_[page] &= marks;
  updates_.forget(resend);
}

}  // namespace mpidsm
