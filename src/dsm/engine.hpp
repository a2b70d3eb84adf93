// The DSM engine behind mpidsm::Dsm: the page table, fault resolution, the
// page cache, release (diffs home) and acquire (invalidation by write
// notices) around barriers and locks.
//
// Metadata follows the pages homed and cached here, never the region times
// the ranks: the page table (1 byte per page) and the cache index are lazy
// arrays whose memory appears only where entries are written (pages homed
// or cached here); homes come from the allocation list by arithmetic; twins,
// prefetch and pin marks live in the cache's slots.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "fault_handler.hpp"
#include "home_directory.hpp"
#include "lazy_array.hpp"
#include "lock_table.hpp"
#include "mpidsm/dsm.hpp"
#include "page_cache.hpp"
#include "pgas/heap_allocator.hpp"
#include "region.hpp"
#include "sharing.hpp"
#include "ticks.hpp"

namespace mpidsm {

enum class PageState : std::uint8_t {
  invalid = 0,     // remote page not cached, or in no allocation: PROT_NONE
  cached,          // remote page, clean copy: PROT_READ
  dirty,           // remote page with a twin: PROT_READ|PROT_WRITE
  home_clean,      // homed here, in place: PROT_READ (a write faults to record a notice)
  home_dirty,      // homed here, written this interval: PROT_READ|PROT_WRITE
  home_exclusive,  // homed here, never copied by another rank: PROT_READ|PROT_WRITE,
                   // writes need no notice (sharing.hpp)
};

class Dsm::Engine final : public detail::FaultTarget {
 public:
  Engine(Runtime& runtime, const DsmSettings& settings);
  ~Engine();

  bool handle_fault(void* address, bool write) override;
  void make_accessible(const void* address, std::size_t size, bool write) override;

  void* allocate(std::size_t bytes, const Placement& placement);
  void free(void* address);
  void barrier();
  void lock(std::size_t id);
  void unlock(std::size_t id);
  void prefetch(const void* address, std::size_t bytes);
  int home_of(const void* address);
  DsmStats stats();
  void print_stats(std::FILE* out);

  std::byte* base() const { return region_.view(); }
  std::size_t size() const { return region_.size(); }
  std::size_t page_size() const { return page_size_; }
  std::size_t lock_count() const { return locks_.count(); }
  int rank() const { return rank_; }
  bool stats_at_exit() const { return print_stats_at_exit_; }

 private:
  std::size_t page_of(const void* address) const {
    return static_cast<std::size_t>(static_cast<const std::byte*>(address) - region_.view()) /
           page_size_;
  }
  std::byte* view(std::size_t page) const { return region_.view() + page * page_size_; }
  std::byte* master(std::size_t page) const { return region_.master() + page * page_size_; }
  void protect(std::size_t page, std::size_t count, int protection);

  // All below: the caller holds mutex_.
  bool resolve(std::size_t page, bool write);
  void fetch(std::size_t page, int home, bool for_write);
  // map: make the view readable (false when the caller makes it writable).
  void fetch_batch(const std::size_t* pages, std::size_t count, int home, bool map = true);
  void make_room();
  void make_twin(std::size_t page);
  void mark_dirty(std::size_t page, PageState state);
  void write_diff(std::size_t page, bool already_read_only = false);
  void release();
  void flush_written_homes();
  void invalidate(std::size_t page);
  void invalidate_all_cached();
  void settle_prefetch(std::size_t page, bool written = false);
  bool touched_since_mapped(std::size_t page);
  void record_notice(std::size_t page);
  // The home rank of a page, -1 when no allocation covers it, or
  // HomeDirectory::undecided for a first-touch page this rank has not seen homed.
  int home_of_page(std::size_t page) const;
  void become_home(std::size_t page);
  void unpin_all();
  void share_exclusive_pages();
  void check_lock_id(std::size_t id, const char* operation) const;
  void exchange_counts(std::int64_t mine, std::vector<std::int64_t>& counts);

  Runtime& runtime_;
  Transport& transport_;
  int rank_;
  std::size_t page_size_;
  std::size_t prefetch_pages_;
  std::size_t max_checking_pages_;
  bool print_stats_at_exit_;
  bool track_prefetch_use_;  // statistics on: tell used from unused prefetched pages
  detail::DsmRegion region_;
  std::size_t pages_;
  detail::HeapAllocator allocator_;  // in pages
  MemoryRegion master_;
  // Per rank: its master copies mapped here for loads and stores (same node,
  // MPIDSM_DIRECT_ACCESS not off), or nullptr to go through UCX.
  std::vector<std::byte*> mapped_master_;
  detail::LockTable locks_;
  detail::SharingRecord sharing_;
  detail::HomeDirectory directory_;  // homes of first-touch pages
  // Per rank, 2 x ranks int64: the notice counts peers pushed, by barrier parity.
  detail::SharedWords barrier_slots_;
  std::vector<std::size_t> exclusive_;  // pages in home_exclusive (and some stale entries)
  detail::PageCache cache_;
  detail::LazyArray<PageState> state_;
  struct Allocation {
    std::size_t first;  // page
    std::size_t pages;
    Placement placement;
  };
  std::vector<Allocation> allocations_;    // sorted by first page
  std::vector<std::size_t> pinned_pages_;  // pages with the cache's pinned mark
  detail::LazyArray<std::byte> twins_;     // memory only for twin slots in use
  std::vector<std::int32_t> free_twins_;
  std::vector<std::size_t> dirty_;               // pages written since the last release
  std::vector<std::int64_t> notices_;            // pages released since the last barrier
  std::vector<std::uint64_t> lock_notices_;      // pages released since the last unlock
  std::vector<std::uint64_t> acquired_notices_;  // scratch for lock()
  std::vector<std::size_t> batch_;               // scratch for fetches
  std::size_t stream_next_ = 0;                  // the read miss that continues a stream
  std::vector<bool> homes_written_;              // per rank, in one release
  struct BarrierScratch {
    std::vector<std::int64_t> outgoing, counts, incoming;
    std::vector<int> sizes, offsets;
  } barrier_scratch_;
  std::vector<bool> held_;  // per lock id: held by this rank
  std::size_t held_count_ = 0;
  std::atomic<std::uint64_t> epoch_{1};  // barriers completed + 1; lock logs are per epoch
  std::uint64_t exchanges_ = 0;          // count exchanges, for the slot parity
  int pagemap_fd_ = -1;  // /proc/self/pagemap, to tell whether a prefetched page was touched
  DsmStats stats_;
  detail::TickClock clock_;
  std::atomic<std::uint64_t> barrier_ticks_{0};    // stats_.barrier_ns, in TickClock ticks
  std::atomic<std::uint64_t> lock_wait_ticks_{0};  // stats_.lock_wait_ns, likewise
  std::mutex mutex_;
};

}  // namespace mpidsm
