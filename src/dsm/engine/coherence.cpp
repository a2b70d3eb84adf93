// Release (diffs and notices), acquire-side invalidation, and the home's
// view of who copied its pages.
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dsm/protocol/diff.hpp"
#include "dsm/protocol/diff_message.hpp"
#include "engine.hpp"

namespace mpidsm {

// A home page leaves home_dirty (tracked again, or parked): its notice says
// "possibly written" when it became shared while writable without faults.
void Dsm::Engine::record_home_notice(std::size_t page) {
  record_notice(page, listed_[page] & kUnwatched);
  listed_[page] &= static_cast<std::uint8_t>(~kUnwatched);
}

void Dsm::Engine::record_notice(std::size_t page, bool possibly_written) {
  // A cold snapshot is what readers were last told of the page: no more.
  if (hot_.cold(page)) hot_.drop(page);
  const std::int64_t notice = static_cast<std::int64_t>(page) |
                              (possibly_written ? detail::ReleaseNotice::possibly_written : 0);
  sync_.record_release(notice);
  if (!(listed_[page] & kInNotices)) {
    listed_[page] |= kInNotices;
    notices_.push_back(notice);
  }
  if (!(listed_[page] & kInLockNotices)) {
    listed_[page] |= kInLockNotices;
    lock_notices_.push_back(detail::encode_notice(page, rank_));
  }
}

void Dsm::Engine::record_unchanged(std::size_t page) {
  if (moves_.mode() == HomeMigration::off || (listed_[page] & (kInNotices | kInUnchanged)) ||
      policy_of_page(page) != Coherence::adaptive)
    return;
  listed_[page] |= kInUnchanged;
  unchanged_.push_back(page);
}

// The bytes where `current` differs from the page's twin, to its home:
// stored into a home mapped here (holding the page there), else a record in
// the home's batch (sent by flush_written_homes). Reads the twin, which the
// caller may replace as soon as this returns.
detail::DiffShape Dsm::Engine::diff_to_home(std::size_t page, const std::byte* current) {
  const int home = home_of_page(page);
  if (std::byte* direct = mapped_master_[static_cast<std::size_t>(home)]) {
    const detail::HeldPage held(guards_, home, page);
    return diff_kernel_.store(twin(page), current, direct + page * page_size_, page_size_,
                              held.access());
  }
  return diffs_.add(home, page, twin(page), current);
}

detail::DiffShape Dsm::Engine::count_diff(const detail::DiffShape& shape) {
  stats_.diff_runs += shape.runs;
  stats_.diff_bytes += shape.bytes;
  ++stats_.diffs;
  return shape;
}

// Puts the changed runs of a dirty remote page home (completion at the next
// flush of its home), frees its twin, records the notice; a page without a
// twin (single_writer) goes whole. The view becomes read-only first, so a
// concurrent writer faults and waits for the lock.
void Dsm::Engine::write_diff(std::size_t page, bool already_read_only) {
  if (!already_read_only) protect(page, 1, PROT_READ);
  const bool twinned_ahead = cache_.entry(page).twinned_ahead;
  const detail::DiffShape shape = count_diff(cache_.entry(page).twin == detail::PageCache::none
                                                 ? write_whole_page(page, master(page))
                                                 : diff_to_home(page, master(page)));
  // Stores to a mapped home are complete once issued; the notices that
  // publish them travel through MPI or UCX, which order memory. A batch's
  // flush is flush_written_homes' concern (DiffBatches::in_flight), a whole
  // page's is write_whole_page's.
  drop_twin(page);
  state_[page] = PageState::cached;
  // A page whose bytes did not change (twinned ahead of a write stream and
  // left alone, or rewritten with the same values) leaves every other copy
  // valid: no notice, so nobody drops a good copy. Rewritten, it still
  // counts as written where barriers decide who alone writes a page; twinned
  // ahead, nothing says it was written (a home moved to a rank that only
  // streamed past it would leave its real writer diffing to another rank).
  if (shape.bytes != 0)
    record_notice(page);
  else if (!twinned_ahead)
    record_unchanged(page);
}

// The page's changes up to a snapshot go home and the snapshot becomes its
// twin, which is safe beside a thread or a transfer still writing it: a byte
// written after (or while) the snapshot was taken differs from the new twin
// and goes home at the next release. False, with nothing sent, when no byte
// changed (then no record joins the home's batch).
bool Dsm::Engine::release_to_snapshot(std::size_t page) {
  std::byte* snapshot = scratch_.data();
  std::memcpy(snapshot, master(page), page_size_);
  if (diff_kernel_.measure(twin(page), snapshot, page_size_).bytes == 0) return false;
  count_diff(diff_to_home(page, snapshot));
  std::memcpy(twin(page), snapshot, page_size_);
  return true;
}

// A dirty page a transfer may still be writing cannot be made read-only:
// it is released up to a snapshot. A page without a twin (single_writer)
// takes one, the snapshot, and goes home whole from it.
void Dsm::Engine::release_pinned(std::size_t page) {
  if (cache_.entry(page).twin == detail::PageCache::none) {
    cache_.entry(page).twin = twins_.take();
    std::memcpy(twin(page), master(page), page_size_);
    count_diff(write_whole_page(page, twin(page)));
  } else {
    release_to_snapshot(page);
  }
  record_notice(page);
}

// A copy that every lock's release finds written (a record updated under a
// lock, a shared counter's page) would cost a fault, a twin and two
// mprotects per critical section: once a lock's release diffed it and it
// was written again before the next, it stays writable instead, its twin
// kept, and each lock's release takes its changes up to a snapshot. A copy
// found unchanged goes back to being tracked by faults (false: the caller
// makes it read-only and diffs it as any other page); a barrier's or a
// sync's release does that to every copy, so that what follows them sees
// only read-only copies.
bool Dsm::Engine::release_writable_copy(std::size_t page) {
  if (!release_to_snapshot(page)) return false;
  record_notice(page);
  return true;
}

// Release: every page written since the last release goes home (remote pages
// as diffs, one flush per home; home pages are already there) and becomes a
// write notice. Home pages nobody else holds any more need no notice and are
// written without faults from now on. Pinned pages stay writable and listed.
// On an error the pages not yet released stay listed for the next release.
// `carry_home`: see flush_written_homes.
std::span<const std::byte> Dsm::Engine::release(ReleaseKind kind, int carry_home) {
  // Those told of this rank's releases next must find them at the homes.
  if (kind == ReleaseKind::barrier_or_sync) locks_.complete_releases();
  take_new_copies();
  hot_.begin_release(kind == ReleaseKind::barrier_or_sync);
  release_hot_home_pages();  // before new ones join, which were just noticed
  auto is_dirty = [&](std::size_t page) {
    return state_[page] == PageState::dirty || state_[page] == PageState::home_dirty;
  };
  // Home pages written here: exclusive ones need no notice; shared ones
  // written in every recent interval stay writable (hot_), noticed now.
  std::size_t listed = 0;
  for (std::size_t page : dirty_) {
    if (state_[page] == PageState::home_dirty && !pinned(page)) {
      if (sharing_.sharers(page) == 0) {
        make_exclusive(page);
      } else if (policy_of_page(page) != Coherence::single_writer && becomes_hot(page)) {
        listed_[page] &= static_cast<std::uint8_t>(~kInDirty);
        continue;
      }
    }
    dirty_[listed++] = page;
  }
  dirty_.resize(listed);
  std::size_t kept = 0, i = 0;
  try {
    while (i < dirty_.size()) {
      const std::size_t page = dirty_[i];
      if (!is_dirty(page)) {
        listed_[page] &= static_cast<std::uint8_t>(~kInDirty);
        ++i;
        continue;
      }
      if (pinned(page)) {
        if (state_[page] == PageState::dirty)
          release_pinned(page);
        else
          record_notice(page, listed_[page] & kUnwatched);
        dirty_[kept++] = page;
        ++i;
        continue;
      }
      if (stays_writable(page, kind)) {
        if (release_writable_copy(page)) {
          dirty_[kept++] = page;
          ++i;
          continue;
        }
        // Unchanged since the last release: read-only again before the
        // check that finds no byte written meanwhile, as any other page.
        reuse_[page] &= static_cast<std::uint8_t>(~kRewrittenUnderLocks);
      }
      // A run of consecutive dirty pages (the usual order of dirty_) becomes
      // read-only with one mprotect before its diffs are taken.
      std::size_t j = i + 1;
      while (j < dirty_.size() && dirty_[j] == dirty_[j - 1] + 1 && is_dirty(dirty_[j]) &&
             !pinned(dirty_[j]) && !stays_writable(dirty_[j], kind))
        ++j;
      protect(page, j - i, PROT_READ);
      for (; i < j; ++i) {
        const std::size_t p = dirty_[i];
        listed_[p] &= static_cast<std::uint8_t>(~kInDirty);
        if (state_[p] == PageState::home_dirty) {
          state_[p] = PageState::home_clean;
          record_home_notice(p);
        } else {
          if (kind == ReleaseKind::lock)
            reuse_[p] |= kRewrittenUnderLocks;
          else
            reuse_[p] &= static_cast<std::uint8_t>(~kRewrittenUnderLocks);
          write_diff(p, true);
        }
      }
    }
  } catch (...) {
    dirty_.erase(dirty_.begin() + static_cast<std::ptrdiff_t>(kept),
                 dirty_.begin() + static_cast<std::ptrdiff_t>(i));
    throw;
  }
  dirty_.resize(kept);
  return flush_written_homes(carry_home);
}

// The hot pages' writes are found by comparison (hot_home_pages.hpp). A hot
// page whose state changed elsewhere, or that was listed for this release,
// leaves: whatever changed it took care of its notice (a parked page's, for
// instance), and the release handles a listed page as any other.
void Dsm::Engine::release_hot_home_pages() {
  for (std::size_t page : hot_.pages()) {
    if (state_[page] != PageState::home_dirty || (listed_[page] & kInDirty)) {
      hot_.drop(page);
    } else if (pinned(page)) {
      // Pinned pages stay writable and listed, noticed at every release.
      hot_.drop(page);
      set_dirty(page, PageState::home_dirty);
    } else if (sharing_.sharers(page) == 0) {
      hot_.drop(page);
      make_exclusive(page);
    } else if (hot_.cooling(page)) {
      // Read-only before the comparison: a later write faults.
      protect(page, 1, PROT_READ);
      state_[page] = PageState::home_clean;
      if (hot_.changed(page, master(page))) record_home_notice(page);
      hot_.cool(page);
    } else if (hot_.changed(page, master(page))) {
      record_home_notice(page);
    }
  }
  // A cold page stays cold while it is read-only here, or written since
  // (a write fault listed it); anything else (moved, parked, pinned) may
  // have changed it unseen.
  for (std::size_t page : hot_.cold_pages()) {
    const bool written = state_[page] == PageState::home_dirty && (listed_[page] & kInDirty);
    if (pinned(page) || (state_[page] != PageState::home_clean && !written)) hot_.drop(page);
  }
}

// A home page written in this interval, shared elsewhere: it becomes hot
// if it was written in a recent interval too (noticed now), or was cold
// (compared with its snapshot: noticed only if its bytes changed). A page
// other ranks write too never does: each of their notices would demote it,
// and its next release notice it though this rank wrote nothing. A
// neighbour sharing a boundary page (jia_water's positions of two ranks'
// molecules) would hear of it as written at every release, not only at
// those that followed a write: across 1+1+1 hosts its reader judged its
// updates unread every other step and fetched it at every step instead.
bool Dsm::Engine::becomes_hot(std::size_t page) {
  if (reuse_[page] & kHomeTakesDiffs) return false;
  if (hot_.cold(page)) {
    if (hot_.rewarm(page, master(page))) record_home_notice(page);
    return true;
  }
  if (!hot_.written(page)) return false;
  hot_.adopt(page, master(page));
  record_home_notice(page);
  return true;
}

// Pages homed here that other ranks copied since the last release: an
// exclusive one may have been written without a fault, so it is treated as
// written in this interval and tracked from now on.
void Dsm::Engine::take_new_copies() {
  const bool complete = sharing_.for_each_new_copy([&](std::size_t page) {
    if (state_[page] == PageState::home_exclusive) share_home_page(page);
  });
  if (complete) return;
  // The log overflowed: look at every page homed here (rare: more copies
  // between two releases of this rank than the log holds).
  ++stats_.copy_log_overflows;
  for (const auto& a : allocations_.list())
    for (std::size_t page = a.first; page < a.first + a.pages; ++page)
      if (state_[page] == PageState::home_exclusive && sharing_.sharers(page) != 0)
        share_home_page(page);
}

void Dsm::Engine::share_home_page(std::size_t page) {
  set_dirty(page, PageState::home_dirty);  // writable already; release() does the rest
  listed_[page] |= kUnwatched;
}

// With `carry_home`, the diffs gathered for it are neither sent nor flushed
// but returned, when nothing else is in flight to it: a lock's release call
// to that home carries them, and one round trip goes instead of two.
std::span<const std::byte> Dsm::Engine::flush_written_homes(int carry_home) {
  std::span<const std::byte> carried;
  if (carry_home >= 0 && !homes_written_[static_cast<std::size_t>(carry_home)] &&
      !diffs_.in_flight(carry_home))
    carried = diffs_.take(carry_home);
  diffs_.send();
  sharing_.send_drops();
  for (std::size_t home = 0; home < homes_written_.size(); ++home)
    if (homes_written_[home] || diffs_.in_flight(static_cast<int>(home))) {
      transport_.flush(static_cast<int>(home));
      homes_written_[home] = false;
    }
  diffs_.recycle();
  return carried;
}

// A writable home page nobody else holds any more: written without faults
// or notices from now on (already writable; nobody to tell).
void Dsm::Engine::make_exclusive(std::size_t page) {
  if (hot_.cold(page)) hot_.drop(page);  // written unseen from now on
  state_[page] = PageState::home_exclusive;
  listed_[page] &= static_cast<std::uint8_t>(~kUnwatched);
}

// Another rank wrote `page`, homed here: if hot (or cold), its snapshot no
// longer tells this rank's writes from that rank's diffs. A write of this rank's
// restoring the snapshot's bytes would compare unchanged and never be
// noticed, and a home that stopped writing would notice the page for ever
// (which would never move to its only writer). It is tracked by faults
// again: writable and listed until the next release, which notices it
// once and makes it read-only; a page demoted while hot, for good.
void Dsm::Engine::demote_hot_page(std::size_t page) {
  if (!hot_.held(page)) return;
  const bool was_hot = hot_.hot(page);
  hot_.forget(page);  // a cold page's snapshot too
  if (!was_hot) return;
  reuse_[page] |= kHomeTakesDiffs;
  if (state_[page] == PageState::home_dirty) set_dirty(page, PageState::home_dirty);
}

// Runs in this rank's progress (its progress thread, or a wait inside
// mpidsm), beside the application: writes into the master copy, which is
// never protected, only bytes the sender changed.
void Dsm::Engine::apply_remote_diffs(void* engine, int source, std::uint64_t,
                                     const std::byte* bytes, std::size_t size) {
  auto& self = *static_cast<Engine*>(engine);
  struct OwnPages final : detail::PageGuard {
    detail::MasterGuards& guards;
    int rank;
    OwnPages(detail::MasterGuards& guards, int rank) : guards(guards), rank(rank) {}
    detail::PageAccess acquire(std::size_t page) override { return guards.hold(rank, page); }
    void release(std::size_t page) override { guards.release(rank, page); }
  } own(self.guards_, self.rank_);
  if (!detail::apply_diffs(self.diff_kernel_, bytes, size, self.region_.master(), self.pages_,
                           self.page_size_, own)) {
    std::fprintf(stderr, "mpidsm: rank %d: malformed DSM diff message from rank %d\n", self.rank_,
                 source);
    std::abort();
  }
}

// Acquire side: drops this rank's copy of a page another rank changed. Own
// changes to it are written home first, so none is lost. A pinned page
// stays mapped and takes the other ranks' changes in place. A page homed
// here is tracked by faults again if hot.
void Dsm::Engine::invalidate(std::size_t page) {
  sync_.record_change(page);  // a copy fetched from now on may be newer than a push
  demote_hot_page(page);
  if (state_[page] != PageState::cached && state_[page] != PageState::dirty) return;
  ++stats_.invalidations;
  note_loss(page);
  if (pinned(page))
    refresh_in_place(page);
  else
    drop_cached(page);
}

// Copies into a pinned page only the bytes its home holds differently from
// what this rank last released (its twin, or the page when clean): bytes a
// transfer is writing here are this rank's, which no other rank may write
// in the same interval, so they are never touched. A dirty page without a
// twin (single_writer) is this rank's to write until its release: it stays.
void Dsm::Engine::refresh_in_place(std::size_t page) {
  const bool dirty = state_[page] == PageState::dirty;
  if (dirty && cache_.entry(page).twin == detail::PageCache::none) return;
  std::byte* home_copy = scratch_.data();
  fetch_home_copy(page, home_copy);
  std::byte* reference = dirty ? twin(page) : master(page);
  detail::for_each_changed_run(reference, home_copy, page_size_,
                               [&](std::size_t offset, std::size_t length) {
                                 std::memcpy(master(page) + offset, home_copy + offset, length);
                                 if (dirty)
                                   std::memcpy(reference + offset, home_copy + offset, length);
                               });
}

void Dsm::Engine::fetch_home_copy(std::size_t page, std::byte* into) {
  const int home = home_of_page(page);
  if (std::byte* direct = mapped_master_[static_cast<std::size_t>(home)])
    std::memcpy(into, direct + page * page_size_, page_size_);
  else
    transport_.get(home, master_, page * page_size_, into, page_size_);
}

void Dsm::Engine::invalidate_all_cached() {
  cache_.for_each([&](std::size_t page) { invalidate(page); });
}

// A prefetched page leaving the cache is counted as used when the
// application's view of it has a page-table entry, i.e. was touched; one
// being written is used by definition.
void Dsm::Engine::settle_prefetch(std::size_t page, bool written) {
  if (!cache_.contains(page) || !cache_.entry(page).prefetched) return;
  cache_.entry(page).prefetched = false;
  if (!track_prefetch_use_) return;
  ++(written || touched_since_mapped(page) ? stats_.prefetch_used : stats_.prefetch_unused);
}

}  // namespace mpidsm
