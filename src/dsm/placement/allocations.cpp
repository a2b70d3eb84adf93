#include "allocations.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

bool before(std::size_t page, const Allocations::Allocation& a) {
  return page < a.first;
}

}  // namespace

Allocations::Allocations(std::size_t pages, std::size_t page_size, int ranks, int rank)
    : page_size_(page_size), ranks_(ranks), rank_(rank), pages_(pages, 1) {}

void Allocations::check(std::size_t bytes, const Placement& placement, Coherence coherence) const {
  if (bytes == 0) throw Error(Errc::invalid_argument, rank_, "Dsm::allocate: size is 0");
  if (static_cast<unsigned>(coherence) > static_cast<unsigned>(Coherence::single_writer))
    throw Error(Errc::invalid_argument, rank_,
                "Dsm::allocate: coherence policy " +
                    std::to_string(static_cast<unsigned>(coherence)) + " is not a Coherence");
  auto outside = [&](int rank, const std::string& what) {
    return Error(Errc::invalid_rank, rank_,
                 "Dsm::allocate: " + what + std::to_string(rank) +
                     " is outside the communicator of size " + std::to_string(ranks_));
  };
  switch (placement.kind) {
    case Placement::Kind::on_rank:
      if (placement.rank < 0 || placement.rank >= ranks_)
        throw outside(placement.rank, "home rank ");
      break;
    case Placement::Kind::cyclic:
      if (placement.rank < 0 || placement.rank >= ranks_)
        throw outside(placement.rank, "first rank of the cyclic placement ");
      if (placement.pages_per_block == 0)
        throw Error(Errc::invalid_argument, rank_, "Dsm::allocate: cyclic block of 0 pages");
      break;
    case Placement::Kind::blocks: {
      if (!placement.block_list || placement.block_list->empty())
        throw Error(Errc::invalid_argument, rank_, "Dsm::allocate: Placement::blocks of no block");
      std::size_t covered = 0;
      for (std::size_t b = 0; b < placement.block_list->size(); ++b) {
        const PlacementBlock& block = (*placement.block_list)[b];
        if (block.home < 0 || block.home >= ranks_)
          throw outside(block.home, "home of block " + std::to_string(b) + ", rank ");
        covered = block.bytes > SIZE_MAX - covered ? SIZE_MAX : covered + block.bytes;
      }
      if (covered < bytes)
        throw Error(Errc::invalid_argument, rank_,
                    "Dsm::allocate: the blocks of Placement::blocks cover " +
                        std::to_string(covered) + " bytes of an allocation of " +
                        std::to_string(bytes));
      break;
    }
    case Placement::Kind::block:
    case Placement::Kind::first_touch:
      break;
  }
}

// FNV-1a over every field, the block list included.
std::uint64_t Allocations::digest(std::size_t bytes, const Placement& placement,
                                  Coherence coherence) {
  std::uint64_t digest = 1469598103934665603ull;
  auto mix = [&](std::uint64_t v) { digest = (digest ^ v) * 1099511628211ull; };
  for (std::uint64_t v :
       {static_cast<std::uint64_t>(bytes), static_cast<std::uint64_t>(placement.kind),
        static_cast<std::uint64_t>(placement.pages_per_block),
        static_cast<std::uint64_t>(placement.rank), static_cast<std::uint64_t>(coherence)})
    mix(v);
  if (placement.kind == Placement::Kind::blocks && placement.block_list)
    for (const PlacementBlock& block : *placement.block_list) {
      mix(static_cast<std::uint64_t>(block.bytes));
      mix(static_cast<std::uint64_t>(block.home));
    }
  return digest;
}

const Allocations::Allocation& Allocations::add(std::size_t bytes, const Placement& placement,
                                                Coherence coherence) {
  const std::size_t pages = (bytes + page_size_ - 1) / page_size_;
  const std::optional<std::size_t> first = pages_.allocate(pages);
  if (!first)
    throw Error(Errc::no_memory, rank_,
                "Dsm::allocate: " + std::to_string(bytes) +
                    " bytes do not fit the DSM region (MPIDSM_DSM_SIZE=" +
                    std::to_string(pages_.capacity() * page_size_) + ", largest free " +
                    std::to_string(pages_.largest_free() * page_size_) + " bytes)");
  if (coherence != Coherence::adaptive) ++others_;
  return *list_.insert(std::upper_bound(list_.begin(), list_.end(), *first, before),
                       Allocation{*first, pages, placement, coherence,
                                  placement.kind == Placement::Kind::blocks
                                      ? block_starts(*placement.block_list, page_size_)
                                      : BlockStarts{}});
}

void Allocations::remove(std::size_t first) {
  std::erase_if(list_, [&](const Allocation& a) {
    if (a.first != first) return false;
    if (a.coherence != Coherence::adaptive) --others_;
    freed_[frees_++ % kFreedKept] = {a.first, a.pages};
    return true;
  });
  pages_.free(first);
}

std::optional<Allocations::Nearest> Allocations::nearest(std::size_t page) const {
  std::optional<Nearest> best;
  std::size_t best_distance = 0;
  auto consider = [&](std::size_t first, std::size_t pages, bool freed) {
    const std::size_t distance = page < first            ? first - page
                                 : page >= first + pages ? page - (first + pages) + 1
                                                         : 0;
    // A freed allocation that covered the page explains the access best.
    if (!best || distance < best_distance || (distance == 0 && freed && !best->freed)) {
      best = Nearest{first, pages, freed};
      best_distance = distance;
    }
  };
  for (std::size_t i = 0; i < std::min(frees_, kFreedKept); ++i)
    consider(freed_[i].first, freed_[i].pages, true);
  const auto after = std::upper_bound(list_.begin(), list_.end(), page, before);
  if (after != list_.end()) consider(after->first, after->pages, false);
  if (after != list_.begin()) consider((after - 1)->first, (after - 1)->pages, false);
  return best;
}

std::optional<std::size_t> Allocations::pages_at(std::size_t first) const {
  return pages_.length_of(first);
}

const Allocations::Allocation* Allocations::at_or_before(std::size_t page) const {
  auto after = std::upper_bound(list_.begin(), list_.end(), page, before);
  return after == list_.begin() ? nullptr : &*(after - 1);
}

int Allocations::placed_home(std::size_t page) const {
  const Allocation* a = at_or_before(page);
  if (!a || page >= a->first + a->pages) return -1;
  return a->home(page - a->first, ranks_);
}

std::optional<Coherence> Allocations::coherence_of(std::size_t page) const {
  const Allocation* a = at_or_before(page);
  if (!a || page >= a->first + a->pages) return std::nullopt;
  return a->coherence;
}

std::optional<std::size_t> Allocations::first_unallocated(std::size_t first,
                                                          std::size_t last) const {
  const Allocation* a = at_or_before(first);
  if (!a || first >= a->first + a->pages) return first;
  // On through the allocations that follow each other without a gap.
  const Allocation* end_of_list = list_.data() + list_.size();
  for (std::size_t end = a->first + a->pages; end <= last; end = a->first + a->pages)
    if (++a == end_of_list || a->first != end) return end;
  return std::nullopt;
}

}  // namespace mpidsm::detail
