// The DSM engine: page states, fault resolution, release (diffs home) and
// acquire (invalidation by write notices) around Dsm::barrier.
#include "mpidsm/dsm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "diff.hpp"
#include "fault_handler.hpp"
#include "pgas/heap_allocator.hpp"
#include "placement.hpp"
#include "region.hpp"
#include "transport/mpi_exchange.hpp"

namespace mpidsm {
namespace {

enum class PageState : std::uint8_t {
  unallocated,  // no allocation covers it: an access is a real crash
  invalid,      // remote page, not cached: PROT_NONE
  cached,       // remote page, clean copy: PROT_READ
  dirty,        // remote page with a twin: PROT_READ|PROT_WRITE
  home_clean,   // homed here, in place: PROT_READ (a write faults to record a notice)
  home_dirty,   // homed here, written this interval: PROT_READ|PROT_WRITE
};

// Twins kept at once; when they run out, dirty pages are written home early
// (always safe under release consistency) and their twins reused.
constexpr std::size_t kTwinSlots = 1024;

}  // namespace

class Dsm::Engine final : public detail::FaultTarget {
 public:
  explicit Engine(Runtime& runtime)
      : runtime_(runtime),
        transport_(runtime.transport()),
        rank_(runtime.rank()),
        page_size_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))),
        region_(runtime.comm(), runtime.config().dsm_size),
        pages_(region_.size() / page_size_),
        allocator_(pages_, 1),
        state_(pages_, PageState::unallocated),
        home_(pages_, -1),
        twin_of_(pages_, -1),
        twins_(kTwinSlots * page_size_) {
    master_ = transport_.register_memory(region_.master(), region_.size());
    for (std::size_t slot = kTwinSlots; slot-- > 0;) free_twins_.push_back(static_cast<int>(slot));
    detail::register_fault_range(region_.view(), region_.size(), this);
  }

  ~Engine() {
    detail::unregister_fault_range(region_.view());
    try {
      transport_.deregister(master_);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
  }

  std::byte* view(std::size_t page) const { return region_.view() + page * page_size_; }
  std::byte* master(std::size_t page) const { return region_.master() + page * page_size_; }

  void protect(std::size_t page, std::size_t count, int protection) {
    if (mprotect(view(page), count * page_size_, protection) != 0)
      throw Error(Errc::no_memory, rank_, "DSM: mprotect failed");
  }

  // Runs in the SIGSEGV handler of the faulting thread. Nothing may be thrown
  // out of a signal handler: a failure is reported and the fault then takes
  // its ordinary course (a crash with the usual report).
  bool handle_fault(void* address, bool write) override {
    try {
      return resolve_fault(address, write);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s (while resolving a DSM fault)\n", e.what());
      return false;
    }
  }

  bool resolve_fault(void* address, bool write) {
    const std::size_t page =
        static_cast<std::size_t>(static_cast<std::byte*>(address) - region_.view()) / page_size_;
    std::lock_guard<std::mutex> guard(mutex_);
    switch (state_[page]) {
      case PageState::unallocated:
        return false;
      case PageState::home_clean:
        ++stats_.write_faults;
        mark_dirty(page, PageState::home_dirty);
        return true;
      case PageState::invalid:
        ++stats_.read_faults;
        fetch(page);
        if (write) make_twin(page);
        return true;
      case PageState::cached:
        ++stats_.write_faults;
        make_twin(page);
        return true;
      case PageState::dirty:
      case PageState::home_dirty:
        return true;  // another thread resolved it while this one waited
    }
    return false;
  }

  void* allocate(std::size_t bytes, const Placement& placement) {
    MPI_Comm comm = runtime_.comm();
    // Every rank must describe the same allocation.
    const long long mine[] = {static_cast<long long>(bytes), static_cast<long long>(placement.kind),
                              static_cast<long long>(placement.pages_per_block), placement.rank};
    const detail::ValueRange agreed = detail::value_range(comm, rank_, mine);
    if (!agreed.uniform())
      throw Error(Errc::collective_mismatch, rank_,
                  "Dsm::allocate: ranks passed different sizes or placements (sizes " +
                      std::to_string(agreed.low[0]) + " to " + std::to_string(agreed.high[0]) +
                      " bytes)");
    if (bytes == 0) throw Error(Errc::invalid_argument, rank_, "Dsm::allocate: size is 0");
    if (placement.kind == Placement::Kind::on_rank &&
        (placement.rank < 0 || placement.rank >= runtime_.size()))
      throw Error(Errc::invalid_rank, rank_,
                  "Dsm::allocate: home rank " + std::to_string(placement.rank) +
                      " is outside the communicator of size " + std::to_string(runtime_.size()));
    if (placement.kind == Placement::Kind::cyclic && placement.pages_per_block == 0)
      throw Error(Errc::invalid_argument, rank_, "Dsm::allocate: cyclic block of 0 pages");
    const std::size_t pages = (bytes + page_size_ - 1) / page_size_;
    std::lock_guard<std::mutex> guard(mutex_);
    std::optional<std::size_t> first = allocator_.allocate(pages);
    if (!first)
      throw Error(Errc::no_memory, rank_,
                  "Dsm::allocate: " + std::to_string(bytes) +
                      " bytes do not fit the DSM region (MPIDSM_DSM_SIZE=" +
                      std::to_string(region_.size()) + ", largest free " +
                      std::to_string(allocator_.largest_free() * page_size_) + " bytes)");
    for (std::size_t i = 0; i < pages; ++i) {
      const std::size_t page = *first + i;
      home_[page] = detail::home_of(placement, i, pages, runtime_.size());
      if (home_[page] == rank_) {
        state_[page] = PageState::home_clean;
        protect(page, 1, PROT_READ);
      } else {
        state_[page] = PageState::invalid;
      }
    }
    return view(*first);
  }

  void free(void* address) {
    std::optional<Error> failure;
    const auto* at = static_cast<const std::byte*>(address);
    const std::size_t first =
        region_.contains(address) ? static_cast<std::size_t>(at - region_.view()) / page_size_ : 0;
    std::optional<std::size_t> pages;
    if (region_.contains(address) && at == view(first)) pages = allocator_.length_of(first);
    if (!pages)
      failure.emplace(Errc::unregistered, rank_,
                      "Dsm::free: address is not the start of a DSM allocation");
    detail::throw_if_any_failed(runtime_.comm(), rank_, failure, "Dsm::free");
    barrier();  // nobody still reads or writes it
    std::lock_guard<std::mutex> guard(mutex_);
    protect(first, *pages, PROT_NONE);
    for (std::size_t page = first; page < first + *pages; ++page) {
      state_[page] = PageState::unallocated;
      home_[page] = -1;
    }
    // Give the memory back, so a later allocation here starts zeroed.
    fallocate(region_.fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
              static_cast<off_t>(first * page_size_), static_cast<off_t>(*pages * page_size_));
    allocator_.free(first);
  }

  void barrier() {
    std::vector<std::int64_t> notices;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      release();
      notices.swap(notices_);
    }
    // Every diff is complete at its home (release flushed) before anyone
    // learns of it, so a page invalidated below is refetched up to date.
    const auto blobs = detail::allgather_blobs(
        runtime_.comm(), std::as_bytes(std::span<const std::int64_t>(notices)));
    std::lock_guard<std::mutex> guard(mutex_);
    for (int writer = 0; writer < runtime_.size(); ++writer) {
      if (writer == rank_) continue;
      const std::vector<std::byte>& blob = blobs[static_cast<std::size_t>(writer)];
      for (std::size_t at = 0; at < blob.size(); at += sizeof(std::int64_t)) {
        std::int64_t notice;
        std::memcpy(&notice, blob.data() + at, sizeof notice);
        const auto page = static_cast<std::size_t>(notice);
        if (state_[page] != PageState::cached) continue;
        protect(page, 1, PROT_NONE);
        state_[page] = PageState::invalid;
        ++stats_.invalidations;
      }
    }
    ++stats_.barriers;
  }

  int home_of(const void* address) const {
    if (!region_.contains(address))
      throw Error(Errc::unregistered, rank_, "Dsm::home_of: address is outside the DSM region");
    const std::size_t page =
        static_cast<std::size_t>(static_cast<const std::byte*>(address) - region_.view()) /
        page_size_;
    if (home_[page] < 0)
      throw Error(Errc::unregistered, rank_, "Dsm::home_of: address is in no DSM allocation");
    return home_[page];
  }

  Runtime& runtime_;
  Transport& transport_;
  int rank_;
  std::size_t page_size_;
  detail::DsmRegion region_;
  std::size_t pages_;
  detail::HeapAllocator allocator_;  // in pages
  MemoryRegion master_;
  std::vector<PageState> state_;
  std::vector<std::int32_t> home_;
  std::vector<std::int32_t> twin_of_;
  std::vector<std::byte> twins_;
  std::vector<int> free_twins_;
  std::vector<std::size_t> dirty_;     // pages written and not yet released
  std::vector<std::int64_t> notices_;  // pages released since the last barrier
  std::vector<bool> homes_written_;    // per rank: received diffs in this release
  DsmStats stats_;
  std::mutex mutex_;

 private:
  // One-sided get of the page from its home into the local master view,
  // which UCX may touch without faulting; then the view becomes readable.
  void fetch(std::size_t page) {
    transport_.get(home_[page], master_, page * page_size_, master(page), page_size_);
    ++stats_.pages_fetched;
    state_[page] = PageState::cached;
    protect(page, 1, PROT_READ);
  }

  void make_twin(std::size_t page) {
    // Out of twins: write every dirty page home now (its notices wait for
    // the next barrier) and reuse the twins.
    if (free_twins_.empty()) release();
    const int slot = free_twins_.back();
    free_twins_.pop_back();
    std::memcpy(&twins_[static_cast<std::size_t>(slot) * page_size_], master(page), page_size_);
    twin_of_[page] = slot;
    mark_dirty(page, PageState::dirty);
  }

  void mark_dirty(std::size_t page, PageState state) {
    state_[page] = state;
    dirty_.push_back(page);
    protect(page, 1, PROT_READ | PROT_WRITE);
  }

  // Writes this interval's changes home and records the pages changed as
  // write notices for the next barrier. Caller holds mutex_.
  void release() {
    homes_written_.assign(static_cast<std::size_t>(runtime_.size()), false);
    for (std::size_t page : dirty_) {
      protect(page, 1, PROT_READ);
      if (state_[page] == PageState::home_dirty) {
        state_[page] = PageState::home_clean;
      } else {
        const int slot = twin_of_[page];
        const std::byte* twin = &twins_[static_cast<std::size_t>(slot) * page_size_];
        const std::size_t base = page * page_size_;
        stats_.diff_runs += detail::for_each_changed_run(
            twin, master(page), page_size_, [&](std::size_t offset, std::size_t length) {
              transport_.put_nbi(home_[page], master_, base + offset, master(page) + offset,
                                 length);
              stats_.diff_bytes += length;
            });
        ++stats_.diffs;
        homes_written_[static_cast<std::size_t>(home_[page])] = true;
        free_twins_.push_back(slot);
        twin_of_[page] = -1;
        state_[page] = PageState::cached;
      }
      notices_.push_back(static_cast<std::int64_t>(page));
    }
    dirty_.clear();
    // One flush per home that received diffs: remote completion at each.
    for (int home = 0; home < runtime_.size(); ++home)
      if (homes_written_[static_cast<std::size_t>(home)]) transport_.flush(home);
  }
};

Dsm::Dsm(Runtime& runtime) : engine_(std::make_unique<Engine>(runtime)) {}

Dsm::~Dsm() {
  if (!engine_) return;
  try {
    engine_->barrier();  // nothing written is lost
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

void* Dsm::allocate_bytes(std::size_t bytes, const Placement& placement) {
  return engine_->allocate(bytes, placement);
}
void Dsm::free(void* address) {
  engine_->free(address);
}
void Dsm::barrier() {
  engine_->barrier();
}
void* Dsm::base() const {
  return engine_->region_.view();
}
std::size_t Dsm::size() const {
  return engine_->region_.size();
}
std::size_t Dsm::page_size() const {
  return engine_->page_size_;
}
int Dsm::home_of(const void* address) const {
  return engine_->home_of(address);
}
DsmStats Dsm::stats() const {
  return engine_->stats_;
}
int Dsm::runtime_rank() const {
  return engine_->rank_;
}

}  // namespace mpidsm
