// The endpoints of one worker to every rank, made when first used. At
// start-up only the worker addresses travel (one allgather); an endpoint,
// and over tcp its connection, exists only for a peer this rank has talked
// to, so a rank that talks to a few peers of a large job pays for those
// few (docs/scaling.md). Peers on this node connect at once: they reach
// each other through shared memory, whose mappings (rkey_ptr) direct loads
// and stores use from the first registration on, and a node holds tens of
// ranks, not thousands. A setting (MPIDSM_EAGER_CONNECT) connects every
// pair at start-up instead.
#pragma once

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "peer_liveness.hpp"

namespace mpidsm::detail {

class EndpointTable {
 public:
  // Collective: learns every rank's address of the same worker, and connects
  // to this rank itself, to the peers `liveness` watches (this node) and,
  // when `eager`, to every rank. `watches` (per rank) outlives the table.
  void open(MPI_Comm comm, int rank, ucp_worker_h worker, std::span<PeerWatch> watches,
            const PeerLiveness& liveness, bool eager);

  // The endpoint to `peer` (a valid rank), made now if this is its first
  // use. Thread-safe; throws an Error naming the peer if UCX refuses.
  ucp_ep_h get(int peer) {
    ucp_ep_h ep = slots_[static_cast<std::size_t>(peer)].load(std::memory_order_acquire);
    return ep ? ep : connect(peer);
  }
  // Whether an endpoint to `peer` exists (for counting, not for use).
  bool connected(int peer) const {
    return slots_ && slots_[static_cast<std::size_t>(peer)].load(std::memory_order_acquire);
  }
  bool opened() const { return slots_ != nullptr; }
  // Bytes of the addresses kept for peers not connected yet.
  std::size_t address_bytes() const;
  // Starts closing every endpoint made; the requests UCX still works on go
  // into `closing`. No endpoint is made afterwards.
  void close(std::uint32_t flags, std::vector<ucs_status_ptr_t>& closing);

 private:
  ucp_ep_h connect(int peer);

  int rank_ = -1;
  int size_ = 0;
  ucp_worker_h worker_ = nullptr;
  std::span<PeerWatch> watches_;
  const PeerLiveness* liveness_ = nullptr;
  // Per rank: its worker's address until the endpoint is made (then freed).
  std::vector<std::vector<std::byte>> addresses_;
  std::unique_ptr<std::atomic<ucp_ep_h>[]> slots_;
  mutable std::mutex connecting_;  // one endpoint per peer, whichever thread asks first
  bool closed_ = false;            // guarded by connecting_
};

}  // namespace mpidsm::detail
