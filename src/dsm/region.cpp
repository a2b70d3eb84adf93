#include "region.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "mpidsm/error.hpp"
#include "transport/mpi_exchange.hpp"

namespace mpidsm::detail {
namespace {

constexpr int kAttempts = 16;

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

// mremap straight to the kernel: UCX's memory hooks (libucm) replace the libc
// wrapper with a four-argument version that drops new_address, so through
// libc a MREMAP_FIXED call maps somewhere else (address 0 for root) and
// reports success. The result is compared with the address asked for anyway.
bool alias_at(void* source, std::size_t size, void* target) {
  const long at = syscall(SYS_mremap, source, std::size_t{0}, size,
                          MREMAP_MAYMOVE | MREMAP_FIXED, target);
  return at != -1 && reinterpret_cast<void*>(at) == target;
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

// The kernel's mappings that lie in [begin, begin+size).
std::size_t mappings_in(const std::byte* begin, std::size_t size) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return 0;
  std::size_t count = 0;
  unsigned long low = 0, high = 0;
  char line[512];
  const auto first = reinterpret_cast<unsigned long>(begin), last = first + size;
  while (std::fgets(line, sizeof line, maps))
    if (std::sscanf(line, "%lx-%lx", &low, &high) == 2 && low < last && high > first) ++count;
  std::fclose(maps);
  return count;
}

// Whether the view's mappings merge again once protection is uniform: the
// DSM splits the view page by page and relies on the kernel merging it
// back (SysV shared memory, for one, never merges). Checked on two pages.
bool merges_again(std::byte* view, std::size_t page) {
  return mprotect(view, 3 * page, PROT_NONE) == 0 && mprotect(view + page, page, PROT_READ) == 0 &&
         mprotect(view + page, page, PROT_NONE) == 0 && mappings_in(view, 3 * page) == 1;
}

}  // namespace

DsmRegion::DsmRegion(MPI_Comm comm, Transport& transport, std::size_t size)
    : transport_(transport), size_(size) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Rank 0 proposes an address it reserved; the others try to reserve the
  // same range. A refused proposal is kept reserved by rank 0 while it
  // proposes the next, so it never proposes the same range twice.
  void* rejected[kAttempts] = {};
  void* agreed = nullptr;
  for (int attempt = 0; attempt < kAttempts && !agreed; ++attempt) {
    void* mine = rank == 0 ? reserve(nullptr, size, false) : nullptr;
    std::uint64_t proposal = reinterpret_cast<std::uint64_t>(mine);
    check_mpi(rank, "MPI_Bcast", MPI_Bcast(&proposal, 1, MPI_UINT64_T, 0, comm));
    if (proposal == 0) break;  // rank 0 cannot reserve the size at all
    if (rank != 0) mine = reserve(reinterpret_cast<void*>(proposal), size, true);
    int ok = mine != nullptr, all = 0;
    check_mpi(rank, "MPI_Allreduce", MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm));
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
  view_ = static_cast<std::byte*>(agreed);

  // Preferred: memory UCX allocates (peers on this node map it), viewed a
  // second time with mremap. Where UCX allocates private memory (no shared-
  // memory transport, e.g. UCX_TLS=tcp), every rank falls back to a memfd
  // mapped twice, its master mapping registered with UCX.
  std::string failure;
  try {
    master_region_ = transport.allocate(size);
  } catch (const Error&) {
    munmap(view_, size);
    view_ = nullptr;
    throw;
  }
  master_ = static_cast<std::byte*>(master_region_.local_base());
  // The alias must also merge its mappings back once split (see merges_again).
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  int shared = alias_at(master_, size, view_) && (size < 3 * page || merges_again(view_, page));
  int all_shared = 0;
  check_mpi(rank, "MPI_Allreduce", MPI_Allreduce(&shared, &all_shared, 1, MPI_INT, MPI_MIN, comm));
  if (!all_shared) {
    transport.deregister(master_region_);
    master_ = nullptr;
    failure = map_memfd();
    std::optional<Error> error;
    if (!failure.empty()) error.emplace(Errc::no_memory, rank, "DSM region: " + failure);
    try {
      throw_if_any_failed(comm, rank, error, "DSM region set-up");
      master_region_ = transport.register_memory(master_, size);
    } catch (const Error&) {
      release();
      throw;
    }
  }
  if (mprotect(view_, size, PROT_NONE) != 0 || mprotect(view_, page, PROT_READ) != 0 ||
      mprotect(view_, size, PROT_NONE) != 0)
    failure =
        "the application view cannot be protected page by page (huge pages? set "
        "UCX_POSIX_HUGETLB_MODE=n)";
  else if (!same_memory(view_, master_, page))
    failure =
        "the application view and the master copy are not the same memory (a store through "
        "one is not seen through the other); mapping the region twice failed";
  std::optional<Error> error;
  if (!failure.empty()) error.emplace(Errc::no_memory, rank, "DSM region: " + failure);
  try {
    throw_if_any_failed(comm, rank, error, "DSM region set-up");
  } catch (const Error&) {
    release();
    throw;
  }
}

std::string DsmRegion::map_memfd() {
  fd_ = memfd_create("mpidsm-dsm", MFD_CLOEXEC);
  if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(size_)) != 0)
    return "memfd of " + std::to_string(size_) + " bytes: " + std::strerror(errno);
  void* view = mmap(view_, size_, PROT_NONE, MAP_SHARED | MAP_FIXED, fd_, 0);
  if (view != view_)
    return view == MAP_FAILED ? std::string("mapping the application view: ") + std::strerror(errno)
                              : std::string("mapping the application view: placed at the wrong "
                                            "address");
  void* master = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (master == MAP_FAILED) return std::string("mapping the master view: ") + std::strerror(errno);
  master_ = static_cast<std::byte*>(master);
  return {};
}

void DsmRegion::discard(std::size_t offset, std::size_t bytes) {
  madvise(master_ + offset, bytes, MADV_REMOVE);
}

DsmRegion::~DsmRegion() {
  release();
}

void DsmRegion::release() noexcept {
  if (view_) munmap(view_, size_);
  view_ = nullptr;
  if (master_region_.valid()) {
    try {
      transport_.deregister(master_region_);  // collective, as the constructor
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
  }
  if (fd_ >= 0) {  // the memfd fallback: the master mapping is ours
    if (master_) munmap(master_, size_);
    close(fd_);
    fd_ = -1;
  }
  master_ = nullptr;
}

}  // namespace mpidsm::detail
