// Collective set-up of the tagged-message mailboxes: each rank allocates one
// ring per rank of its node in memory UCX lets those ranks map, and every
// pair agrees whether its messages go through the ring.
#include <algorithm>
#include <vector>

#include "common/mpi_exchange.hpp"
#include "transport_impl.hpp"

namespace mpidsm {
namespace {

// The rank's index on its node (MPI's shared-memory split), by global rank;
// -1 for ranks on other nodes.
std::vector<int> node_indices(MPI_Comm comm, int rank, int size, MPI_Comm node) {
  MPI_Group world_group, node_group;
  MPI_Comm_group(comm, &world_group);
  MPI_Comm_group(node, &node_group);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  std::vector<int> node_ranks(node_size), world_ranks(node_size);
  for (int i = 0; i < node_size; ++i) node_ranks[i] = i;
  detail::check_mpi(rank, "MPI_Group_translate_ranks",
                    MPI_Group_translate_ranks(node_group, node_size, node_ranks.data(), world_group,
                                              world_ranks.data()));
  MPI_Group_free(&node_group);
  MPI_Group_free(&world_group);
  std::vector<int> index(size, -1);
  for (int i = 0; i < node_size; ++i) index[world_ranks[i]] = i;
  return index;
}

}  // namespace

void Transport::Impl::open_mailboxes(std::size_t eager_limit) {
  // A setting that differs between ranks must not leave one side writing
  // rings the other never reads: the smallest value wins.
  unsigned long long agreed = eager_limit;
  detail::check_mpi(rank, "MPI_Allreduce",
                    MPI_Allreduce(MPI_IN_PLACE, &agreed, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm));
  MPI_Comm node;
  detail::check_mpi(rank, "MPI_Comm_split_type",
                    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  const std::vector<int> index = node_indices(comm, rank, size, node);
  MPI_Comm_free(&node);
  int want = agreed != 0 && node_size > 1;
  detail::check_mpi(rank, "MPI_Allreduce",
                    MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT, MPI_MAX, comm));
  if (!want) return;  // no rank shares its node (or the mailboxes are off)

  const std::size_t ring = detail::RingLayout::ring_bytes;
  const MemoryRegion region =
      map_region(nullptr, ring * static_cast<std::size_t>(node_size), true, true, false);
  // I write to a peer's ring for me when the peer is on this node, other
  // ranks share it, and UCX maps its memory here (the limit is not 0: some
  // rank wants mailboxes, and every rank agreed on the limit).
  std::vector<char> i_write(size), writes_to_me(size);
  for (int peer = 0; peer < size; ++peer)
    i_write[peer] = node_size > 1 && index[peer] >= 0 && region.mapped(peer);
  detail::check_mpi(
      rank, "MPI_Alltoall",
      MPI_Alltoall(i_write.data(), 1, MPI_CHAR, writes_to_me.data(), 1, MPI_CHAR, comm));
  detail::Mailboxes::Setup setup{
      messaging_worker, runtime_id, rank, static_cast<std::size_t>(agreed), {}, {}};
  auto* mine = static_cast<std::byte*>(region.local_base());
  for (int peer = 0; peer < size; ++peer) {
    setup.outgoing.push_back(i_write[peer] ? static_cast<std::byte*>(region.mapped(peer)) +
                                                 ring * static_cast<std::size_t>(index[rank])
                                           : nullptr);
    setup.incoming.push_back(
        writes_to_me[peer] ? mine + ring * static_cast<std::size_t>(index[peer]) : nullptr);
  }
  mailboxes.open(std::move(setup));
}

}  // namespace mpidsm
