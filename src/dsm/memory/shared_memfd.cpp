#include "shared_memfd.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

#include "common/mpi_exchange.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

// What each rank tells the others so that same-node peers map its memfd.
struct Published {
  std::int64_t pid;
  std::int64_t fd;
};

}  // namespace

MappablePeers::MappablePeers(Transport& transport, bool direct_access) {
  if (!direct_access) return;
  MemoryRegion probe = transport.allocate(static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  same_node_.resize(static_cast<std::size_t>(transport.size()));
  for (int peer = 0; peer < transport.size(); ++peer)
    same_node_[static_cast<std::size_t>(peer)] = probe.mapped(peer) != nullptr;
  transport.deregister(probe);
}

SharedMemfd::SharedMemfd(MPI_Comm comm, Transport& transport, std::size_t size,
                         const MappablePeers& mappable, const std::string& what)
    : transport_(transport), size_(size) {
  int rank = 0, ranks = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  peers_.assign(static_cast<std::size_t>(ranks), nullptr);
  std::optional<Error> error;
  if (const std::string failure = create(); !failure.empty())
    error.emplace(Errc::no_memory, rank, what + ": " + failure);
  try {
    throw_if_any_failed(comm, rank, error, what);
    region_ = transport.register_memory(local_, size_);
    peers_[static_cast<std::size_t>(rank)] = local_;
    if (mappable.enabled()) map_peers(comm, rank, mappable);
  } catch (const Error&) {
    release();
    throw;
  }
}

// Every resulting address is checked, never trusted (a libc wrapper may be
// replaced by UCX's memory hooks).
std::string SharedMemfd::create() {
  fd_ = memfd_create("mpidsm", MFD_CLOEXEC);
  if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(size_)) != 0)
    return "memfd of " + std::to_string(size_) + " bytes: " + std::strerror(errno);
  void* at = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (at == MAP_FAILED || at == nullptr)
    return "mapping " + std::to_string(size_) + " bytes: " + std::strerror(errno);
  local_ = static_cast<std::byte*>(at);
  return {};
}

// Mappable peers map each other's memfd. A peer whose memfd cannot be opened
// (another user, a different PID namespace) is reached through UCX instead.
void SharedMemfd::map_peers(MPI_Comm comm, int rank, const MappablePeers& mappable) {
  const Published mine{getpid(), fd_};
  std::vector<Published> all(peers_.size());
  allgather(comm, rank, &mine, all.data(), 2, MPI_INT64_T, "shared memory set-up");
  for (std::size_t peer = 0; peer < peers_.size(); ++peer) {
    if (static_cast<int>(peer) == rank || !mappable.includes(static_cast<int>(peer))) continue;
    const std::string path =
        "/proc/" + std::to_string(all[peer].pid) + "/fd/" + std::to_string(all[peer].fd);
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    void* at = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (at != MAP_FAILED && at != nullptr) peers_[peer] = static_cast<std::byte*>(at);
  }
  // Nobody closes its memfd before every peer opened it (the destructor is
  // collective too).
  barrier(comm, rank, "shared memory set-up");
}

bool SharedMemfd::every_peer_mapped() const {
  for (std::byte* peer : peers_)
    if (!peer) return false;
  return true;
}

void SharedMemfd::discard(std::size_t offset, std::size_t bytes) {
  madvise(local_ + offset, bytes, MADV_REMOVE);
}

SharedMemfd::~SharedMemfd() {
  release();
}

void SharedMemfd::release() noexcept {
  for (std::byte*& peer : peers_) {
    if (peer && peer != local_) munmap(peer, size_);
    peer = nullptr;
  }
  // Peers may reach this memory until the transport says they cannot.
  auto unmap_local = [local = local_, size = size_] {
    if (local) munmap(local, size);
  };
  local_ = nullptr;
  if (region_.valid()) {
    try {
      transport_.deregister(region_, unmap_local);  // collective, as the constructor
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
  } else {
    unmap_local();
  }
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace mpidsm::detail
