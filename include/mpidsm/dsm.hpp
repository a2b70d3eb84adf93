// The coherent DSM face: a shared region at the same virtual address on
// every rank, used with plain loads and stores. Pages live at a home rank
// (chosen by each allocation's placement); other ranks fetch them on a fault
// with a one-sided get, keep a twin on their first write, and at release
// write only the bytes they changed back home with one-sided puts. Home-based
// lazy release consistency with multiple writers, as in JIAJIA, over UCX.
//
// Synchronisation: Dsm::barrier() (every rank's writes before it are seen by
// every rank after it) and locks (writes made before unlock(id) are seen by
// the next rank to lock(id)). docs/consistency.md states the guarantees.
#pragma once

#include "mpidsm/language.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "mpidsm/coherence.hpp"
#include "mpidsm/config.hpp"
#include "mpidsm/placement.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {

/// \addtogroup dsm
/// @{

/// Per-rank counters since the Dsm was created.
struct DsmStats {
  /// Faults on reads of pages not mapped here.
  std::uint64_t read_faults = 0;
  /// Faults on writes (twins made, or a page fetched to write it).
  std::uint64_t write_faults = 0;
  std::uint64_t pages_fetched = 0;  ///< by misses and prefetch
  std::uint64_t prefetched = 0;     ///< of those, fetched ahead of a miss
  /// Misses and prefetches that waited for pages from homes reached through
  /// UCX: one per miss (or prefetch batch), whatever its pages and homes.
  std::uint64_t fetch_waits = 0;
  /// Time those waited, from the first request to the last page's arrival,
  /// in nanoseconds: fetch_wait_ns / fetch_waits is a remote miss's latency,
  /// which grows when homes answer late (a busy home whose progress waits
  /// for a CPU: docs/progress.md).
  std::uint64_t fetch_wait_ns = 0;
  /// Prefetched pages the application touched, and those it did not (counted
  /// when they leave the cache). Tracked only with statistics on
  /// (MPIDSM_STATS=1, DsmSettings::print_stats): telling them apart costs a
  /// minor page fault per used page. "Used" is an upper bound: the kernel may
  /// map a neighbour of a touched page along with it (fault-around).
  std::uint64_t prefetch_used = 0;
  /// Prefetched pages that left the cache untouched.
  std::uint64_t prefetch_unused = 0;
  std::uint64_t evictions = 0;  ///< pages dropped to respect MPIDSM_CACHE_PAGES
  std::uint64_t diffs = 0;      ///< pages whose changes were written home
  std::uint64_t diff_runs = 0;  ///< runs of changed bytes in them (byte-exact)
  /// Changed bytes written home.
  std::uint64_t diff_bytes = 0;
  /// Transfers that carried diffs home through UCX: one message per home
  /// (and per 64 KiB) at a release, a put per run for pages a transfer
  /// pins; none for homes on this node, which are written in place.
  std::uint64_t diff_messages = 0;
  /// Cached pages dropped at acquires because another rank changed them.
  std::uint64_t invalidations = 0;
  /// lock() calls completed.
  std::uint64_t lock_acquires = 0;
  std::uint64_t lock_wait_ns = 0;        ///< in lock(): queueing plus invalidation
  std::uint64_t lock_log_overflows = 0;  ///< acquires that had to drop the whole cache
  /// barrier() calls completed.
  std::uint64_t barriers = 0;
  /// Time spent in barrier(), in nanoseconds.
  std::uint64_t barrier_ns = 0;
  /// Times the view gave its mappings back to stay within the process's
  /// budget of mappings (vm.max_map_count): see docs/consistency.md.
  std::uint64_t mapping_resets = 0;
  /// Releases that found more new copies of pages homed here than the copy
  /// log holds, and so looked at every page homed here.
  std::uint64_t copy_log_overflows = 0;
  /// Pages a barrier brought up to date before any rank left it
  /// (MPIDSM_BARRIER_REFETCH): invalidated pages this rank had used since the
  /// previous barrier, sent by their homes, which it reaches through UCX
  /// (not counted in pages_fetched).
  std::uint64_t barrier_refetches = 0;
  /// Pages this rank, as their home, sent to readers inside barriers (the
  /// updates barrier_refetches counts on the readers' side).
  std::uint64_t barrier_updates_sent = 0;
  /// sync_with() calls completed.
  std::uint64_t syncs = 0;
  /// Time spent in sync_with(), in nanoseconds.
  std::uint64_t sync_ns = 0;
  /// Pages a sync_with() brought up to date in place (pushed by their homes
  /// with the notices, or fetched afresh): pages a peer's notices named that
  /// this rank had used since they last changed, homed on ranks it reaches
  /// through UCX (not counted in pages_fetched).
  std::uint64_t sync_refetches = 0;
  /// Pages that moved home to this rank at barriers, as their only writer
  /// (MPIDSM_HOME_MIGRATION).
  std::uint64_t homes_gained = 0;
  std::uint64_t homes_lost = 0;  ///< pages homed here that moved to their writer
  /// Copies of update and read_mostly pages, and of adaptive pages switched
  /// to write-update here, an acquire brought up to date in place, fetched
  /// from their homes, instead of dropping them (not counted in
  /// pages_fetched; those a barrier's homes pushed count in
  /// barrier_refetches).
  std::uint64_t updates_received = 0;
  /// Pages that came with the grants of locks this rank acquired, sent by
  /// the lock's home, which is their home too (across nodes, over
  /// messages): copies brought up to date in place, or fetched, with no
  /// round trip of their own (not counted in pages_fetched).
  std::uint64_t lock_grant_pages = 0;
  /// Adaptive pages this rank switched to write-update: acquires had
  /// dropped its copy and it fetched the page again, twice.
  std::uint64_t updates_adopted = 0;
  /// Adaptive pages switched back to invalidation here: an update of the
  /// copy went unread before the next one.
  std::uint64_t updates_dropped = 0;
  /// Copies brought up to date in place (updates, barrier and sync
  /// refetches) whose page-table entries went so that their next read
  /// shows (a madvise and, when read, a minor fault each): a copy read at
  /// every watch is watched at every 4th update, then every 8th... up to
  /// every 64th.
  std::uint64_t updates_watched = 0;
  /// mprotect calls that changed the view's protection (a fault's page made
  /// readable or writable, copies an acquire dropped, one call per run of
  /// them): each costs the kernel a TLB flush, per page for up to 33 pages.
  std::uint64_t view_protections = 0;
  /// Pages allocated per coherence policy (gauges, not
  /// counters: reset_stats leaves them).
  std::uint64_t pages_adaptive = 0;
  std::uint64_t pages_invalidate = 0;     ///< see pages_adaptive
  std::uint64_t pages_update = 0;         ///< see pages_adaptive
  std::uint64_t pages_read_mostly = 0;    ///< see pages_adaptive
  std::uint64_t pages_single_writer = 0;  ///< see pages_adaptive

  /// Pages brought in: by misses and prefetch, and brought up to date at
  /// synchronisations (barriers, syncs, adaptive updates).
  std::uint64_t pages_brought_in() const {
    return pages_fetched + barrier_refetches + sync_refetches + updates_received + lock_grant_pages;
  }
  /// Intervals ended: each barrier, sync and lock acquire ends one.
  std::uint64_t intervals_ended() const { return barriers + syncs + lock_acquires; }
  /// Nanoseconds in barriers, syncs and waits for locks.
  std::uint64_t waited_ns() const { return barrier_ns + sync_ns + lock_wait_ns; }

  /// Name and value of every counter, in declaration order (for tables);
  /// the gauges that follow them are for_each_gauge's.
  template <class F>
  void for_each(F&& f) const {
    f("read_faults", read_faults);
    f("write_faults", write_faults);
    f("pages_fetched", pages_fetched);
    f("prefetched", prefetched);
    f("fetch_waits", fetch_waits);
    f("fetch_wait_ns", fetch_wait_ns);
    f("prefetch_used", prefetch_used);
    f("prefetch_unused", prefetch_unused);
    f("evictions", evictions);
    f("diffs", diffs);
    f("diff_runs", diff_runs);
    f("diff_bytes", diff_bytes);
    f("diff_messages", diff_messages);
    f("invalidations", invalidations);
    f("lock_acquires", lock_acquires);
    f("lock_wait_ns", lock_wait_ns);
    f("lock_log_overflows", lock_log_overflows);
    f("barriers", barriers);
    f("barrier_ns", barrier_ns);
    f("mapping_resets", mapping_resets);
    f("copy_log_overflows", copy_log_overflows);
    f("barrier_refetches", barrier_refetches);
    f("barrier_updates_sent", barrier_updates_sent);
    f("syncs", syncs);
    f("sync_ns", sync_ns);
    f("sync_refetches", sync_refetches);
    f("homes_gained", homes_gained);
    f("homes_lost", homes_lost);
    f("updates_received", updates_received);
    f("lock_grant_pages", lock_grant_pages);
    f("updates_adopted", updates_adopted);
    f("updates_dropped", updates_dropped);
    f("updates_watched", updates_watched);
    f("view_protections", view_protections);
  }
  /// Name and value of every gauge (the pages per policy), for tables.
  template <class F>
  void for_each_gauge(F&& f) const {
    f("pages_adaptive", pages_adaptive);
    f("pages_invalidate", pages_invalidate);
    f("pages_update", pages_update);
    f("pages_read_mostly", pages_read_mostly);
    f("pages_single_writer", pages_single_writer);
  }
};

/// Per-Dsm settings; the defaults come from the MPIDSM_* variables.
struct DsmSettings {
  std::size_t size;                ///< MPIDSM_DSM_SIZE
  std::size_t cache_pages;         ///< MPIDSM_CACHE_PAGES
  std::size_t prefetch_pages;      ///< MPIDSM_PREFETCH_PAGES (0: no prefetch)
  std::size_t max_checking_pages;  ///< MPIDSM_MAX_CHECKING_PAGES
  std::size_t locks;               ///< MPIDSM_LOCKS
  bool print_stats;                ///< MPIDSM_STATS: print at exit, track prefetch use
  bool barrier_refetch;            ///< MPIDSM_BARRIER_REFETCH
  bool adaptive_updates;           ///< MPIDSM_ADAPTIVE_UPDATES
  bool fetch_by_call;              ///< MPIDSM_FETCH_BY_CALL
  HomeMigration home_migration;    ///< MPIDSM_HOME_MIGRATION
  Coherence coherence;             ///< MPIDSM_COHERENCE: of allocations that name none
  DiffKernel diff_kernel;          ///< MPIDSM_DIFF_KERNEL: this rank's, may differ per rank

  /// The settings the MPIDSM_* configuration gives.
  static DsmSettings from(const Config& config) {
    return {config.dsm_size,           config.cache_pages,      config.prefetch_pages,
            config.max_checking_pages, config.dsm_locks,        config.dsm_stats,
            config.barrier_refetch,    config.adaptive_updates, config.fetch_by_call,
            config.home_migration,     config.coherence,        config.diff_kernel};
  }
};

/// What Dsm::make_accessible guarantees for a range.
enum class Access { read, read_write };

class DsmAccess;

/// The coherent shared region of a Runtime (see the header and docs/consistency.md).
class Dsm {
 public:
  /// Collective: reserves MPIDSM_DSM_SIZE bytes at one address on every rank.
  explicit Dsm(Runtime& runtime);
  /// Collective, with the same settings on every rank.
  Dsm(Runtime& runtime, const DsmSettings& settings);
  ~Dsm();  ///< collective
  Dsm(const Dsm&) = delete;
  Dsm& operator=(const Dsm&) = delete;

  /// Collective, same count and placement on every rank; the same pointer on
  /// every rank. Memory starts zeroed. The coherence policy is
  /// DsmSettings::coherence (MPIDSM_COHERENCE, adaptive unless set).
  template <class T>
  T* allocate(std::size_t count, Placement placement = Placement::block()) {
    return allocate<T>(count, std::move(placement), default_coherence());
  }
  /// The same, with the pages' coherence policy (the same on every rank).
  template <class T>
  T* allocate(std::size_t count, Placement placement, Coherence coherence) {
    static_assert(std::is_trivially_copyable_v<T>, "DSM data must be trivially copyable");
    return static_cast<T*>(allocate_bytes(array_bytes(count, sizeof(T), rank(), "Dsm::allocate"),
                                          placement, coherence));
  }
  /// Collective: releases everything, then frees the allocation at `address`.
  void free(void* address);

  /// Collective: release, exchange of write notices, acquire. Errc::invalid_state
  /// on every rank when some rank calls it while holding a lock.
  void barrier();

  /// Pairwise synchronisation with each rank in `peers` (a stencil's
  /// neighbours, say), each of which must call sync_with naming this rank:
  /// the k-th call naming a rank matches that rank's k-th call naming this
  /// one. A release, then an acquire of each peer's writes: whatever a peer
  /// wrote before its matching call is visible here once this returns.
  /// Not transitive: writes a peer only acquired from a third rank need a
  /// sync with that rank, or a barrier. Pages this rank used that a peer's
  /// notices name are brought up to date from their homes inside the call.
  /// Not collective: ranks outside `peers` are not waited for; an empty
  /// list is a release. With nothing sent: Errc::invalid_rank for a peer
  /// that is not a rank of the runtime, Errc::invalid_argument for this rank
  /// itself or a peer listed twice (the peers then wait, as for a missing
  /// MPI_Recv). A failed release on either side throws on both, naming the
  /// rank. See docs/consistency.md.
  void sync_with(std::span<const int> peers);

  /// Acquire: waits (FIFO) until this rank holds lock `id` (0 .. lock_count()-1),
  /// then invalidates the pages written under it since this rank last held it.
  /// Locks are held by the rank, not the thread. Errc::invalid_state when this
  /// rank already holds it (naming whether this thread or another does; see
  /// lock_among_threads), Errc::out_of_range for a bad id.
  void lock(std::size_t id);
  /// lock() for ranks whose threads share lock ids: when another thread of
  /// this rank holds `id`, waits until it unlocks (threads of one rank queue
  /// here, then the rank queues with the other ranks) instead of failing.
  /// The lock still belongs to the rank; a thread locking an id it holds
  /// itself is Errc::invalid_state.
  void lock_among_threads(std::size_t id);
  /// Release: this rank's writes go home, then the lock passes to the next
  /// waiter. Errc::invalid_state when this rank does not hold it.
  void unlock(std::size_t id);
  /// Lock ids available: 0 .. lock_count()-1 (MPIDSM_LOCKS).
  std::size_t lock_count() const;

  /// Flags: signalling between ranks with coherence, as condition variables
  /// (JIAJIA's jia_setcv, jia_waitcv, jia_resetcv). Ids 0 .. lock_count()-1,
  /// apart from the lock ids; every flag starts lowered.
  /// set_flag: release (this rank's writes go home), then raise flag `id`.
  void set_flag(std::size_t id);
  /// Returns once flag `id` is raised, as an acquire: the writes every rank
  /// made before raising it are visible. Waits politely (yields) meanwhile.
  void wait_flag(std::size_t id);
  /// Lowers flag `id` (no release, no acquire).
  void reset_flag(std::size_t id);

  /// Fetches the pages of [address, address+bytes) that are not cached here, in
  /// one batch per home, so later reads do not fault. Not collective.
  void prefetch(const void* address, std::size_t bytes);

  /// Makes [address, address+bytes) readable (Access::read) or writable
  /// (Access::read_write) without faults, for as long as the returned handle
  /// lives: the kernel (read(), write(), any system call), MPI and other
  /// libraries may then use the memory, which they cannot while a page
  /// faults (a system call fails with EFAULT instead). Coherence is kept
  /// meanwhile: the range's writes are released at every synchronisation and
  /// other ranks' writes arrive in place. Remote pages of the range stay
  /// cached and count against MPIDSM_CACHE_PAGES (Errc::no_memory when they
  /// would take every slot); Errc::unregistered for memory in no allocation.
  /// Not collective. Release every handle before freeing its allocation.
  [[nodiscard]] DsmAccess make_accessible(const void* address, std::size_t bytes, Access access);

  int rank() const;  ///< this rank in the runtime's communicator
  /// First byte of the region (the same address on every rank).
  void* base() const;
  /// Bytes of the region (MPIDSM_DSM_SIZE).
  std::size_t size() const;
  /// Bytes of a page: the unit of coherence and placement.
  std::size_t page_size() const;
  /// The current home rank of the page holding `address` (a barrier may
  /// move it to the page's only writer: set_home_migration); -1 for a
  /// first-touch page nobody has touched yet (Errc::unregistered outside any
  /// allocation).
  int home_of(const void* address) const;
  /// The coherence policy of the allocation holding `address`
  /// (Errc::unregistered outside any allocation).
  Coherence coherence_of(const void* address) const;
  /// The policy of allocations that name none (DsmSettings::coherence).
  Coherence default_coherence() const;
  /// Whether barriers move pages home to their only writer, from the next
  /// barrier on (DsmSettings::home_migration, MPIDSM_HOME_MIGRATION). Every
  /// rank should set the same mode; until they do, barriers use the most
  /// restrictive mode any rank set (off before adaptive before on).
  void set_home_migration(HomeMigration mode);
  /// This rank's counters since creation or reset_stats().
  DsmStats stats() const;
  /// Collective: a barrier, then every rank's counters restart from 0, so
  /// that statistics can leave out initialisation.
  void reset_stats();
  /// Collective: rank 0 prints every rank's statistics as a table on `out`.
  /// Also done at destruction when MPIDSM_STATS=1.
  void print_stats(std::FILE* out = stderr) const;

 private:
  void* allocate_bytes(std::size_t bytes, const Placement& placement, Coherence coherence);

  class Engine;
  /// The engine, or Errc::not_initialized naming `operation` once the runtime
  /// was finalized.
  Engine& live(const char* operation) const;
  std::unique_ptr<Engine> engine_;
  std::weak_ptr<const void> alive_;  ///< Runtime::lifetime()
};

/// The lifetime of a Dsm::make_accessible range: accessible until release()
/// or destruction. Movable, not copyable.
class DsmAccess {
 public:
  DsmAccess() = default;
  /// Takes over the range of `other`, which becomes empty.
  DsmAccess(DsmAccess&& other) noexcept { *this = std::move(other); }
  /// Releases this range, then takes over that of `other`.
  DsmAccess& operator=(DsmAccess&& other) noexcept;
  DsmAccess(const DsmAccess&) = delete;
  DsmAccess& operator=(const DsmAccess&) = delete;
  ~DsmAccess() { release(); }
  /// Ends the access early (pages may fault again); idempotent. Safe after
  /// the Dsm is gone.
  void release() noexcept;
  /// First byte of the range.
  const void* address() const { return address_; }
  /// Bytes of the range (0 once released).
  std::size_t bytes() const { return bytes_; }

 private:
  friend class Dsm;
  DsmAccess(const void* address, std::size_t bytes) : address_(address), bytes_(bytes) {}
  const void* address_ = nullptr;
  std::size_t bytes_ = 0;
};

/// A DSM lock as an object (BasicLockable, so std::lock_guard and
/// std::unique_lock work). Ranks naming the same id share the lock.
class DsmMutex {
 public:
  /// Lock `id` of `dsm`; nothing is taken yet.
  DsmMutex(Dsm& dsm, std::size_t id) : dsm_(&dsm), id_(id) {}
  /// Dsm::lock(id): an acquire.
  void lock() { dsm_->lock(id_); }
  /// Dsm::unlock(id): a release.
  void unlock() { dsm_->unlock(id_); }
  /// The lock id.
  std::size_t id() const { return id_; }

 protected:
  /// The region whose lock this is.
  Dsm* dsm_;
  /// The lock id.
  std::size_t id_;
};

/// A DSM lock for ranks with several threads: threads of a rank that lock
/// the same id wait for each other (Dsm::lock_among_threads) instead of
/// failing.
class DsmThreadMutex : public DsmMutex {
 public:
  /// Lock `id` of `dsm`; nothing is taken yet.
  using DsmMutex::DsmMutex;
  /// Dsm::lock_among_threads(id): waits for other threads of the rank, then acquires.
  void lock() { dsm_->lock_among_threads(id_); }
};

/// @}

}  // namespace mpidsm
