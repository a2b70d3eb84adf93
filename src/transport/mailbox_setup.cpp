// Collective set-up of the tagged-message mailboxes: each rank allocates one
// ring per rank of its node in memory UCX lets those ranks map, and every
// pair agrees whether its messages go through the ring.
#include <algorithm>
#include <vector>

#include "common/mpi_exchange.hpp"
#include "transport_impl.hpp"

namespace mpidsm {
int Transport::Impl::learn_node() {
  MPI_Comm node = detail::split_by_node(comm, rank, "Runtime construction (node)");
  MPI_Group all_group, node_group;
  MPI_Comm_group(comm, &all_group);
  MPI_Comm_group(node, &node_group);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  std::vector<int> node_ranks(static_cast<std::size_t>(node_size)), ranks(node_ranks.size());
  for (int i = 0; i < node_size; ++i) node_ranks[static_cast<std::size_t>(i)] = i;
  detail::check_mpi(
      rank, "MPI_Group_translate_ranks",
      MPI_Group_translate_ranks(node_group, node_size, node_ranks.data(), all_group, ranks.data()));
  MPI_Group_free(&node_group);
  MPI_Group_free(&all_group);
  node_index.assign(static_cast<std::size_t>(size), -1);
  for (int i = 0; i < node_size; ++i)
    node_index[static_cast<std::size_t>(ranks[static_cast<std::size_t>(i)])] = i;
  return node_size;
}

void Transport::Impl::open_mailboxes(std::size_t eager_limit) {
  // A setting that differs between ranks must not leave one side writing
  // rings the other never reads: the smallest value wins.
  const char* operation = "Runtime construction (mailboxes)";
  const unsigned long long limit = eager_limit;
  unsigned long long agreed = 0;
  detail::allreduce(comm, rank, &limit, &agreed, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, operation);
  const std::vector<int>& index = node_index;
  const int node_size =
      static_cast<int>(std::count_if(index.begin(), index.end(), [](int i) { return i >= 0; }));
  const int mine_wanted = agreed != 0 && node_size > 1;
  int want = 0;
  detail::allreduce(comm, rank, &mine_wanted, &want, 1, MPI_INT, MPI_MAX, operation);
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
  detail::alltoall(comm, rank, i_write.data(), writes_to_me.data(), 1, MPI_CHAR, operation);
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
