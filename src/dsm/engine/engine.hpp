// The DSM engine behind mpidsm::Dsm: the page table, fault resolution, the
// page cache, release (diffs home) and acquire (invalidation by write
// notices) around barriers and locks.
//
// Metadata follows the pages homed and cached here, never the region times
// the ranks: the page table and per-page marks are lazy arrays whose memory
// appears only where entries are written; homes come from the allocation
// list by arithmetic; twins and prefetch marks live in the cache's slots.
//
// Nothing reached from the fault handler allocates: every list the handler
// may grow is reserved for the whole region up front (reserved address
// space; memory only where used), and a page is listed at most once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "dsm/fault/engine_lock.hpp"
#include "dsm/fault/fault_handler.hpp"
#include "dsm/fault/fault_servicer.hpp"
#include "dsm/memory/hot_home_pages.hpp"
#include "dsm/memory/lazy_array.hpp"
#include "dsm/memory/lazy_vector.hpp"
#include "dsm/memory/mapping_budget.hpp"
#include "dsm/memory/page_cache.hpp"
#include "dsm/memory/page_touches.hpp"
#include "dsm/memory/pin_counts.hpp"
#include "dsm/memory/protection_map.hpp"
#include "dsm/memory/region.hpp"
#include "dsm/memory/twin_slots.hpp"
#include "dsm/placement/allocations.hpp"
#include "dsm/placement/home_directory.hpp"
#include "dsm/placement/placement.hpp"
#include "dsm/protocol/barrier_exchange.hpp"
#include "dsm/protocol/barrier_updates.hpp"
#include "dsm/protocol/diff.hpp"
#include "dsm/protocol/diff_batches.hpp"
#include "dsm/protocol/diff_kernels.hpp"
#include "dsm/protocol/home_moves.hpp"
#include "dsm/protocol/lock_holders.hpp"
#include "dsm/protocol/lock_table.hpp"
#include "dsm/protocol/master_guards.hpp"
#include "dsm/protocol/page_calls.hpp"
#include "dsm/protocol/pairwise_sync.hpp"
#include "dsm/protocol/release_notice.hpp"
#include "dsm/protocol/sharing.hpp"
#include "mpidsm/dsm.hpp"
#include "prefetch.hpp"
#include "ticks.hpp"
#include "transport/progress/progress_control.hpp"

namespace mpidsm {

enum class PageState : std::uint8_t {
  invalid = 0,     // remote page not cached, or in no allocation: PROT_NONE
  cached,          // remote page, clean copy: PROT_READ
  dirty,           // remote page with a twin: PROT_READ|PROT_WRITE
  home_parked,     // homed here, not mapped (PROT_NONE): the next access maps it
  home_exclusive,  // homed here, no other rank holds a copy: PROT_READ|PROT_WRITE,
                   // writes need no notice (sharing.hpp)
  home_clean,      // homed here, copied elsewhere: PROT_READ (a write faults to record a notice)
  home_dirty,      // homed here, copied elsewhere, written this interval: PROT_READ|PROT_WRITE
};

class Dsm::Engine final : public detail::FaultTarget {
 public:
  Engine(Runtime& runtime, const DsmSettings& settings);
  ~Engine();

  detail::FaultOutcome handle_fault(void* address, detail::FaultAccess access,
                                    void* context) override;
  void pin(const void* address, std::size_t size, bool write) override;
  void unpin(const void* address, std::size_t size) override;

  // The runtime is gone and UCX with it: forget every registered region
  // without deregistering, so destruction only undoes this process's own
  // mappings.
  void abandon_transport();

  void* allocate(std::size_t bytes, const Placement& placement, Coherence coherence);
  void free(void* address);
  void barrier();
  void sync_with(std::span<const int> peers);
  void lock(std::size_t id, bool wait_for_threads);
  void unlock(std::size_t id);
  void set_flag(std::size_t id);
  void wait_flag(std::size_t id);
  void reset_flag(std::size_t id);
  void reset_stats();
  void prefetch(const void* address, std::size_t bytes);
  // Errc::out_of_range naming `operation` unless [address, address+bytes),
  // bytes > 0, lies inside the region.
  void check_in_region(const void* address, std::size_t bytes, const char* operation) const;
  int home_of(const void* address);
  Coherence coherence_of(const void* address) const;
  Coherence default_coherence() const { return default_coherence_; }
  void set_home_migration(HomeMigration mode);
  DsmStats stats();
  void print_stats(std::FILE* out);

  std::byte* base() const { return region_.view(); }
  std::size_t size() const { return region_.size(); }
  std::size_t page_size() const { return page_size_; }
  // The application's lock ids; the table holds as many again for flags.
  std::size_t lock_count() const { return locks_.count() / 2; }
  int rank() const { return rank_; }
  bool stats_at_exit() const { return print_stats_at_exit_; }

 private:
  std::size_t page_of(const void* address) const {
    return static_cast<std::size_t>(static_cast<const std::byte*>(address) - region_.view()) /
           page_size_;
  }
  std::byte* view(std::size_t page) const { return region_.view() + page * page_size_; }
  std::byte* master(std::size_t page) const { return region_.master() + page * page_size_; }
  std::byte* twin(std::size_t page) { return twins_.at(cache_.entry(page).twin); }
  bool pinned(std::size_t page) const { return pins_.pinned(page); }
  static bool is_home(PageState s) { return s >= PageState::home_parked; }

  // All below: the caller holds mutex_ (an EngineLock).
  // view.cpp: protection within the mapping budget.
  void protect(std::size_t page, std::size_t count, int protection);
  void leave_read_only(std::size_t first, std::size_t count);
  void coalesce(std::size_t keep_first, std::size_t keep_count);
  // A copy leaving the view (PROT_NONE): at once, or, read-only inside a
  // DropBatch, when the batch ends, in one mprotect per run of such pages.
  void drop_view(std::size_t page);
  void apply_drops() noexcept;
  class DropBatch;
  // fault_resolution.cpp
  static int protection_of(PageState state);
  // The fault servicer's resolver (engine: this Engine; faulting_thread:
  // that thread's record of unexplained faults). Locks mutex_ itself.
  static detail::FaultOutcome resolve_fault(void* engine, void* address, detail::FaultAccess access,
                                            void* faulting_thread) noexcept;
  // Resolves a fault under mutex_; with `on_node_only`, nullopt instead for
  // a page whose resolution may need UCX (an invalid page).
  std::optional<detail::FaultOutcome> resolve_in_place(void* address, detail::FaultAccess access,
                                                       void* faulting_thread,
                                                       bool on_node_only) noexcept;
  // True when no fault can reach UCX: every home and record is mapped here.
  bool faults_stay_on_node() const;
  detail::FaultOutcome resolve(std::size_t page, detail::FaultAccess access);
  void report_stray_access(const void* address, detail::FaultAccess access) const;
  void map_home(std::size_t page, bool write);
  // Returns how many pages it fetched: batch_[0 .. count), the miss first.
  std::size_t fetch(std::size_t page, int home, bool for_write);
  void free_following_home_pages(std::size_t page);
  void write_cached(std::size_t page);
  enum class ViewAfterFetch {
    readable,  // mapped for reads
    watched,   // mapped for reads, page-table entries dropped: touched_since_mapped tells use
    left,      // left inaccessible (the caller makes it writable)
  };
  void fetch_batch(const std::size_t* pages, std::size_t count, int home,
                   ViewAfterFetch after = ViewAfterFetch::readable);
  struct HomeBatch {
    const std::size_t* pages;  // increasing
    std::size_t count;
    int home;
  };
  void fetch_batches(const HomeBatch* batches, std::size_t count, ViewAfterFetch after);
  // A page whose bytes a fetch brought (readable already) becomes a cached
  // copy; one that came through UCX is a candidate for barrier updates.
  void cache_fetched(std::size_t page, bool through_ucx);
  // One fetch_batches batch, through PageCalls.
  void ask_home(const HomeBatch& batch, bool for_writing);
  std::size_t cache_room() const;
  // Pages one fetch takes at most: the miss and its prefetch, within the cache.
  std::size_t fetch_batch_capacity() const {
    return std::min(prefetch_pages_, cache_.capacity() - 1) + 1;
  }
  // Pages a stream of first writes makes writable after the written one,
  // with one mprotect, when they need no fetch (cached copies, twinned;
  // home pages nobody else holds): the prefetch, but at least 63. Linux
  // flushes a range of up to 33 pages from the TLB page by page and a
  // larger one whole, and in a VM each page's flush may exit to the
  // hypervisor: in this project's PVM guest 16 pages cost 4.4 us each to
  // make writable, 64 pages 1.8 us each (benchmarks/dsm_miss_latency,
  // rewrite_scan). Unwritten, such a page costs a twin and a compare.
  std::size_t write_ahead_pages() const {
    return prefetch_pages_ == 0 ? 0 : std::max<std::size_t>(prefetch_pages_, 63);
  }
  void make_room(std::size_t slots);
  void drop_cached(std::size_t page);
  void forget_copy(std::size_t page);
  void leave_cache(std::size_t page);
  void drop_registration(std::size_t page);
  void make_twins(std::size_t first, std::size_t count);
  // A cached page's twin, if it has one, goes back to the pool.
  void drop_twin(std::size_t page);
  // Writable in `state`: mark_dirty makes the view so; set_dirty is for a
  // page whose view already is. Both list the page for the next release, once.
  void mark_dirty(std::size_t page, PageState state);
  void set_dirty(std::size_t page, PageState state);
  // How many pages directly after `page`, at most `limit`, `take` accepts in a row.
  template <class Take>
  std::size_t pages_following(std::size_t page, std::size_t limit, Take&& take) const {
    std::size_t count = 0;
    while (count < limit && page + 1 + count < pages_ && take(page + 1 + count)) ++count;
    return count;
  }
  // coherence.cpp
  void write_diff(std::size_t page, bool already_read_only = false);
  // The remote handler that applies other ranks' diffs to pages homed here.
  static void apply_remote_diffs(void* engine, int source, std::uint64_t argument,
                                 const std::byte* bytes, std::size_t size);
  void release_pinned(std::size_t page);
  detail::DiffShape diff_to_home(std::size_t page, const std::byte* current);
  // One diff in the statistics; returns `shape`.
  detail::DiffShape count_diff(const detail::DiffShape& shape);
  // Which release: a lock's keeps rewritten copies writable; a barrier's
  // and a sync's leave every copy read-only.
  enum class ReleaseKind { lock, barrier_or_sync };
  std::span<const std::byte> release(ReleaseKind kind, int carry_home = -1);
  bool stays_writable(std::size_t page, ReleaseKind kind) {
    return kind == ReleaseKind::lock && (reuse_[page] & kRewrittenUnderLocks) &&
           state_[page] == PageState::dirty && !pinned(page) &&
           cache_.entry(page).twin != detail::PageCache::none;
  }
  bool release_to_snapshot(std::size_t page);
  bool release_writable_copy(std::size_t page);
  void release_hot_home_pages();
  bool becomes_hot(std::size_t page);
  void make_exclusive(std::size_t page);
  void demote_hot_page(std::size_t page);
  void take_new_copies();
  void share_home_page(std::size_t page);
  // copies_for_writing.cpp: PageCalls' CopiedForWriting hook (from its
  // handler, beside this rank's threads), and what it does.
  static void track_pages_copied_for_writing(void* engine, std::size_t first, std::size_t count);
  void track_untracked_home_pages(std::size_t first, std::size_t count);
  std::span<const std::byte> flush_written_homes(int carry_home = -1);
  void invalidate(std::size_t page);
  void refresh_in_place(std::size_t page);
  using BarrierScratch = detail::BarrierExchange::Scratch;
  // policies.cpp: what each allocation's Coherence changes.
  // The policy of `page` (adaptive outside any allocation); no lookup while
  // every allocation is adaptive.
  Coherence policy_of_page(std::size_t page) const {
    return allocations_.all_adaptive()
               ? Coherence::adaptive
               : allocations_.coherence_of(page).value_or(Coherence::adaptive);
  }
  // update and read_mostly, and adaptive pages this rank keeps fetching
  // again (recurrent): an acquire brings a copy up to date, not drops it.
  bool keeps_copies(std::size_t page) const {
    const Coherence policy = policy_of_page(page);
    return policy == Coherence::update || policy == Coherence::read_mostly ||
           (policy == Coherence::adaptive && (reuse_[page] & kScoreMask) >= kRecurrent);
  }
  // keeps_copies, at an acquire that names `page`: a recurrent adaptive page
  // whose last update went unread goes back to invalidation instead.
  bool keeps_copy_now(std::size_t page);
  // A fetch of `page`: after an acquire took the copy, one more sign that
  // it should be kept up to date instead (adaptive write-update).
  void note_refetch(std::size_t page);
  // An acquire dropped this rank's copy of `page` (kLostToNotice, lost_in_).
  void note_loss(std::size_t page);
  // For another rank's notice at an acquire: a clean copy of a page whose
  // policy keeps copies joins refresh_ (brought up to date by
  // refresh_copies) instead of leaving the cache; false for any other page.
  bool refresh_later(std::size_t page);
  // At a barrier, after its updates: refresh_'s pages, fetched afresh, are
  // candidates for the next barrier's subscriptions.
  void refresh_barrier_copies();
  // After a failure: refresh_'s pages leave the cache instead.
  void drop_refreshes();
  // A write fault on a single_writer page before any acquire since the
  // last barrier: its notice will say so (ReleaseNotice::unsynchronised).
  void note_write(std::size_t page) {
    if (acquired_since_barrier_ || (listed_[page] & kUnsynced) ||
        policy_of_page(page) != Coherence::single_writer)
      return;
    listed_[page] |= kUnsynced;
    unsynced_.push_back(page);
  }
  // Marks this rank's notices (x.outgoing) of pages note_write marked; a
  // marked page with no notice (a home page nobody copied: written in
  // place) joins them as an unchanged one, which only find_write_races reads.
  void mark_unsynchronised(BarrierScratch& x);
  // Two ranks' unsynchronised notices of one single_writer page: race_
  // names them (barrier() throws it once complete, on every rank alike).
  void find_write_races(const BarrierScratch& x);
  // A single_writer page goes home whole (it has no twin), from `bytes`.
  detail::DiffShape write_whole_page(std::size_t page, const std::byte* bytes);
  void invalidate_all_cached();
  // barrier_updates.cpp (the engine's side of protocol/barrier_updates.hpp)
  // At a barrier's start, after the release (x.outgoing: this rank's
  // notices): subscribes to the pages used since the last barrier
  // (used_through_ucx) at their homes, composes the pushes of the pages
  // homed here to their readers, and marks both in x.mask.
  // BarrierExchange::exchange_counts sends them.
  void prepare_updates(BarrierScratch& x);
  // After the exchange (`total` notices in x.incoming): the subscriptions,
  // pushes and late answers (BarrierUpdates::finish; failed: no late ones).
  void finish_updates(const BarrierScratch& x, bool failed, std::int64_t total);
  // For a notice of another rank: a subscribed page waits for its home's
  // answer rather than leaving the cache; false for any other page.
  bool await_update(std::size_t page);
  // Installs what the homes sent; a page awaited but not sent leaves the cache.
  void install_updates();
  // Forgets this barrier's subscriptions and their marks (`resend`:
  // BarrierUpdates::forget).
  void forget_updates(bool resend = false);
  // For a possibly-written notice: such a page leaves the cache without a
  // refetch, its home still counting the copy until the next barrier.
  bool keep_counted(std::size_t page);
  // The home's count of each of `pages` not cached here (again) goes; the
  // list is emptied.
  void drop_uncached_counts(std::vector<std::size_t>& pages);
  // Cached, not pinned, homed beyond this node, used in the ending interval.
  bool used_through_ucx(std::size_t page);
  // A barrier brought `page` up to date, or keeps it subscribed: it counts
  // as fetched in the interval the barrier starts, a candidate for the next
  // barrier's subscriptions.
  void count_as_fetched_next(std::size_t page) {
    cache_.entry(page).fetched_in = epoch_.load(std::memory_order_relaxed) + 1;
    updates_.note_fetched(page);
  }
  // Cached, not pinned, homed beyond this node, and used since it was last
  // brought up to date (by a fault it always was): a barrier or sync
  // updates it in place rather than dropping it.
  bool used_since_updated(std::size_t page);
  // A watched copy's view was touched since its update (counted in its
  // cache entry's reads_in_a_row).
  bool read_since_updated(std::size_t page);
  // Pages [first, first+count), just updated in place: watched for use.
  void watch_updated(std::size_t first, std::size_t count);
  // Orders pages by home, then page: a batch per home, runs within it.
  bool home_then_page(std::size_t a, std::size_t b) const;
  void drop_keeping_count(std::size_t page);
  void record_notice(std::size_t page, bool possibly_written = false);
  // A page written but left unchanged: a hint for the next barrier's home
  // moves (ReleaseNotice::unchanged), unless the page is noticed anyway.
  // write_diff does not call it for a page only twinned ahead of a stream.
  void record_unchanged(std::size_t page);
  void record_home_notice(std::size_t page);
  void fetch_home_copy(std::size_t page, std::byte* into);
  void settle_prefetch(std::size_t page, bool written = false);
  bool touched_since_mapped(std::size_t page) const { return touches_.touched(view(page)); }
  // engine.cpp
  // The home rank of a page, -1 when no allocation covers it, or
  // HomeDirectory::undecided for a first-touch page this rank has not seen homed.
  int home_of_page(std::size_t page) const {
    const int moved = moves_.moved_home(page);
    return moved >= 0 ? moved : placed_home_of_page(page);
  }
  // The home its placement (or first touch) gave the page.
  int placed_home_of_page(std::size_t page) const;
  void become_home(std::size_t page);
  void place_homes(const detail::Allocations::Allocation& allocation);
  void forget_allocation(std::size_t first, std::size_t pages);
  void unmap(std::size_t first, std::size_t pages);
  std::size_t pinned_in(std::size_t first, std::size_t pages) const;
  // pairwise_sync.cpp (the engine's side of protocol/pairwise_sync.hpp)
  class SyncPages;  // the pages as the sync's acquire sees them
  // Gets `pages` (cached, each counted at its home already) afresh into
  // their copies; the list is emptied. On an error they leave the cache.
  // Returns how many it brought up to date; a mapped home's are copied.
  std::size_t refresh_copies(std::vector<std::size_t>& pages);
  // locks.cpp
  // Errc::out_of_range naming `operation` and `what` ("lock", "flag") unless
  // id < lock_count().
  void check_lock_id(std::size_t id, const char* operation, const char* what = "lock") const;
  // lock()/unlock() of any id of the table, checked or internal.
  void acquire_lock(std::size_t id, bool wait_for_threads);
  void release_lock(std::size_t id);
  [[noreturn]] void fail_abandoned_wait(std::size_t id);
  // Locks an abandoned wait was granted since: passed on to the next waiter.
  void pass_on_abandoned_locks();
  std::size_t flag_lock(std::size_t flag) const { return lock_count() + flag; }
  // The first `count` lock notices have been delivered (by a barrier, or to
  // a lock's log at the outermost unlock).
  void forget_lock_notices(std::size_t count);
  // lock_grants.cpp (the engine's side of protocol/lock_grants.hpp)
  // Whether `page` may come with `id`'s grants: the lock's acquire is a call
  // to the page's home, and the page's policy keeps copies up to date.
  bool grantable(std::size_t id, std::size_t page) const;
  void wish_for_lock(std::size_t id, std::size_t page);
  // Before acquiring `id`: the wishes on the wire, into `wished`; how many.
  std::size_t grant_wishes(std::size_t id, std::uint64_t* wished);
  // After the acquire read its notices: installs the pages the grant brought
  // (a copy refreshed in place, or a fetched one), into `installed`; how many.
  std::size_t take_grants(std::span<const std::uint64_t> wished, std::size_t* installed);
  void install_granted_copy(std::size_t page, const std::byte* bytes);
  // home_moves.cpp (the engine's side of protocol/home_moves.hpp)
  // An application thread (this_thread()) used the DSM: a second one makes
  // this rank vote against home moves from then on.
  void note_thread(const void* thread) {
    const void* first = first_thread_.load(std::memory_order_relaxed);
    if (first == thread) return;
    if (first == nullptr && first_thread_.compare_exchange_strong(first, thread)) return;
    if (first != thread) several_threads_.store(true, std::memory_order_relaxed);
  }
  static const void* this_thread();  // fault_resolution.cpp: a per-thread address
  // This rank's vote on home moves for its barrier count.
  unsigned home_move_vote() const;
  // The pages written unchanged since the last barrier (record_unchanged)
  // join x.outgoing, unless noticed since.
  void append_unchanged_notices(BarrierScratch& x);
  // Marks this rank's notices (x.outgoing) whose copy it still holds
  // (ReleaseNotice::writer_holds_copy).
  void mark_copies_held(BarrierScratch& x);
  // The barrier's moves, every rank alike: the old home gives the page up,
  // the writer becomes its home, every other rank drops its copy, and the
  // old home's counts of their copies go.
  void move_homes(std::span<const detail::HomeMoves::Move> moves);
  void give_home(const detail::HomeMoves::Move& move);
  void take_home(const detail::HomeMoves::Move& move);
  void drop_for_move(const detail::HomeMoves::Move& move);
  // barrier.cpp: the barrier's phases.
  struct BarrierEntry {
    bool holds_lock = false;              // this rank holds a lock: the barrier fails
    std::optional<Error> failure;         // this rank's release failed
    std::size_t lock_notices_before = 0;  // lock notices the barrier delivers
  };
  struct BarrierCounts {
    std::int64_t total = 0;  // notices of every rank
    int holder = -1;         // the first rank that holds a lock, or -1
    bool any_failed = false;
    bool delivered = false;                    // the notices rode along with the counts
    HomeMigration moves = HomeMigration::off;  // what every rank's vote allows
  };
  // The release; this rank's notices into x.outgoing (unless it holds a lock).
  BarrierEntry release_for_barrier(BarrierScratch& x);
  // Every rank's count into x.counts (BarrierExchange::exchange_counts), summed up.
  BarrierCounts exchange_barrier_counts(const BarrierEntry& entry, BarrierScratch& x);
  // Keeps the notices for the next barrier and throws on every rank alike.
  [[noreturn]] void fail_barrier(const BarrierScratch& x, const BarrierCounts& counts,
                                 std::optional<Error> failure,
                                 std::optional<detail::DrivingProgress>& driving);
  // The acquire of the others' notices, and the barrier's updates.
  void acquire_barrier_notices(const BarrierScratch& x, const BarrierCounts& counts,
                               std::size_t lock_notices_before);
  void forget_notices(std::span<const std::int64_t> notices);
  void record_notice_of_barrier(std::int64_t notice);

  Runtime& runtime_;
  std::weak_ptr<const void> runtime_alive_;  // Runtime::lifetime()
  Transport& transport_;
  int rank_;
  std::size_t page_size_;
  std::size_t prefetch_pages_;
  std::size_t max_checking_pages_;
  bool print_stats_at_exit_;
  bool barrier_refetch_;                      // DsmSettings::barrier_refetch
  bool adaptive_updates_;                     // DsmSettings::adaptive_updates
  Coherence default_coherence_;               // DsmSettings::coherence
  const detail::DiffKernelOps& diff_kernel_;  // DsmSettings::diff_kernel
  bool track_prefetch_use_;         // statistics on: tell used from unused prefetched pages
  detail::MappablePeers mappable_;  // before everything shared that peers may map
  detail::DsmRegion region_;
  std::size_t pages_;
  detail::Allocations allocations_;
  MemoryRegion master_;
  detail::MasterGuards guards_;  // who stores into a page of a master copy, and how
  // Per rank: its master copies mapped here for loads and stores (same node,
  // MPIDSM_DIRECT_ACCESS not off), or nullptr to go through UCX.
  std::vector<std::byte*> mapped_master_;
  detail::LockTable locks_;
  detail::PageCache cache_;
  detail::SharingRecord sharing_;
  detail::HomeDirectory directory_;                 // homes of first-touch pages
  detail::BarrierExchange exchange_;                // the barrier's counts and notices
  detail::HomeMoves moves_;                         // homes that moved to their writers
  std::atomic<const void*> first_thread_{nullptr};  // the first thread to use the DSM
  std::atomic<bool> several_threads_{false};        // a second one did since
  detail::LazyArray<PageState> state_;
  detail::ProtectionMap protection_;
  detail::MappingBudget& budget_;
  std::uint64_t protection_changes_ = 0;  // tells a fault that nothing can resolve
  // Pages a DropBatch dropped from the view: protection_ says PROT_NONE
  // already, their mprotect waits for the batch's end (or the next protect).
  std::vector<std::size_t> drops_;
  int drop_batches_ = 0;  // DropBatch scopes open (nested acquires)
  detail::PinCounts pins_;
  // Per page: which of the lists below hold it.
  detail::LazyArray<std::uint8_t> listed_;
  static constexpr std::uint8_t kInDirty = 1, kInNotices = 2, kInLockNotices = 4;
  // A home page made trackable because another rank copied it: it was
  // writable without faults, so its next notice says "possibly written".
  static constexpr std::uint8_t kUnwatched = 8;
  // Subscribed at this barrier's home; awaiting its answer (BarrierUpdates).
  static constexpr std::uint8_t kSubscribed = 16, kAwaitingUpdate = 32;
  // In unchanged_.
  static constexpr std::uint8_t kInUnchanged = 64;
  // Written before any acquire since the last barrier (note_write).
  static constexpr std::uint8_t kUnsynced = 128;
  // Adaptive write-update (policies.cpp), per page, of this rank's copy:
  // kLostToNotice, an acquire dropped it; a score (bits 1-2) of the fetches
  // that soon followed such losses, up to 3. From 2 on (kRecurrent) acquires
  // keep the copy up to date instead; kUnreadUpdate: the last update went
  // unread, and a second one in a row resets the score.
  detail::LazyArray<std::uint8_t> reuse_;
  static constexpr std::uint8_t kLostToNotice = 1, kScoreStep = 2, kScoreMask = 6, kRecurrent = 4,
                                kUnreadUpdate = 8;
  // Per page, the low byte of the epoch whose acquire last set kLostToNotice:
  // a fetch more than kSoonAfterLoss barriers later does not score.
  detail::LazyArray<std::uint8_t> lost_in_;
  static constexpr std::uint8_t kSoonAfterLoss = 4;
  // A copy a lock's release diffed: written again before the next lock's
  // release, it stays writable (release_writable_copy, coherence.cpp).
  static constexpr std::uint8_t kRewrittenUnderLocks = 16;
  // A page homed here that another rank wrote while it was hot
  // (demote_hot_page): its snapshot then held neither this rank's writes
  // nor that rank's, so it was noticed as written at the next release
  // whether or not this rank wrote it. It is tracked by faults from then
  // on, never hot again (becomes_hot).
  static constexpr std::uint8_t kHomeTakesDiffs = 32;
  detail::TwinSlots twins_;                         // one per cache slot
  detail::HotHomePages hot_;                        // home pages kept writable
  std::vector<std::byte> scratch_;                  // one page: snapshots and refreshes
  detail::LazyVector<std::size_t> dirty_;           // pages written since the last release
  detail::LazyVector<std::int64_t> notices_;        // pages released since the last barrier
  detail::LazyVector<std::size_t> unchanged_;       // pages written unchanged since then
  detail::LazyVector<std::size_t> unsynced_;        // pages note_write marked since then
  detail::LazyVector<std::uint64_t> lock_notices_;  // pages released since the last unlock
  std::vector<std::uint64_t> acquired_notices_;     // scratch for lock()
  std::vector<std::size_t> batch_;                  // scratch for fetches
  std::vector<std::size_t> counted_uncached_;       // keep_counted's pages, until the next barrier
  std::vector<Request> gets_;                       // a fetch's gets in flight
  detail::MissStreams streams_;
  std::vector<bool> homes_written_;  // per rank: a flush is due
  detail::PairwiseSync sync_;
  std::vector<std::size_t> refresh_;     // pages an acquire fetches afresh (refresh_copies)
  bool acquired_since_barrier_ = false;  // a lock, flag or sync acquired since (note_write)
  std::vector<std::pair<std::size_t, std::size_t>> unsynced_writes_;  // (page, writer) scratch
  std::optional<Error> race_;  // find_write_races' finding, thrown at the barrier's end
  detail::LockHolders holders_;
  std::atomic<std::uint64_t> epoch_{1};  // barriers completed + 1; lock logs are per epoch
  detail::PageTouches touches_;          // whether a prefetched or updated page was touched
  DsmStats stats_;
  detail::TickClock clock_;
  std::atomic<std::uint64_t> barrier_ticks_{0};    // stats_.barrier_ns, in TickClock ticks
  std::atomic<std::uint64_t> lock_wait_ticks_{0};  // stats_.lock_wait_ns, likewise
  std::uint64_t fetch_wait_ticks_ = 0;             // stats_.fetch_wait_ns (under mutex_)
  std::atomic<std::uint64_t> sync_ticks_{0};       // stats_.sync_ns, likewise
  std::mutex mutex_;
  // The thread that holds mutex_ to wait for a fault's fetch, if any
  // (track_pages_copied_for_writing may act on its behalf meanwhile).
  std::atomic<const void*> fetching_for_fault_{nullptr};
  // Last: their remote handlers are registered only once the rest exists.
  detail::PageCalls page_calls_;    // fetches from homes UCX reaches through messages
  detail::DiffBatches diffs_;       // to homes reached through UCX
  detail::BarrierUpdates updates_;  // the pages a barrier invalidates, from their homes
  // Faults that may reach UCX, when a second thread may use the worker
  // (MPIDSM_PROGRESS_THREAD not off); destroyed first, once no fault can come.
  std::unique_ptr<detail::FaultServicer> fault_servicer_;
};

// An acquire's scope (mutex_ held throughout): the copies it drops leave
// the view together when it ends (view.cpp, drop_view).
class Dsm::Engine::DropBatch {
 public:
  explicit DropBatch(Engine& engine) : e_(engine) { ++e_.drop_batches_; }
  ~DropBatch() {
    if (--e_.drop_batches_ == 0) e_.apply_drops();
  }
  DropBatch(const DropBatch&) = delete;
  DropBatch& operator=(const DropBatch&) = delete;

 private:
  Engine& e_;
};

}  // namespace mpidsm
