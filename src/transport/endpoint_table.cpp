#include "endpoint_table.hpp"

#include <chrono>
#include <string>
#include <thread>

#include "common/mpi_exchange.hpp"
#include "mpidsm/error.hpp"
#include "ucx_status.hpp"

namespace mpidsm::detail {
namespace {

std::vector<std::byte> worker_address(int rank, ucp_worker_h worker) {
  ucp_address_t* address = nullptr;
  std::size_t length = 0;
  check_ucx(rank, "ucp_worker_get_address", no_rank,
            ucp_worker_get_address(worker, &address, &length));
  auto* bytes = reinterpret_cast<const std::byte*>(address);
  std::vector<std::byte> copy(bytes, bytes + length);
  ucp_worker_release_address(worker, address);
  return copy;
}

// UCX's error callback on an endpoint to a peer this rank cannot watch
// itself: the peer's connection broke (its process died, its node went).
void on_endpoint_error(void* peer, ucp_ep_h, ucs_status_t) {
  auto* watch = static_cast<PeerWatch*>(peer);
  watch->liveness->report_gone(watch->rank);
}

}  // namespace

void EndpointTable::open(MPI_Comm comm, int rank, ucp_worker_h worker, std::span<PeerWatch> watches,
                         PeerLiveness& liveness, Wiring wiring) {
  rank_ = rank;
  worker_ = worker;
  watches_ = watches;
  liveness_ = &liveness;
  addresses_ = allgather_blobs(comm, worker_address(rank, worker));
  size_ = static_cast<int>(addresses_.size());
  slots_ = std::make_unique<std::atomic<ucp_ep_h>[]>(addresses_.size());
  for (int peer = 0; peer < size_; ++peer)
    if (wiring == Wiring::every || peer == rank || liveness.watched(peer)) connect(peer);
  if (wiring == Wiring::node_ring)
    for (int distance = 1; distance < size_; distance *= 2) {
      connect((rank + distance) % size_);
      connect((rank - distance % size_ + size_) % size_);
    }
}

// Endpoints to peers that the liveness does not watch (other nodes, other
// PID namespaces) use UCX's peer error handling, which limits them to
// transports that detect a peer's failure (over tcp, a reset or closed
// connection, and keepalive for a silent one); same-node peers keep every
// transport, shared memory included, and are watched through /proc.
ucp_ep_h EndpointTable::connect(int peer) {
  std::lock_guard<std::mutex> guard(connecting_);
  auto& slot = slots_[static_cast<std::size_t>(peer)];
  if (ucp_ep_h made = slot.load(std::memory_order_relaxed)) return made;
  if (closed_)
    throw Error(Errc::invalid_state, rank_,
                "rank " + std::to_string(peer) + ": the runtime's endpoints are closed");
  std::vector<std::byte>& address = addresses_[static_cast<std::size_t>(peer)];
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  if (peer != rank_ && !liveness_->watched(peer)) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = on_endpoint_error;
    params.err_handler.arg = &watches_[static_cast<std::size_t>(peer)];
  }
  ucp_ep_h ep = nullptr;
  const ucs_status_t status = ucp_ep_create(worker_, &params, &ep);
  if (status != UCS_OK && peer_died()) {
    throw Error(Errc::transport, rank_,
                "connecting to rank " + std::to_string(peer) + ": " + liveness_->describe_gone() +
                    "; the runtime cannot go on without it");
  }
  check_ucx(rank_, "ucp_ep_create", peer, status);
  std::vector<std::byte>().swap(address);  // UCX keeps what it needs
  slot.store(ep, std::memory_order_release);
  return ep;
}

// A peer that died since it sent its address fails ucp_ep_create ("Shared
// memory error": its segments went as its process exited). The process may
// not be gone from /proc yet when they are, so the liveness gets a moment
// to see it; the error then names the death, not what UCX found.
bool EndpointTable::peer_died() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  do {
    if (liveness_->look_now() >= 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (std::chrono::steady_clock::now() < until);
  return false;
}

std::size_t EndpointTable::address_bytes() const {
  std::lock_guard<std::mutex> guard(connecting_);
  std::size_t bytes = 0;
  for (const auto& address : addresses_) bytes += address.capacity();
  return bytes;
}

void EndpointTable::close(std::uint32_t flags, std::vector<ucs_status_ptr_t>& closing) {
  std::lock_guard<std::mutex> guard(connecting_);
  closed_ = true;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = flags;
  for (int peer = 0; peer < size_; ++peer) {
    ucp_ep_h ep = slots_[static_cast<std::size_t>(peer)].exchange(nullptr);
    if (!ep) continue;
    ucs_status_ptr_t request = ucp_ep_close_nbx(ep, &param);
    if (request && !UCS_PTR_IS_ERR(request)) closing.push_back(request);
  }
}

}  // namespace mpidsm::detail
