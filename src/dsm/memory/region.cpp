#include "region.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>

#include "common/mpi_exchange.hpp"
#include "mapping_budget.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

constexpr int kAttempts = 16;

// Where rank 0 asks the kernel for a range after a refusal: anywhere from
// 64 MiB to 1 TiB below its first proposal (2 MiB aligned). The range the
// kernel picks next is right below the one refused, and with every rank's
// layout at its own random base, a refused range often lies inside one large
// mapping of another rank (a heap, a UCX pool) that the next fifteen below it
// share; dsm_cache_test's tinycache variant failed that way in one
// bare-environment run. Below the first proposal, not anywhere: only part of
// the address space is the process's to use where a sanitizer keeps its
// shadow (ThreadSanitizer moves a mapping asked for elsewhere right below
// the last one).
void* far_hint(void* first) {
  static std::mt19937_64 random{std::random_device{}()};
  constexpr std::uint64_t near = std::uint64_t{64} << 20, far = std::uint64_t{1} << 40;
  constexpr std::uint64_t align = std::uint64_t{2} << 20, lowest = std::uint64_t{1} << 32;
  const auto base = reinterpret_cast<std::uint64_t>(first);
  const std::uint64_t distance = near + random() % (far - near);
  if (base < lowest + distance) return nullptr;
  return reinterpret_cast<void*>((base - distance) & ~(align - 1));
}

void* reserve(void* hint, std::size_t size, bool fixed) {
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (fixed ? MAP_FIXED_NOREPLACE : 0);
  void* at = mmap(hint, size, PROT_NONE, flags, -1, 0);
  if (at == MAP_FAILED) return nullptr;
  if (fixed && at != hint) {  // kernels before 4.17 treat the flag as a hint
    munmap(at, size);
    return nullptr;
  }
  return at;
}

// Rank 0's proposal after a refusal: a range at a far hint, tried again
// elsewhere a few times when the kernel does not honour it, else the
// kernel's choice.
void* reserve_far(std::size_t size, void* first) {
  constexpr int kHints = 8;
  for (int i = 0; i < kHints; ++i) {
    void* hint = far_hint(first);
    if (!hint) break;
    void* at = reserve(hint, size, false);
    if (at == hint || at == nullptr) return at;
    munmap(at, size);
  }
  return reserve(nullptr, size, false);
}

// Whether `view` and `master` are one memory: a store through either is
// seen through the other. Checked on the first page, left zero and PROT_NONE.
bool same_memory(std::byte* view, std::byte* master, std::size_t page) {
  if (mprotect(view, page, PROT_READ | PROT_WRITE) != 0) return false;
  auto* through_view = reinterpret_cast<volatile std::uint64_t*>(view);
  auto* through_master = reinterpret_cast<volatile std::uint64_t*>(master);
  *through_view = 0x6d706964736d0001;
  const bool view_to_master = *through_master == 0x6d706964736d0001;
  *through_master = 0x6d706964736d0002;
  const bool master_to_view = *through_view == 0x6d706964736d0002;
  *through_master = 0;
  return mprotect(view, page, PROT_NONE) == 0 && view_to_master && master_to_view;
}

// Whether the view's mappings merge again once protection is uniform: the
// DSM splits the view page by page and relies on the kernel merging it back.
bool merges_again(std::byte* view, std::size_t page) {
  return mprotect(view + page, page, PROT_READ) == 0 &&
         mprotect(view + page, page, PROT_NONE) == 0 &&
         count_mappings(reinterpret_cast<std::uintptr_t>(view),
                        reinterpret_cast<std::uintptr_t>(view + 3 * page)) == 1;
}

}  // namespace

DsmRegion::View::View(MPI_Comm comm, std::size_t size) : size(size) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Rank 0 proposes an address it reserved; the others try to reserve the
  // same range. A refused proposal is kept reserved by rank 0 while it
  // proposes the next, so it never proposes the same range twice.
  void* rejected[kAttempts] = {};
  void* agreed = nullptr;
  for (int attempt = 0; attempt < kAttempts && !agreed; ++attempt) {
    void* mine = rank != 0      ? nullptr
                 : attempt == 0 ? reserve(nullptr, size, false)
                                : reserve_far(size, rejected[0]);
    std::uint64_t proposal = reinterpret_cast<std::uint64_t>(mine);
    broadcast(comm, rank, &proposal, 1, MPI_UINT64_T, 0, "DSM region set-up");
    if (proposal == 0) break;  // rank 0 cannot reserve the size at all
    if (rank != 0) mine = reserve(reinterpret_cast<void*>(proposal), size, true);
    int ok = mine != nullptr, all = 0;
    allreduce(comm, rank, &ok, &all, 1, MPI_INT, MPI_MIN, "DSM region set-up");
    if (all) {
      agreed = mine;
    } else if (rank == 0) {
      rejected[attempt] = mine;
    } else if (mine) {
      munmap(mine, size);
    }
  }
  for (void* r : rejected)
    if (r) munmap(r, size);
  if (!agreed)
    throw Error(Errc::no_memory, rank,
                "DSM region: no virtual address range of " + std::to_string(size) +
                    " bytes (MPIDSM_DSM_SIZE) is free on every rank");
  at = static_cast<std::byte*>(agreed);
}

DsmRegion::View::~View() {
  munmap(at, size);
}

DsmRegion::DsmRegion(MPI_Comm comm, Transport& transport, std::size_t size,
                     const MappablePeers& mappable)
    : view_(comm, size),
      master_(comm, transport, size, mappable,
              "DSM region of " + std::to_string(size) + " bytes (MPIDSM_DSM_SIZE)") {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::optional<Error> error;
  if (const std::string failure = map_view(); !failure.empty())
    error.emplace(Errc::no_memory, rank, "DSM region: " + failure);
  throw_if_any_failed(comm, rank, error, "DSM region set-up");
}

// The master's memfd over the reserved range; every resulting address is
// checked, never trusted (a libc wrapper may be replaced by UCX's memory
// hooks).
std::string DsmRegion::map_view() {
  void* view = mmap(view_.at, view_.size, PROT_NONE, MAP_SHARED | MAP_FIXED, master_.fd(), 0);
  if (view != view_.at) {
    if (view == MAP_FAILED)
      return std::string("mapping the application view: ") + std::strerror(errno);
    return "mapping the application view: placed at the wrong address";
  }
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (!same_memory(view_.at, master_.local(), page))
    return "the application view and the master copy are not the same memory (a store through "
           "one is not seen through the other)";
  if (view_.size >= 3 * page && !merges_again(view_.at, page))
    return "the application view's mappings do not merge again once split (protection changes "
           "would exhaust vm.max_map_count)";
  return {};
}

}  // namespace mpidsm::detail
