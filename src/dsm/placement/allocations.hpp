// The DSM region's allocations: which pages each collective allocation took
// (the same on every rank, as every rank allocates and frees alike), its
// placement, and so the placed home of every page. Plain bookkeeping, with
// no MPI or UCX, so unit tests drive it; the engine maps and homes the pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/heap_allocator.hpp"
#include "mpidsm/coherence.hpp"
#include "placement.hpp"

namespace mpidsm::detail {

class Allocations {
 public:
  struct Allocation {
    std::size_t first;  // page
    std::size_t pages;
    Placement placement;
    Coherence coherence;
    BlockStarts starts;  // Placement::blocks
    // The home of the allocation's page `index`.
    int home(std::size_t index, int ranks) const {
      return home_of(placement, index, pages, ranks, starts);
    }
  };

  // A region of `pages` pages of `page_size` bytes over `ranks` ranks;
  // `rank` names this one in errors.
  Allocations(std::size_t pages, std::size_t page_size, int ranks, int rank);

  // Errc::invalid_argument or Errc::invalid_rank unless `placement` can home
  // an allocation of `bytes` bytes (0 bytes never can). The same on every
  // rank, as the arguments agree.
  void check(std::size_t bytes, const Placement& placement,
             Coherence coherence = Coherence::adaptive) const;
  // A number every rank computes alike from the same arguments, for checking
  // that they passed the same ones.
  static std::uint64_t digest(std::size_t bytes, const Placement& placement,
                              Coherence coherence = Coherence::adaptive);

  // Records an allocation of `bytes` (valid until the next add or remove);
  // Errc::no_memory when no free run of pages is long enough.
  const Allocation& add(std::size_t bytes, const Placement& placement,
                        Coherence coherence = Coherence::adaptive);
  // Forgets the allocation starting at page `first`.
  void remove(std::size_t first);
  // The pages of the allocation starting at page `first`, or nullopt when
  // none starts there.
  std::optional<std::size_t> pages_at(std::size_t first) const;

  // The home `page` was placed on, decided_at_first_touch for a first-touch
  // allocation's page, or -1 when no allocation covers it.
  int placed_home(std::size_t page) const;
  // The policy of the allocation covering `page`, or nullopt.
  std::optional<Coherence> coherence_of(std::size_t page) const;
  // No allocation has a policy other than adaptive (the usual case: callers
  // skip the lookup).
  bool all_adaptive() const { return others_ == 0; }
  // The first page of [first, last] no allocation covers, or none.
  std::optional<std::size_t> first_unallocated(std::size_t first, std::size_t last) const;

  const std::vector<Allocation>& list() const { return list_; }  // by first page

  // For a report of an access that no allocation covers: the allocation
  // nearest to `page`, live or among the last kFreedKept freed, preferring
  // a freed one that covered the page. Allocates nothing (the fault handler
  // calls it).
  struct Nearest {
    std::size_t first;
    std::size_t pages;
    bool freed;
  };
  static constexpr std::size_t kFreedKept = 64;
  std::optional<Nearest> nearest(std::size_t page) const;

 private:
  // The allocation whose first page is the last at or before `page`, or nullptr.
  const Allocation* at_or_before(std::size_t page) const;

  std::size_t page_size_;
  int ranks_;
  int rank_;
  HeapAllocator pages_;           // in pages
  std::vector<Allocation> list_;  // sorted by first page
  std::size_t others_ = 0;        // allocations whose policy is not adaptive
  struct Freed {
    std::size_t first = 0, pages = 0;
  };
  Freed freed_[kFreedKept];  // a ring: the last frees, for reports
  std::size_t frees_ = 0;
};

}  // namespace mpidsm::detail
