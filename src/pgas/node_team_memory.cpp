#include "node_team_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "common/mpi_exchange.hpp"

namespace mpidsm::detail {
namespace {

// Maps `bytes` of `fd` read-write; nullptr on failure. The address is
// checked, never trusted (UCX's memory hooks may replace mmap).
std::byte* map_shared(int fd, std::size_t bytes) {
  void* at = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return at == MAP_FAILED || at == nullptr ? nullptr : static_cast<std::byte*>(at);
}

}  // namespace

std::unique_ptr<NodeTeamMemory> NodeTeamMemory::map(MPI_Comm comm, int member, bool usable,
                                                    std::size_t bytes_per_member) {
  const char* operation = "team set-up";
  int members = 0;
  MPI_Comm_size(comm, &members);
  // The team shares a node when MPI puts every member in this rank's
  // shared-memory communicator.
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(member, "MPI_Comm_split_type in team set-up",
            MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, member, MPI_INFO_NULL, &node));
  int on_node = 0;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  const int here_usable = usable && on_node == members ? 1 : 0;
  int everyone_usable = 0;
  allreduce(comm, member, &here_usable, &everyone_usable, 1, MPI_INT, MPI_LAND, operation);
  if (!everyone_usable) return nullptr;

  const std::size_t bytes = bytes_per_member * static_cast<std::size_t>(members);
  std::int64_t published[2] = {getpid(), -1};  // the creator's pid and fd
  std::byte* base = nullptr;
  if (member == 0) {
    const int fd = memfd_create("mpidsm-team", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0) base = map_shared(fd, bytes);
    published[1] = base ? fd : -1;
    if (!base && fd >= 0) close(fd);
  }
  broadcast(comm, member, published, 2, MPI_INT64_T, 0, operation);
  if (member != 0 && published[1] >= 0) {
    const std::string path =
        "/proc/" + std::to_string(published[0]) + "/fd/" + std::to_string(published[1]);
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
      base = map_shared(fd, bytes);
      close(fd);
    }
  }
  // The creator closes its descriptor once every member has opened it.
  const int mapped_here = base ? 1 : 0;
  int mapped = 0;
  allreduce(comm, member, &mapped_here, &mapped, 1, MPI_INT, MPI_LAND, operation);
  if (member == 0 && published[1] >= 0) close(static_cast<int>(published[1]));
  if (!mapped) {
    if (base) munmap(base, bytes);
    return nullptr;
  }
  return std::unique_ptr<NodeTeamMemory>(new NodeTeamMemory(base, bytes, bytes_per_member));
}

NodeTeamMemory::~NodeTeamMemory() {
  munmap(base_, bytes_);
}

}  // namespace mpidsm::detail
