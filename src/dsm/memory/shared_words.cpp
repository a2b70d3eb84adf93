#include "shared_words.hpp"

#include "common/mpi_exchange.hpp"
#include "lazy_array.hpp"
#include "transport/library_messaging.hpp"

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
  const bool through_messages = LibraryMessaging(transport).all_reach_through_messages(
      mappable.enabled(), [this](int peer) { return maps(peer); });
  if (direct_ || through_messages)
    for (int peer = 0; peer < transport.size(); ++peer)
      cpu_[static_cast<std::size_t>(peer)] = memory_.peer(peer);
}

void SharedWords::clear_local(std::size_t offset, std::size_t bytes) {
  std::byte* words = memory_.local();
  zero_range(words + offset, words + offset + bytes, [&](std::byte* pages, std::size_t length) {
    memory_.discard(static_cast<std::size_t>(pages - words), length);
  });
}

}  // namespace mpidsm::detail
