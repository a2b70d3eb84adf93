// The DSM barrier: every rank's release, then the acquire of everyone's
// notices (and, across nodes, the updates of used pages: barrier_updates.hpp).
#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "common/mpi_exchange.hpp"
#include "dsm/test_hooks.hpp"
#include "engine.hpp"
#include "ticks.hpp"
#include "transport/progress/progress_control.hpp"

namespace mpidsm {

// The barrier in its phases: the release, the count exchange (which is the
// barrier itself), then either the failure every rank reports alike, or the
// notices' exchange and their acquire.
void Dsm::Engine::barrier() {
  detail::check_not_forked(rank_, "Dsm::barrier");
  note_thread(this_thread());
  pass_on_abandoned_locks();
  const std::uint64_t start = detail::TickClock::now();
  BarrierScratch& x = exchange_.scratch();
  // Across nodes, from here to the end, this thread's own polls serve the
  // peers (the progress thread would only compete with it for the worker
  // and a CPU): the diffs of the release, the count exchange, the updates.
  // Not on one node: the exchange spins on shared words, without UCX.
  std::optional<detail::DrivingProgress> driving;
  if (!exchange_.direct()) driving.emplace(transport_);
  BarrierEntry entry = release_for_barrier(x);
  if (entry.holds_lock) exchange_.raise_beacons();
  const BarrierCounts counts = exchange_barrier_counts(entry, x);
  if (counts.any_failed || counts.holder >= 0) fail_barrier(x, counts, entry.failure, driving);
  // Every rank alike, before anything here can fail: no lock is held now.
  if (counts.moves != HomeMigration::off && !x.lock_moves_in.empty()) {
    detail::EngineLock guard(mutex_);
    locks_.apply_moves(x.lock_moves_in);
  }
  if (counts.total > 0 && !counts.delivered) exchange_.gather_notices(x, counts.total);
  if (counts.total == 0) x.incoming.clear();
  acquire_barrier_notices(x, counts, entry.lock_notices_before);
  // Every notice up to here has reached every rank: lock logs start afresh.
  // Only the barrier writes these (relaxed store, no locked instruction);
  // lock() and stats() read them.
  epoch_.store(epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  barrier_ticks_.store(
      barrier_ticks_.load(std::memory_order_relaxed) + (detail::TickClock::now() - start),
      std::memory_order_relaxed);
  pass_on_abandoned_locks();                             // granted while this rank waited here
  if (race_) throw *std::exchange(race_, std::nullopt);  // complete on every rank, as here
}

// Phase 1. Every diff is complete at its home (release flushed) before
// anyone learns of it, so a page invalidated later is updated from its home.
Dsm::Engine::BarrierEntry Dsm::Engine::release_for_barrier(BarrierScratch& x) {
  BarrierEntry entry;
  x.outgoing.clear();
  x.lock_moves_out.clear();
  x.mask.assign(exchange_.direct() ? 0
                                   : detail::BarrierUpdates::kMasks *
                                         detail::BarrierUpdates::mask_words(runtime_.size()),
                0);
  detail::EngineLock guard(mutex_);
  entry.holds_lock = holders_.any_held();
  forget_updates();  // a barrier that failed in its exchange left them
  if (entry.holds_lock) return entry;
  ++stats_.barriers;
  try {
    // The counts keep_counted kept for pages not fetched again since go
    // (a page nobody reads any more must not cost its home a fault per
    // write forever), before release(), whose flushes complete the drops.
    drop_uncached_counts(counted_uncached_);
    detail::fail_if_injected(detail::FailurePoint::barrier_release, rank_);
    release(ReleaseKind::barrier_or_sync);
  } catch (const Error& e) {
    entry.failure = e;
  }
  // The notices travel now; a page released again meanwhile is noticed afresh.
  x.outgoing.swap(notices_);
  acquired_since_barrier_ = false;  // writes from here on are the next interval's
  mark_unsynchronised(x);
  append_unchanged_notices(x);
  mark_copies_held(x);
  forget_notices(x.outgoing);
  sync_.barrier_delivered();
  // Across nodes (every diff flushed by now), the subscriptions and
  // pushes leave while the exchange runs.
  if (!entry.failure && !x.mask.empty()) {
    prepare_updates(x);
    locks_.propose_moves([this](std::size_t page) { return home_of_page(page); }, x.lock_moves_out);
  }
  updates_.drop_candidates();
  entry.lock_notices_before = lock_notices_.size();
  return entry;
}

// Phase 2: the count exchange is the barrier; the notices follow only when
// there are some, unless they rode along.
Dsm::Engine::BarrierCounts Dsm::Engine::exchange_barrier_counts(const BarrierEntry& entry,
                                                                BarrierScratch& x) {
  using Exchange = detail::BarrierExchange;
  const auto ranks = static_cast<std::size_t>(runtime_.size());
  const std::int64_t mine =
      entry.failure ? Exchange::kFailed
      : entry.holds_lock
          ? Exchange::kHoldsLock
          : Exchange::with_vote(static_cast<std::int64_t>(x.outgoing.size()), home_move_vote());
  BarrierCounts counts;
  try {
    // A send costs (on a simulated host a tcp send took 10-20 us): the push
    // to the rank the record goes to first rides in the record's message,
    // and the subscriptions and other pushes leave after the record.
    const detail::SparseAllgather::Rider rider{updates_.push_riding_to(exchange_.rider_to()),
                                               updates_.push_capacity_from(exchange_.rider_from())};
    counts.delivered = exchange_.exchange_counts(mine, x, rider, [this] { updates_.send(); });
    updates_.push_rode_from(exchange_.rider_from(), exchange_.rider_in());
  } catch (...) {
    detail::EngineLock guard(mutex_);
    forget_updates(true);  // no message of this barrier stays in flight
    throw;
  }
  counts.moves = HomeMigration::on;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (x.counts[r] == Exchange::kHoldsLock && counts.holder < 0)
      counts.holder = static_cast<int>(r);
    counts.any_failed = counts.any_failed || x.counts[r] == Exchange::kFailed;
    counts.total += Exchange::notices_in(x.counts[r]);
    counts.moves = detail::HomeMoves::stricter(
        counts.moves, detail::HomeMoves::mode_of(Exchange::vote_in(x.counts[r])));
  }
  return counts;
}

// A rank's release failed, or a rank holds a lock: every rank throws alike.
// Nobody's notices are lost: they wait for the next barrier, and the lock
// notices for the next unlock. Subscriptions get empty answers.
void Dsm::Engine::fail_barrier(const BarrierScratch& x, const BarrierCounts& counts,
                               std::optional<Error> failure,
                               std::optional<detail::DrivingProgress>& driving) {
  {
    detail::EngineLock guard(mutex_);
    for (std::int64_t notice : x.outgoing) record_notice_of_barrier(notice);
    try {
      finish_updates(x, true, counts.total);
    } catch (const Error& e) {
      if (!failure) failure = e;
    }
    install_updates();
  }
  // The holder raised this rank's beacon before its count left: no waiter
  // of a later barrier sees it.
  if (counts.holder >= 0) exchange_.lower_beacon();
  driving.reset();  // what follows may block in MPI
  if (counts.any_failed)
    detail::throw_if_any_failed(runtime_.comm(), rank_, failure, "Dsm::barrier");
  throw Error(Errc::invalid_state, rank_,
              "Dsm::barrier: rank " + std::to_string(counts.holder) +
                  " called it while holding a DSM lock (a barrier inside a critical "
                  "section); unlock first");
}

// Phase 3, the acquire: the pages other ranks released leave the cache, but
// those awaiting their home's update (or kept counted), and those whose home
// moves (move_homes, last: a move changes what home_of says, which the
// updates' late answers must not see). Across nodes every rank takes this
// step, so homes and readers change what they hold of each other's
// subscriptions alike; every rank makes the barrier's moves, whatever fails.
void Dsm::Engine::acquire_barrier_notices(const BarrierScratch& x, const BarrierCounts& counts,
                                          std::size_t lock_notices_before) {
  const std::int64_t total = counts.total;
  if (total == 0 && lock_notices_before == 0 && x.mask.empty()) return;
  const auto ranks = static_cast<std::size_t>(runtime_.size());
  detail::EngineLock guard(mutex_);
  const DropBatch drops(*this);
  // The barrier delivered these to everyone; later ones wait for the next unlock.
  forget_lock_notices(lock_notices_before);
  std::span<const detail::HomeMoves::Move> moves;
  if (total > 0) find_write_races(x);
  if (total > 0)
    moves = moves_.decide(epoch_.load(std::memory_order_relaxed), counts.moves, x.incoming, x.sizes,
                          x.offsets, [this](std::size_t page) { return home_of_page(page); });
  for (std::size_t writer = 0; total > 0 && writer < ranks; ++writer) {
    if (writer == static_cast<std::size_t>(rank_)) continue;
    const auto first = x.incoming.begin() + x.offsets[writer];
    for (auto it = first; it != first + x.sizes[writer]; ++it) {
      const std::size_t page = detail::ReleaseNotice::page(*it);
      if ((*it & detail::ReleaseNotice::unchanged) || (!moves.empty() && moves_.moving(page)))
        continue;
      const bool kept = keeps_copy_now(page) ? await_update(page) || refresh_later(page)
                        : (*it & detail::ReleaseNotice::possibly_written) ? keep_counted(page)
                                                                          : await_update(page);
      if (!kept) invalidate(page);
    }
  }
  try {
    try {
      finish_updates(x, false, total);
    } catch (...) {
      install_updates();  // what arrived; the other awaited pages leave the cache
      drop_refreshes();   // and so do those waiting for a refresh
      throw;
    }
    install_updates();
    refresh_barrier_copies();
  } catch (...) {
    move_homes(moves);
    throw;
  }
  move_homes(moves);
  // The copies this acquire dropped are uncounted now, not at this rank's
  // next release: a home deciding at its own release whether a page is
  // still shared should find them gone, as it would a remote atomic each.
  sharing_.send_drops();
}

// Pages leaving notices_ for a barrier's exchange may be noticed again.
void Dsm::Engine::forget_notices(std::span<const std::int64_t> notices) {
  for (std::int64_t notice : notices)
    listed_[detail::ReleaseNotice::page(notice)] &= static_cast<std::uint8_t>(~kInNotices);
}

// A notice that a failed barrier did not deliver goes back to notices_
// (unless the page was noticed again meanwhile).
void Dsm::Engine::record_notice_of_barrier(std::int64_t notice) {
  const std::size_t page = detail::ReleaseNotice::page(notice);
  if ((notice & detail::ReleaseNotice::unchanged) || (listed_[page] & kInNotices)) return;
  listed_[page] |= kInNotices;
  notices_.push_back(notice & ~detail::ReleaseNotice::writer_holds_copy);
}

}  // namespace mpidsm
