#include "region.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
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

}  // namespace

DsmRegion::DsmRegion(MPI_Comm comm, std::size_t size) : size_(size) {
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

  std::string failure;
  fd_ = memfd_create("mpidsm-dsm", MFD_CLOEXEC);
  if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(size)) != 0) {
    failure = std::string("memfd of ") + std::to_string(size) + " bytes: " + std::strerror(errno);
  } else if (mmap(view_, size, PROT_NONE, MAP_SHARED | MAP_FIXED, fd_, 0) == MAP_FAILED) {
    failure = std::string("mapping the application view: ") + std::strerror(errno);
  } else {
    void* master = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (master == MAP_FAILED)
      failure = std::string("mapping the master view: ") + std::strerror(errno);
    else
      master_ = static_cast<std::byte*>(master);
  }
  std::optional<Error> error;
  if (!failure.empty()) error.emplace(Errc::no_memory, rank, "DSM region: " + failure);
  try {
    throw_if_any_failed(comm, rank, error, "DSM region set-up");
  } catch (const Error&) {
    release();
    throw;
  }
}

DsmRegion::~DsmRegion() {
  release();
}

void DsmRegion::release() noexcept {
  if (master_) munmap(master_, size_);
  if (view_) munmap(view_, size_);
  if (fd_ >= 0) close(fd_);
  master_ = view_ = nullptr;
  fd_ = -1;
}

}  // namespace mpidsm::detail
