#include "shared_words.hpp"

#include <unistd.h>

#include "common/mpi_exchange.hpp"

namespace mpidsm::detail {

SharedWords::SharedWords(MPI_Comm comm, Transport& transport, std::size_t bytes,
                         const MappablePeers& mappable, const std::string& what)
    : transport_(transport),
      memory_(comm, transport, bytes, mappable, what),
      cpu_(static_cast<std::size_t>(transport.size()), nullptr) {
  // Agreed, so that no rank's CPU atomics meet another's NIC atomics.
  const int mine = mappable.enabled() && memory_.every_peer_mapped();
  int all = 0;
  allreduce(comm, transport.rank(), &mine, &all, 1, MPI_INT, MPI_MIN, what.c_str());
  direct_ = all != 0;
  const bool through_messages = transport.all_reach_through_messages(
      mappable.enabled(), [this](int peer) { return maps(peer); });
  if (direct_ || through_messages)
    for (int peer = 0; peer < transport.size(); ++peer)
      cpu_[static_cast<std::size_t>(peer)] = memory_.peer(peer);
}

void SharedWords::clear_local(std::size_t offset, std::size_t bytes) {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t end = offset + bytes;
  const std::size_t inner_begin = (offset + page - 1) / page * page;
  const std::size_t inner_end = end / page * page;
  if (inner_begin >= inner_end) {
    std::memset(memory_.local() + offset, 0, bytes);
    return;
  }
  std::memset(memory_.local() + offset, 0, inner_begin - offset);
  memory_.discard(inner_begin, inner_end - inner_begin);
  std::memset(memory_.local() + inner_end, 0, end - inner_end);
}

}  // namespace mpidsm::detail
