// The engine's set-up, allocations, explicit prefetch and statistics.
#include "engine.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "common/mpi_exchange.hpp"
#include "dsm/placement/placement.hpp"
#include "dsm/test_hooks.hpp"

namespace mpidsm {
namespace {

// An allocation whose pages homed here form at most this many runs is mapped
// for its home at once (one mprotect per run); a finer one (cyclic with
// small blocks) is parked and mapped page by page at first access, so the
// view never holds a mapping per page of memory nobody touches.
constexpr std::size_t kEagerHomeRuns = 64;

}  // namespace

Dsm::Engine::Engine(Runtime& runtime, const DsmSettings& settings)
    : runtime_(runtime),
      runtime_alive_(runtime.lifetime()),
      transport_(runtime.transport()),
      rank_(runtime.rank()),
      page_size_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))),
      prefetch_pages_(settings.prefetch_pages),
      max_checking_pages_(settings.max_checking_pages),
      print_stats_at_exit_(settings.print_stats),
      barrier_refetch_(settings.barrier_refetch),
      adaptive_updates_(settings.adaptive_updates),
      default_coherence_(settings.coherence),
      diff_kernel_(*detail::find_diff_kernel(settings.diff_kernel)),  // Dsm checked it
      track_prefetch_use_(settings.print_stats),
      mappable_(transport_, runtime.config().direct_access),
      region_(runtime.comm(), transport_, settings.size, mappable_),
      pages_(region_.size() / page_size_),
      allocations_(pages_, page_size_, runtime.size(), rank_),
      master_(region_.master_region()),
      guards_(runtime.comm(), transport_, pages_, mappable_),
      locks_(runtime.comm(), transport_, 2 * settings.locks,  // then the flags' locks
             settings.locks, mappable_, &Engine::apply_remote_diffs, this,
             detail::DiffBatches::capacity_for(page_size_), {region_.master(), region_.size()},
             page_size_, sharing_),
      cache_(std::min(settings.cache_pages, pages_), pages_),
      sharing_(runtime.comm(), transport_, pages_, fetch_batch_capacity(), mappable_),
      directory_(runtime.comm(), transport_, pages_, mappable_),
      exchange_(runtime.comm(), transport_, mappable_, pages_),
      moves_(pages_, settings.home_migration),
      state_(pages_),
      protection_(pages_),
      budget_(detail::MappingBudget::process()),
      pins_(pages_),
      listed_(pages_),
      reuse_(pages_),
      lost_in_(pages_),
      twins_(cache_.capacity(), page_size_),
      hot_(pages_, page_size_),
      scratch_(page_size_),
      batch_(fetch_batch_capacity()),
      homes_written_(static_cast<std::size_t>(runtime.size()), false),
      sync_(rank_, runtime.size(), pages_, page_size_),
      holders_(locks_.count(), rank_),
      page_calls_(transport_, sharing_, region_, page_size_, cache_.capacity(),
                  settings.fetch_by_call, {&Engine::track_pages_copied_for_writing, this}),
      diffs_(transport_, diff_kernel_, page_size_, &Engine::apply_remote_diffs, this,
             stats_.diff_messages),
      updates_(transport_, page_size_, 2 * cache_.capacity()) {
  // Sized for the whole region up front (a page is listed at most once), so
  // faults and releases never allocate. Large reservations are address
  // space: the kernel provides memory only for the entries written.
  dirty_.reserve(pages_);
  notices_.reserve(pages_);
  unchanged_.reserve(pages_);
  unsynced_.reserve(pages_);
  lock_notices_.reserve(pages_);
  acquired_notices_.reserve(detail::LockRecordLayout::ring_entries);
  counted_uncached_.reserve(cache_.capacity());
  // A run per page at most: a fault's batch.
  gets_.reserve(cache_.capacity());
  // Homes that count fetched copies in their handlers uncount dropped ones
  // there too (CPU atomics, never racing a NIC's on the same words).
  if (page_calls_.used()) sharing_.drop_through_calls();
  // Stores into a master copy hold its page's guard (master_guards.hpp):
  // one whose guards are not mapped here is written through messages.
  for (int peer = 0; peer < runtime.size(); ++peer)
    mapped_master_.push_back(guards_.maps(peer) ? region_.peer_master(peer) : nullptr);
  if (!faults_stay_on_node() && runtime.config().progress_thread != ProgressMode::off)
    fault_servicer_ = std::make_unique<detail::FaultServicer>(&Engine::resolve_fault, this);
  detail::register_fault_range(region_.view(), region_.size(), this);
}

Dsm::Engine::~Engine() {
  detail::unregister_fault_range(region_.view());
  budget_.try_take(-static_cast<std::ptrdiff_t>(protection_.mappings() - 1), true);
}

bool Dsm::Engine::faults_stay_on_node() const {
  return region_.every_peer_mapped() && sharing_.direct() && directory_.direct();
}

void Dsm::Engine::abandon_transport() {
  region_.abandon_transport();
  locks_.abandon_transport();
  sharing_.abandon_transport();
  guards_.abandon_transport();
  directory_.abandon_transport();
  exchange_.abandon_transport();
  page_calls_.abandon_transport();
  diffs_.abandon_transport();
  master_ = MemoryRegion();
}

void* Dsm::Engine::allocate(std::size_t bytes, const Placement& placement, Coherence coherence) {
  detail::check_not_forked(rank_, "Dsm::allocate");
  MPI_Comm comm = runtime_.comm();
  // Every rank must describe the same allocation: its size, its placement
  // (as a digest) and its coherence policy, compared apart so that the
  // error names the one that differed.
  const long long mine[] = {
      static_cast<long long>(bytes),
      static_cast<long long>(detail::Allocations::digest(0, placement, Coherence::adaptive)),
      static_cast<long long>(coherence)};
  const detail::ValueRange agreed = detail::value_range(comm, rank_, mine, "Dsm::allocate");
  if (!agreed.uniform()) {
    std::string differ;
    auto name = [&](const std::string& what) { differ += (differ.empty() ? "" : ", ") + what; };
    if (agreed.low[0] != agreed.high[0])
      name("sizes (" + std::to_string(agreed.low[0]) + " to " + std::to_string(agreed.high[0]) +
           " bytes)");
    if (agreed.low[1] != agreed.high[1]) name("placements");
    if (agreed.low[2] != agreed.high[2])
      name(std::string("coherence policies (") + to_string(static_cast<Coherence>(agreed.low[2])) +
           " and " + to_string(static_cast<Coherence>(agreed.high[2])) + ")");
    throw Error(Errc::collective_mismatch, rank_,
                "Dsm::allocate: ranks passed different " + differ);
  }
  allocations_.check(bytes, placement, coherence);
  // The local part may fail on one rank only (an mprotect refused): every
  // rank then undoes its part, and nobody keeps a half-recorded allocation.
  std::optional<Error> failure;
  bool added = false;
  std::size_t first = 0, pages = 0;
  {
    detail::EngineLock guard(mutex_);
    try {
      const detail::Allocations::Allocation& allocation =
          allocations_.add(bytes, placement, coherence);
      added = true;
      first = allocation.first;
      pages = allocation.pages;
      unmap(first, pages);  // what an earlier failed free may have left mapped
      detail::fail_if_injected(detail::FailurePoint::allocate_homes, rank_);
      place_homes(allocation);
    } catch (const Error& e) {
      failure = e;
    }
  }
  try {
    detail::throw_if_any_failed(comm, rank_, failure, "Dsm::allocate");
  } catch (const Error&) {
    if (added) {
      detail::EngineLock guard(mutex_);
      forget_allocation(first, pages);
    }
    throw;
  }
  return view(first);
}

void Dsm::Engine::place_homes(const detail::Allocations::Allocation& allocation) {
  if (allocation.placement.kind == Placement::Kind::first_touch) return;
  const std::size_t first = allocation.first, pages = allocation.pages;
  const int ranks = runtime_.size();
  auto mine = [&](std::size_t i) { return i < pages && allocation.home(i, ranks) == rank_; };
  std::size_t runs = 0;
  for (std::size_t i = 0; i < pages; ++i) runs += mine(i) && (i == 0 || !mine(i - 1));
  if (runs > kEagerHomeRuns) {
    for (std::size_t i = 0; i < pages; ++i)
      if (mine(i)) state_[first + i] = PageState::home_parked;
    return;
  }
  for (std::size_t i = 0; i < pages; ++i) {
    if (!mine(i) || (i > 0 && mine(i - 1))) continue;
    std::size_t end = i + 1;
    while (mine(end)) ++end;
    protect(first + i, end - i, PROT_READ | PROT_WRITE);
    for (std::size_t p = first + i; p < first + end; ++p) state_[p] = PageState::home_exclusive;
  }
}

// Nobody has a copy of a page that just became this rank's: it is written
// freely until someone does.
void Dsm::Engine::become_home(std::size_t page) {
  protect(page, 1, PROT_READ | PROT_WRITE);
  state_[page] = PageState::home_exclusive;
}

void Dsm::Engine::free(void* address) {
  detail::check_not_forked(rank_, "Dsm::free");
  std::optional<Error> failure;
  const auto* at = static_cast<const std::byte*>(address);
  const std::size_t first = region_.contains(address) ? page_of(address) : 0;
  std::optional<std::size_t> pages;
  {
    detail::EngineLock guard(mutex_);
    if (region_.contains(address) && at == view(first)) pages = allocations_.pages_at(first);
    if (!pages)
      failure.emplace(Errc::unregistered, rank_,
                      "Dsm::free: address " + detail::describe_address(address) +
                          " is not the start of a DSM allocation");
    else if (const std::size_t busy = pinned_in(first, *pages))
      failure.emplace(Errc::invalid_state, rank_,
                      "Dsm::free: " + std::to_string(busy) +
                          " pages of the allocation are still in a transfer or made accessible "
                          "(complete the transfer or release the DsmAccess first)");
  }
  detail::throw_if_any_failed(runtime_.comm(), rank_, failure, "Dsm::free");
  static constexpr const char* kAddress[] = {"the address freed"};
  const long long mine[] = {static_cast<long long>(first)};
  detail::require_same_values(runtime_.comm(), rank_, kAddress, mine, Errc::collective_mismatch,
                              "Dsm::free (as page numbers of the region)");
  barrier();  // nobody still reads or writes it
  {
    detail::EngineLock guard(mutex_);
    try {
      forget_allocation(first, *pages);
    } catch (const Error& e) {
      failure = e;
    }
  }
  detail::throw_if_any_failed(runtime_.comm(), rank_, failure, "Dsm::free");
}

std::size_t Dsm::Engine::pinned_in(std::size_t first, std::size_t pages) const {
  std::size_t busy = 0;
  if (pins_.pinned_pages() == 0) return busy;
  detail::for_each_used_range(first, pages, {&pins_.used()},
                              [&](std::size_t begin, std::size_t end) {
                                for (std::size_t page = begin; page < end; ++page)
                                  busy += pinned(page);
                              });
  return busy;
}

// Unmaps an allocation's pages and forgets them. A later allocation here must
// read as zero. When every peer maps this rank's memory (one node, nothing
// reaches it through a NIC) the memory goes back to the kernel. Where a NIC
// may have it registered (pinned), pages are kept and every page this rank
// homed or fetched is zeroed instead: a fresh page behind a registration
// would no longer be the one remote puts reach.
// The bookkeeping is undone even when unmapping fails (the error is thrown
// after), so every rank's allocator stays the same; the next allocation of
// these pages unmaps what was left.
void Dsm::Engine::forget_allocation(std::size_t first, std::size_t pages) {
  std::optional<Error> unmapped;
  try {
    detail::fail_if_injected(detail::FailurePoint::free_unmap, rank_);
    unmap(first, pages);
  } catch (const Error& e) {
    unmapped = e;
  }
  const bool give_back = region_.every_peer_mapped();
  // Only pages this rank cached, held, fetched or homed have anything to
  // undo: the others' entries were never written (and are not read).
  auto forget_pages = [&](std::size_t begin, std::size_t end) {
    for (std::size_t page = begin; page < end; ++page) {
      if (cache_.contains(page)) {
        drop_twin(page);
        forget_copy(page);  // the home's count drops too: counts are never reset
      } else {
        drop_registration(page);  // a count a barrier kept (keep_counted), if any
      }
      if (!give_back && (is_home(state_[page]) || sharing_.fetched_here(page)))
        std::memset(master(page), 0, page_size_);
    }
  };
  detail::for_each_used_range(first, pages, {&cache_.used(), &sharing_.used(), &state_.used()},
                              forget_pages);
  if (give_back) region_.discard(first * page_size_, pages * page_size_);
  state_.reset(first, pages);
  listed_.reset(first, pages);
  reuse_.reset(first, pages);
  lost_in_.reset(first, pages);
  hot_.forget(first, pages);
  allocations_.remove(first);
  sharing_.forget(first, pages);
  directory_.forget(first, pages);
  moves_.forget(first, pages);
  if (unmapped) throw *unmapped;
}

void Dsm::Engine::unmap(std::size_t first, std::size_t pages) {
  // Pages whose protection never changed are PROT_NONE already.
  detail::for_each_used_range(first, pages, {&protection_.used()},
                              [&](std::size_t begin, std::size_t last) {
                                for (std::size_t page = begin; page < last;) {
                                  if (protection_.at(page) == PROT_NONE) {
                                    ++page;
                                    continue;
                                  }
                                  std::size_t end = page + 1;
                                  while (end < last && protection_.at(end) != PROT_NONE) ++end;
                                  protect(page, end - page, PROT_NONE);
                                  page = end;
                                }
                              });
}

Coherence Dsm::Engine::coherence_of(const void* address) const {
  if (!region_.contains(address))
    throw Error(Errc::unregistered, rank_, "Dsm::coherence_of: address is outside the DSM region");
  const std::optional<Coherence> policy = allocations_.coherence_of(page_of(address));
  if (!policy)
    throw Error(Errc::unregistered, rank_, "Dsm::coherence_of: address is in no DSM allocation");
  return *policy;
}

int Dsm::Engine::home_of(const void* address) {
  if (!region_.contains(address))
    throw Error(Errc::unregistered, rank_, "Dsm::home_of: address is outside the DSM region");
  detail::EngineLock guard(mutex_);
  const std::size_t page = page_of(address);
  const int home = home_of_page(page);
  if (home == -1)
    throw Error(Errc::unregistered, rank_, "Dsm::home_of: address is in no DSM allocation");
  if (home == detail::HomeDirectory::undecided) {
    const int recorded = directory_.look_up(page);
    return recorded == detail::HomeDirectory::undecided ? -1 : recorded;
  }
  return home;
}

// Batches of at most the prefetch size and never more than the cache room
// that pinned pages leave, one home per batch.
void Dsm::Engine::prefetch(const void* address, std::size_t bytes) {
  detail::check_not_forked(rank_, "Dsm::prefetch");
  note_thread(this_thread());
  if (bytes == 0) return;
  check_in_region(address, bytes, "Dsm::prefetch");
  const auto* at = static_cast<const std::byte*>(address);
  detail::EngineLock guard(mutex_);
  if (const auto page = allocations_.first_unallocated(page_of(at), page_of(at + bytes - 1)))
    throw Error(Errc::unregistered, rank_,
                "Dsm::prefetch: " + std::to_string(bytes) + " bytes at " +
                    detail::describe_address(address) + " reach unallocated DSM memory at " +
                    detail::describe_address(view(*page)));
  std::size_t count = 0;
  int home = -1;
  auto flush_batch = [&] {
    if (count == 0) return;
    fetch_batch(batch_.data(), count, home);
    for (std::size_t i = 0; i < count; ++i) cache_.entry(batch_[i]).prefetched = true;
    stats_.prefetched += count;
    count = 0;
  };
  for (std::size_t page = page_of(at), last = page_of(at + bytes - 1); page <= last; ++page) {
    const int page_home = home_of_page(page);
    if (state_[page] != PageState::invalid || page_home < 0 || page_home == rank_) continue;
    const std::size_t limit = std::min(batch_.size(), cache_room());
    if (page_home != home || count >= limit) flush_batch();
    if (limit == 0) return;  // every cache slot is pinned
    home = page_home;
    batch_[count++] = page;
  }
  flush_batch();
}

void Dsm::Engine::check_in_region(const void* address, std::size_t bytes,
                                  const char* operation) const {
  const auto* at = static_cast<const std::byte*>(address);
  if (!region_.contains(at) || bytes > static_cast<std::size_t>(base() + size() - at))
    throw Error(Errc::out_of_range, rank_,
                std::string(operation) + ": " + std::to_string(bytes) + " bytes at " +
                    detail::describe_address(address) + " are not inside the DSM region");
}

int Dsm::Engine::placed_home_of_page(std::size_t page) const {
  const int home = allocations_.placed_home(page);
  return home == detail::decided_at_first_touch ? directory_.known(page) : home;
}

// After a barrier, so that every rank starts counting at the same point and
// the barrier itself is not counted.
void Dsm::Engine::reset_stats() {
  barrier();
  detail::EngineLock guard(mutex_);
  stats_ = DsmStats{};
  barrier_ticks_.store(0, std::memory_order_relaxed);
  lock_wait_ticks_.store(0, std::memory_order_relaxed);
  fetch_wait_ticks_ = 0;
  sync_ticks_.store(0, std::memory_order_relaxed);
  // Prefetched pages cached now were fetched before the reset.
  cache_.for_each([&](std::size_t page) { cache_.entry(page).prefetched = false; });
}

DsmStats Dsm::Engine::stats() {
  detail::EngineLock guard(mutex_);
  DsmStats snapshot = stats_;
  snapshot.barrier_ns = clock_.to_ns(barrier_ticks_.load(std::memory_order_relaxed));
  snapshot.lock_wait_ns = clock_.to_ns(lock_wait_ticks_.load(std::memory_order_relaxed));
  snapshot.fetch_wait_ns = clock_.to_ns(fetch_wait_ticks_);
  snapshot.sync_ns = clock_.to_ns(sync_ticks_.load(std::memory_order_relaxed));
  for (const detail::Allocations::Allocation& a : allocations_.list()) {
    std::uint64_t* pages[] = {&snapshot.pages_adaptive, &snapshot.pages_invalidate,
                              &snapshot.pages_update, &snapshot.pages_read_mostly,
                              &snapshot.pages_single_writer};
    *pages[static_cast<std::size_t>(a.coherence)] += a.pages;
  }
  // Prefetched pages still cached are classified now, without settling them.
  if (track_prefetch_use_)
    cache_.for_each([&](std::size_t page) {
      if (cache_.entry(page).prefetched)
        ++(touched_since_mapped(page) ? snapshot.prefetch_used : snapshot.prefetch_unused);
    });
  return snapshot;
}

}  // namespace mpidsm
