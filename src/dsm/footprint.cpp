#include "footprint.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "dsm/protocol/notice_log.hpp"

namespace mpidsm::detail {
namespace {

// Address space per region page, reserved up front and committed only for
// the pages homed or cached here: the page state, protection, pin, listing,
// stamp, known home, copy flags and cache slot tables (24 bytes), the
// sharing count and directory word (8), and the release lists reserved for
// every page (dirty pages, barrier and lock notices, the barrier's outgoing
// list: 32). Rounded up, so a size that passes this check fits.
constexpr std::size_t kTableBytesPerPage = 80;
// Per lock id (twice MPIDSM_LOCKS: the flags have locks of their own): its
// queue node and this rank's bookkeeping (seen epoch and count, freed, held,
// holder: 48), plus its record at its home, shared among the ranks.
constexpr std::size_t kBytesPerLock = 48;
// Committed at creation per cache slot: the slot, its free-list and twin
// entries and the fetch bookkeeping sized by the cache.
constexpr std::size_t kBytesPerCacheSlot = 64;

bool add(std::size_t& total, std::size_t count, std::size_t each) {
  std::size_t product = 0;
  return !__builtin_mul_overflow(count, each, &product) &&
         !__builtin_add_overflow(total, product, &total);
}

// Whether this process can reserve `bytes` of address space now.
bool reservable(std::size_t bytes) {
  void* at = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (at == MAP_FAILED) return false;
  munmap(at, bytes);
  return true;
}

std::string gib(std::size_t bytes) {
  return std::to_string(bytes >> 30) + " GiB";
}

}  // namespace

std::optional<Error> refuse_unservable(const DsmSettings& settings, int rank, int ranks,
                                       std::size_t page_size) {
  if (settings.cache_pages > max_cache_pages)
    return Error(Errc::invalid_argument, rank,
                 "Dsm: DsmSettings::cache_pages (MPIDSM_CACHE_PAGES) " +
                     std::to_string(settings.cache_pages) + " exceeds the " +
                     std::to_string(max_cache_pages) + " pages a cache can hold");
  const std::size_t pages = settings.size / page_size;
  const std::size_t slots = std::min(settings.cache_pages, pages);
  const auto memory = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * page_size;
  if (std::size_t cache = 0; !add(cache, slots, kBytesPerCacheSlot) || cache > memory / 2)
    return Error(Errc::no_memory, rank,
                 "Dsm: a cache of " + std::to_string(slots) +
                     " pages (DsmSettings::cache_pages, MPIDSM_CACHE_PAGES) needs more than half "
                     "of this machine's " +
                     gib(memory) + " for its bookkeeping");
  std::size_t space = 0;
  const std::size_t record_share = LockRecordLayout::bytes / static_cast<std::size_t>(ranks) + 1;
  const bool fits = add(space, settings.size, 2) && add(space, pages, kTableBytesPerPage) &&
                    add(space, settings.locks, 2 * (kBytesPerLock + record_share));
  if (!fits || !reservable(space))
    return Error(Errc::no_memory, rank,
                 "Dsm: a region of " + std::to_string(settings.size) +
                     " bytes (DsmSettings::size, MPIDSM_DSM_SIZE) with " +
                     std::to_string(settings.locks) +
                     " locks (DsmSettings::locks, MPIDSM_LOCKS) needs " +
                     (fits ? gib(space) : std::string("more than 2^64 bytes")) +
                     " of address space for its two views and its tables, more than this process "
                     "can reserve");
  return std::nullopt;
}

}  // namespace mpidsm::detail
