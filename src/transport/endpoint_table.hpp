// The endpoints of one worker to every rank, made when first used. At
// start-up only the worker addresses travel (one allgather); an endpoint,
// and over tcp its connection, exists only for a peer this rank has talked
// to, so a rank that talks to a few peers of a large job pays for those
// few (docs/scaling.md), plus the liveness ring below. Peers on this node
// connect at once: they reach each other through shared memory, whose
// mappings (rkey_ptr) direct loads and stores use from the first
// registration on, and a node holds tens of ranks, not thousands. A
// setting (MPIDSM_EAGER_CONNECT) connects every pair at start-up instead.
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
  // How many peers a table connects to at start-up.
  enum class Wiring {
    // this rank itself, the peers `liveness` watches (this node), and the
    // ranks 2^k before and after this one
    node_ring,
    every,  // every rank (MPIDSM_EAGER_CONNECT=1)
  };
  // Collective: learns every rank's address of the same worker and connects
  // as `wiring` says. `watches` (per rank) outlives the table.
  //
  // The ring is for liveness: a rank learns that a peer on another node died
  // through UCX's error on an endpoint to it, which it has only if they
  // talked. Connected to the ranks 2^k away, every rank is at most log N
  // hops from every other, and a survivor that finds a peer gone tells the
  // ranks it is connected to as it leaves (Transport::Impl::lose), so a
  // death reaches every wait, even one on a peer it never talked to.
  void open(MPI_Comm comm, int rank, ucp_worker_h worker, std::span<PeerWatch> watches,
            PeerLiveness& liveness, Wiring wiring);

  // The endpoint to `peer` (a valid rank), made now if this is its first
  // use. Thread-safe; throws an Error naming the peer if UCX refuses. A
  // caller that may make one holds the worker as counted inside
  // (Transport::Impl::use_worker), or is the worker's own callback: UCX
  // makes an endpoint under the worker's lock, which a progress thread
  // holds while its callbacks ask this table.
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
  // Whether a peer died, looking for at most a second (after UCX failed).
  bool peer_died();
  PeerLiveness* liveness_ = nullptr;
  // Per rank: its worker's address until the endpoint is made (then freed).
  std::vector<std::vector<std::byte>> addresses_;
  std::unique_ptr<std::atomic<ucp_ep_h>[]> slots_;
  mutable std::mutex connecting_;  // one endpoint per peer, whichever thread asks first
  bool closed_ = false;            // guarded by connecting_
};

}  // namespace mpidsm::detail
