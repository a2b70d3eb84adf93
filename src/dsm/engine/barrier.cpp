// The DSM barrier: every rank's release, then the acquire of everyone's
// notices (and, across nodes, the updates of used pages: barrier_updates.hpp).
#include <algorithm>
#include <atomic>
#include <optional>

#include "common/mpi_exchange.hpp"
#include "dsm/test_hooks.hpp"
#include "engine.hpp"
#include "ticks.hpp"
#include "transport/node_barrier.hpp"
#include "transport/progress/progress_control.hpp"

namespace mpidsm {
namespace {

// What a rank contributes to the barrier's count exchange when it called the
// barrier inside a critical section, or when its release failed.
constexpr std::int64_t kHoldsLock = -1;
constexpr std::int64_t kFailed = -2;
// Notices a rank can add to its count in the barrier's allgather (a 64-byte
// record per rank): a barrier after a few written pages then costs one
// collective, not two.
constexpr std::size_t kInlineNotices = 7;

// Waits for one of the barrier's collectives, which receives into (or reads
// counts from) `buffers`. A wait that throws (a peer died) abandons the
// collective, and MPI may still write there in any later MPI call as live
// peers' parts arrive: the buffers are then left to MPI for good (their
// storage moved into vectors never freed), never to be reused or freed.
template <class... Buffers>
void wait_receiving(Transport& transport, MPI_Request& request, Buffers&... buffers) {
  try {
    transport.wait_mpi(request, "Dsm::barrier");
  } catch (const Error&) {
    (static_cast<void>(new Buffers(std::move(buffers))), ...);
    throw;
  }
}
}  // namespace

// The barrier in its phases: the release, the count exchange (which is the
// barrier itself), then either the failure every rank reports alike, or the
// notices' exchange and their acquire.
void Dsm::Engine::barrier() {
  detail::check_not_forked(rank_, "Dsm::barrier");
  pass_on_abandoned_locks();
  const std::uint64_t start = detail::TickClock::now();
  BarrierScratch& x = barrier_scratch_;
  // Across nodes, from here to the end, this thread's own polls serve the
  // peers (the progress thread would only compete with it for the worker
  // and a CPU): the diffs of the release, the count exchange, the updates.
  // Not on one node: node_barrier() spins on shared words, without UCX.
  std::optional<detail::DrivingProgress> driving;
  if (!barrier_slots_.direct()) driving.emplace(transport_);
  BarrierEntry entry = release_for_barrier(x);
  if (entry.holds_lock) raise_barrier_beacons();
  const BarrierCounts counts = exchange_barrier_counts(entry, x);
  if (counts.any_failed || counts.holder >= 0) fail_barrier(x, counts, entry.failure, driving);
  if (counts.total > 0 && !counts.delivered) gather_notices(x, counts.total);
  if (counts.total == 0) x.incoming.clear();
  acquire_barrier_notices(x, counts.total, entry.lock_notices_before);
  // Every notice up to here has reached every rank: lock logs start afresh.
  // Only the barrier writes these (relaxed store, no locked instruction);
  // lock() and stats() read them.
  epoch_.store(epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  barrier_ticks_.store(
      barrier_ticks_.load(std::memory_order_relaxed) + (detail::TickClock::now() - start),
      std::memory_order_relaxed);
  pass_on_abandoned_locks();  // granted while this rank waited here
}

// Phase 1. Every diff is complete at its home (release flushed) before
// anyone learns of it, so a page invalidated later is updated from its home.
Dsm::Engine::BarrierEntry Dsm::Engine::release_for_barrier(BarrierScratch& x) {
  BarrierEntry entry;
  x.outgoing.clear();
  x.mask.assign(barrier_slots_.direct() ? 0
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
    release();
  } catch (const Error& e) {
    entry.failure = e;
  }
  // The notices travel now; a page released again meanwhile is noticed afresh.
  x.outgoing.swap(notices_);
  forget_notices(x.outgoing);
  sync_.barrier_delivered();
  // Across nodes (every diff flushed by now), the subscriptions and
  // pushes leave while the exchange runs.
  if (!entry.failure && !x.mask.empty()) prepare_updates(x);
  updates_.drop_candidates();
  entry.lock_notices_before = lock_notices_.size();
  return entry;
}

// Phase 2: the count exchange is the barrier; the notices follow only when
// there are some, unless they rode along.
Dsm::Engine::BarrierCounts Dsm::Engine::exchange_barrier_counts(const BarrierEntry& entry,
                                                                BarrierScratch& x) {
  const auto ranks = static_cast<std::size_t>(runtime_.size());
  x.counts.resize(ranks);
  const std::int64_t mine = entry.failure      ? kFailed
                            : entry.holds_lock ? kHoldsLock
                                               : static_cast<std::int64_t>(x.outgoing.size());
  BarrierCounts counts;
  try {
    counts.delivered = exchange_counts(mine, x);
  } catch (...) {
    detail::EngineLock guard(mutex_);
    forget_updates(true);  // no message of this barrier stays in flight
    throw;
  }
  for (std::size_t r = 0; r < ranks; ++r) {
    if (x.counts[r] == kHoldsLock && counts.holder < 0) counts.holder = static_cast<int>(r);
    counts.any_failed = counts.any_failed || x.counts[r] == kFailed;
    counts.total += std::max<std::int64_t>(x.counts[r], 0);
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
  if (counts.holder >= 0) std::atomic_ref<std::uint64_t>(barrier_beacon()).store(0);
  driving.reset();  // what follows may block in MPI
  if (counts.any_failed)
    detail::throw_if_any_failed(runtime_.comm(), rank_, failure, "Dsm::barrier");
  throw Error(Errc::invalid_state, rank_,
              "Dsm::barrier: rank " + std::to_string(counts.holder) +
                  " called it while holding a DSM lock (a barrier inside a critical "
                  "section); unlock first");
}

// Phase 3: every rank's notices, in rank order.
void Dsm::Engine::gather_notices(BarrierScratch& x, std::int64_t total) {
  lay_out_incoming(x, total);
  MPI_Request request;
  detail::check_mpi(rank_, "MPI_Iallgatherv in Dsm::barrier",
                    MPI_Iallgatherv(x.outgoing.data(), static_cast<int>(x.outgoing.size()),
                                    MPI_INT64_T, x.incoming.data(), x.sizes.data(),
                                    x.offsets.data(), MPI_INT64_T, runtime_.comm(), &request));
  wait_receiving(transport_, request, x.incoming, x.sizes, x.offsets);
}

// Phase 4, the acquire: the pages other ranks released leave the cache, but
// those awaiting their home's update (or kept counted). Across nodes every
// rank takes this step, so homes and readers change what they hold of each
// other's subscriptions alike.
void Dsm::Engine::acquire_barrier_notices(const BarrierScratch& x, std::int64_t total,
                                          std::size_t lock_notices_before) {
  if (total == 0 && lock_notices_before == 0 && x.mask.empty()) return;
  const auto ranks = static_cast<std::size_t>(runtime_.size());
  detail::EngineLock guard(mutex_);
  // The barrier delivered these to everyone; later ones wait for the next unlock.
  forget_lock_notices(lock_notices_before);
  for (std::size_t writer = 0; total > 0 && writer < ranks; ++writer) {
    if (writer == static_cast<std::size_t>(rank_)) continue;
    const auto first = x.incoming.begin() + x.offsets[writer];
    for (auto it = first; it != first + x.sizes[writer]; ++it) {
      const std::size_t page = detail::ReleaseNotice::page(*it);
      const bool kept =
          (*it & detail::ReleaseNotice::possibly_written) ? keep_counted(page) : await_update(page);
      if (!kept) invalidate(page);
    }
  }
  try {
    finish_updates(x, false, total);
  } catch (...) {
    install_updates();  // what arrived; the other awaited pages leave the cache
    throw;
  }
  install_updates();
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
  if (listed_[page] & kInNotices) return;
  listed_[page] |= kInNotices;
  notices_.push_back(notice);
}

// The count exchange that is also the barrier. When every rank's slots are
// mapped (one node), a rank with something to say (notices, or holding a
// lock) stores its count into every rank's slots, and a barrier in shared
// memory publishes them. A clean barrier then reads only this rank's own
// slots, which nobody wrote: no cache line moves beyond the barrier's own. Slots alternate with
// the barrier's parity and the reader zeroes what it found, so a rank already
// in the next barrier never overwrites a count a slower rank is still reading.
// Where every rank has counts[r] notices: x.sizes, x.offsets and room in
// x.incoming for all of them, in rank order.
void Dsm::Engine::lay_out_incoming(BarrierScratch& x, std::int64_t total) {
  const std::size_t ranks = x.counts.size();
  x.sizes.resize(ranks);
  x.offsets.resize(ranks);
  for (std::size_t r = 0, at = 0; r < ranks; ++r) {
    x.sizes[r] = static_cast<int>(std::max<std::int64_t>(x.counts[r], 0));
    x.offsets[r] = static_cast<int>(at);
    at += static_cast<std::size_t>(x.sizes[r]);
  }
  x.incoming.resize(static_cast<std::size_t>(total));
}

bool Dsm::Engine::exchange_counts(std::int64_t mine, BarrierScratch& x) {
  std::vector<std::int64_t>& counts = x.counts;
  x.subscribers.clear();
  x.renewers.clear();
  x.pushers.clear();
  MPI_Comm comm = runtime_.comm();
  // Non-blocking collectives, so a rank that died ends the wait with an
  // error naming it.
  MPI_Request request;
  if (!barrier_slots_.direct()) {
    const std::size_t record = 1 + kInlineNotices + x.mask.size();
    const std::size_t ranks = counts.size();
    x.records.resize(record * (ranks + 1));  // the last record is this rank's to send
    std::int64_t* mine_out = x.records.data() + record * ranks;
    mine_out[0] = mine;
    if (mine > 0 && static_cast<std::size_t>(mine) <= kInlineNotices)
      std::copy(x.outgoing.begin(), x.outgoing.end(), mine_out + 1);
    std::copy(x.mask.begin(), x.mask.end(), mine_out + 1 + kInlineNotices);
    detail::check_mpi(
        rank_, "MPI_Iallgather in Dsm::barrier",
        MPI_Iallgather(mine_out, static_cast<int>(record), MPI_INT64_T, x.records.data(),
                       static_cast<int>(record), MPI_INT64_T, comm, &request));
    // A subscription costs a send (on a simulated host a tcp send took
    // 10-20 us), which would delay this rank's record.
    try {
      updates_.send();
    } catch (const Error&) {
      wait_receiving(transport_, request, x.records);  // the others' collective completes
      throw;
    }
    wait_receiving(transport_, request, x.records);
    std::int64_t total = 0;
    bool inline_only = true;
    const std::size_t my_word = static_cast<std::size_t>(rank_) / 64,
                      words = x.mask.size() / detail::BarrierUpdates::kMasks;
    const std::uint64_t my_bit = std::uint64_t{1} << (rank_ % 64);
    for (std::size_t r = 0; r < ranks; ++r) {
      counts[r] = x.records[r * record];
      const std::int64_t* masks = x.records.data() + r * record + 1 + kInlineNotices;
      auto marked = [&](std::size_t mask) {
        return (static_cast<std::uint64_t>(masks[mask * words + my_word]) & my_bit) != 0;
      };
      if (marked(0)) x.subscribers.push_back(static_cast<int>(r));
      if (marked(1)) x.renewers.push_back(static_cast<int>(r));
      if (marked(2)) x.pushers.push_back(static_cast<int>(r));
      total += std::max<std::int64_t>(counts[r], 0);
      inline_only = inline_only && counts[r] <= static_cast<std::int64_t>(kInlineNotices);
    }
    if (!inline_only || total == 0) return false;
    lay_out_incoming(x, total);
    for (std::size_t r = 0; r < ranks; ++r)
      std::copy_n(x.records.data() + r * record + 1, x.sizes[r], x.incoming.begin() + x.offsets[r]);
    return true;
  }
  const std::size_t ranks = counts.size();
  const std::size_t base = (exchanges_++ % 2) * ranks;
  const auto me = static_cast<std::size_t>(rank_);
  auto slot_offset = [&](std::size_t writer) { return (base + writer) * sizeof(std::int64_t); };
  if (mine != 0)
    for (std::size_t r = 0; r < ranks; ++r)
      if (r != me)
        std::atomic_ref<std::int64_t>(
            barrier_slots_.mapped<std::int64_t>(static_cast<int>(r), slot_offset(me)))
            .store(mine, std::memory_order_release);
  node_barrier();
  for (std::size_t r = 0; r < ranks; ++r) {
    std::atomic_ref<std::int64_t> slot(barrier_slots_.local<std::int64_t>(slot_offset(r)));
    counts[r] = slot.load(std::memory_order_acquire);
    if (counts[r] != 0) slot.store(0, std::memory_order_relaxed);
  }
  counts[me] = mine;
  return false;
}

// On the mapped slots (node_barrier.hpp); the counts a rank stored into its
// peers' slots before are visible to them after.
void Dsm::Engine::node_barrier() {
  const auto rounds_base = 2 * static_cast<std::size_t>(runtime_.size()) * sizeof(std::int64_t);
  detail::dissemination_barrier(
      transport_, ++node_barriers_,
      [&](int rank, std::size_t round) -> std::uint64_t& {
        return barrier_slots_.mapped<std::uint64_t>(rank,
                                                    rounds_base + round * sizeof(std::uint64_t));
      },
      "Dsm::barrier");
}

}  // namespace mpidsm
