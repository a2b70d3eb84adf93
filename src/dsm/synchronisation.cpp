// The DSM's acquire and release points: barrier (everyone's notices) and
// locks (the notices of the critical sections under one lock).
#include <atomic>

#include "engine.hpp"
#include "ticks.hpp"
#include "transport/mpi_exchange.hpp"

namespace mpidsm {
namespace {

// What a rank contributes to the barrier's count exchange when it called the
// barrier inside a critical section.
constexpr std::int64_t kHoldsLock = -1;

}  // namespace

void Dsm::Engine::barrier() {
  const std::uint64_t start = detail::TickClock::now();
  // Scratch kept across barriers, so a barrier allocates nothing once warm.
  BarrierScratch& x = barrier_scratch_;
  x.outgoing.clear();
  bool holds_lock;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    holds_lock = held_count_ > 0;
    if (!holds_lock) {
      ++stats_.barriers;
      unpin_all();
      release();
      x.outgoing.swap(notices_);
      lock_notices_.clear();  // the barrier delivers them to everyone
    }
  }
  // Every diff is complete at its home (release flushed) before anyone learns
  // of it, so a page invalidated below is refetched up to date. The count
  // exchange is the barrier; the notices follow only when there are some.
  MPI_Comm comm = runtime_.comm();
  const auto ranks = static_cast<std::size_t>(runtime_.size());
  x.counts.resize(ranks);
  const std::int64_t mine = holds_lock ? kHoldsLock : static_cast<std::int64_t>(x.outgoing.size());
  exchange_counts(mine, x.counts);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (x.counts[r] == kHoldsLock) {
      // Nobody's notices are lost: they wait for the next barrier.
      std::lock_guard<std::mutex> guard(mutex_);
      notices_.insert(notices_.end(), x.outgoing.begin(), x.outgoing.end());
      throw Error(Errc::invalid_state, rank_,
                  "Dsm::barrier: rank " + std::to_string(r) +
                      " called it while holding a DSM lock (a barrier inside a critical "
                      "section); unlock first");
    }
    total += x.counts[r];
  }
  if (total > 0) {
    x.sizes.resize(ranks);
    x.offsets.resize(ranks);
    for (std::size_t r = 0, at = 0; r < ranks; ++r) {
      x.sizes[r] = static_cast<int>(x.counts[r]);
      x.offsets[r] = static_cast<int>(at);
      at += static_cast<std::size_t>(x.sizes[r]);
    }
    x.incoming.resize(static_cast<std::size_t>(total));
    detail::check_mpi(
        rank_, "MPI_Allgatherv in Dsm::barrier",
        MPI_Allgatherv(x.outgoing.data(), static_cast<int>(x.outgoing.size()), MPI_INT64_T,
                       x.incoming.data(), x.sizes.data(), x.offsets.data(), MPI_INT64_T, comm));
  }
  if (total > 0) {
    std::lock_guard<std::mutex> guard(mutex_);
    for (std::size_t writer = 0; writer < ranks; ++writer) {
      if (writer == static_cast<std::size_t>(rank_)) continue;
      const auto first = x.incoming.begin() + x.offsets[writer];
      for (auto it = first; it != first + x.sizes[writer]; ++it)
        invalidate(static_cast<std::size_t>(*it));
    }
  }
  // Every notice up to here has reached every rank: lock logs start afresh.
  // Only the barrier writes these (relaxed store, no locked instruction);
  // lock() and stats() read them.
  epoch_.store(epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  barrier_ticks_.store(
      barrier_ticks_.load(std::memory_order_relaxed) + (detail::TickClock::now() - start),
      std::memory_order_relaxed);
}

// The count exchange that is also the barrier. When every rank's slots are
// mapped (one node), a rank with something to say (notices, or holding a
// lock) stores its count into every rank's slots, and MPI_Barrier publishes
// them. A clean barrier then reads only this rank's own slots, which nobody
// wrote: no cache line moves beyond MPI_Barrier's own. Slots alternate with
// the barrier's parity and the reader zeroes what it found, so a rank already
// in the next barrier never overwrites a count a slower rank is still reading.
void Dsm::Engine::exchange_counts(std::int64_t mine, std::vector<std::int64_t>& counts) {
  MPI_Comm comm = runtime_.comm();
  if (!barrier_slots_.direct()) {
    detail::check_mpi(rank_, "MPI_Allgather in Dsm::barrier",
                      MPI_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm));
    return;
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
  detail::check_mpi(rank_, "MPI_Barrier in Dsm::barrier", MPI_Barrier(comm));
  for (std::size_t r = 0; r < ranks; ++r) {
    std::atomic_ref<std::int64_t> slot(barrier_slots_.local<std::int64_t>(slot_offset(r)));
    counts[r] = slot.load(std::memory_order_acquire);
    if (counts[r] != 0) slot.store(0, std::memory_order_relaxed);
  }
  counts[me] = mine;
}

void Dsm::Engine::check_lock_id(std::size_t id, const char* operation) const {
  if (id >= locks_.count())
    throw Error(Errc::out_of_range, rank_,
                std::string(operation) + ": lock id " + std::to_string(id) +
                    " is not below MPIDSM_LOCKS=" + std::to_string(locks_.count()));
}

void Dsm::Engine::lock(std::size_t id) {
  check_lock_id(id, "Dsm::lock");
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (held_[id])
      throw Error(Errc::invalid_state, rank_,
                  "Dsm::lock: lock " + std::to_string(id) +
                      " is already held by this rank (DSM locks are not recursive)");
    held_[id] = true;  // also keeps a second thread of this rank out of the queue
  }
  const std::uint64_t start = detail::TickClock::now();
  try {
    locks_.acquire(id);
    std::lock_guard<std::mutex> guard(mutex_);
    acquired_notices_.clear();
    if (locks_.read_new_notices(id, epoch_, acquired_notices_)) {
      for (std::uint64_t notice : acquired_notices_)
        if (detail::notice_writer(notice) != rank_) invalidate(detail::notice_page(notice));
    } else {
      ++stats_.lock_log_overflows;
      invalidate_all_cached();
    }
    ++held_count_;
    ++stats_.lock_acquires;
    lock_wait_ticks_.fetch_add(detail::TickClock::now() - start, std::memory_order_relaxed);
  } catch (...) {
    std::lock_guard<std::mutex> guard(mutex_);
    held_[id] = false;
    throw;
  }
}

void Dsm::Engine::unlock(std::size_t id) {
  check_lock_id(id, "Dsm::unlock");
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!held_[id] || held_count_ == 0)
      throw Error(Errc::invalid_state, rank_,
                  "Dsm::unlock: lock " + std::to_string(id) + " is not held by this rank");
    unpin_all();
    release();
    // The notices stay for the enclosing locks' logs until the outermost unlock.
    locks_.append_notices(id, epoch_, lock_notices_);
    if (--held_count_ == 0) lock_notices_.clear();
  }
  locks_.release(id);
  std::lock_guard<std::mutex> guard(mutex_);
  held_[id] = false;
}

}  // namespace mpidsm
