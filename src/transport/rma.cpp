// One-sided put and get through UCX, and flush for remote completion.
#include <ucp/api/ucp.h>

#include <vector>

#include "common/pinned_ranges.hpp"
#include "transport_impl.hpp"

namespace mpidsm {

void Transport::put_nbi(int peer, const MemoryRegion& dst, std::size_t offset, const void* src,
                        std::size_t size) {
  auto in_use = impl_->use_worker("put");
  const auto& key = impl_->remote(dst, peer, offset, size, "put");
  impl_->traffic.note(size);
  impl_->pin_until_flush(peer, src, size, false);
  ucp_request_param_t param{};
  impl_->detach(ucp_put_nbx(impl_->endpoints.get(peer), src, size, key.base + offset,
                            static_cast<ucp_rkey_h>(key.rkey), &param),
                "put", peer);
  impl_->note_rma(peer);  // after issuing: a flush that sees it covers the put
}

void Transport::get_nbi(int peer, const MemoryRegion& src, std::size_t offset, void* dst,
                        std::size_t size) {
  auto in_use = impl_->use_worker("get");
  const auto& key = impl_->remote(src, peer, offset, size, "get");
  impl_->traffic.note(size);
  impl_->pin_until_flush(peer, dst, size, true);
  ucp_request_param_t param{};
  impl_->detach(ucp_get_nbx(impl_->endpoints.get(peer), dst, size, key.base + offset,
                            static_cast<ucp_rkey_h>(key.rkey), &param),
                "get", peer);
  impl_->note_rma(peer);
}

Request Transport::put_nb(int peer, const MemoryRegion& dst, std::size_t offset, const void* src,
                          std::size_t size) {
  auto in_use = impl_->use_worker("put");
  const auto& key = impl_->remote(dst, peer, offset, size, "put");
  impl_->traffic.note(size);
  const bool pinned = detail::pin(src, size, false);
  ucp_request_param_t param{};
  ucs_status_ptr_t request = ucp_put_nbx(impl_->endpoints.get(peer), src, size, key.base + offset,
                                         static_cast<ucp_rkey_h>(key.rkey), &param);
  impl_->note_rma(peer);
  return Request(this, request, Request::Kind::send_or_rma, "put", peer, 0, src, pinned ? size : 0);
}

Request Transport::get_nb(int peer, const MemoryRegion& src, std::size_t offset, void* dst,
                          std::size_t size) {
  auto in_use = impl_->use_worker("get");
  const auto& key = impl_->remote(src, peer, offset, size, "get");
  impl_->traffic.note(size);
  const bool pinned = detail::pin(dst, size, true);
  ucp_request_param_t param{};
  ucs_status_ptr_t request = ucp_get_nbx(impl_->endpoints.get(peer), dst, size, key.base + offset,
                                         static_cast<ucp_rkey_h>(key.rkey), &param);
  impl_->note_rma(peer);
  return Request(this, request, Request::Kind::send_or_rma, "get", peer, 0, dst, pinned ? size : 0);
}

void Transport::put(int peer, const MemoryRegion& dst, std::size_t offset, const void* src,
                    std::size_t size) {
  put_nbi(peer, dst, offset, src, size);
  flush(peer);
}

void Transport::get(int peer, const MemoryRegion& src, std::size_t offset, void* dst,
                    std::size_t size) {
  auto in_use = impl_->use_worker("get");
  const auto& key = impl_->remote(src, peer, offset, size, "get");
  impl_->traffic.note(size);
  detail::ScopedPin pin(dst, size, true);
  ucp_request_param_t param{};
  impl_->wait(ucp_get_nbx(impl_->endpoints.get(peer), dst, size, key.base + offset,
                          static_cast<ucp_rkey_h>(key.rkey), &param),
              "get", peer);
}

// UCX's flush only where a put, get or atomic went to the peer since its
// last flush: over tcp, after any traffic (remote calls included), it sends
// a zero-length put and waits for its acknowledgement, a round trip that
// calls, acknowledged themselves, do not need.
void Transport::flush(int peer) {
  auto in_use = impl_->use_worker("flush");
  impl_->check_peer(peer, "flush");
  ucp_request_param_t param{};
  if (impl_->rma_since_flush[static_cast<std::size_t>(peer)].exchange(false))
    impl_->wait(ucp_ep_flush_nbx(impl_->endpoints.get(peer), &param), "flush", peer);
  impl_->wait_for_calls(peer, "flush");
  impl_->unpin_flushed(peer);
}

void Transport::flush_all() {
  auto in_use = impl_->use_worker("flush_all");
  // Endpoint flushes to every peer, all in flight at once, rather than
  // ucp_worker_flush_nbx: with UCX 1.13 the worker flush returned before puts
  // that UCX emulates with active messages (small puts to memory UCX did not
  // allocate) had landed at the target; the DSM test with 3+ writers to one
  // home caught it. Endpoint flushes wait for them.
  // Each request with its peer, so a failure names the rank.
  impl_->check_peer(rank_, "flush_all");  // no endpoint is used once the runtime is lost
  std::vector<std::pair<ucs_status_ptr_t, int>>& pending = impl_->flush_requests;
  pending.clear();
  ucp_request_param_t param{};
  for (int peer = 0; peer < size_; ++peer) {
    if (!impl_->rma_since_flush[static_cast<std::size_t>(peer)].exchange(false)) continue;
    ucs_status_ptr_t request = ucp_ep_flush_nbx(impl_->endpoints.get(peer), &param);
    if (UCS_PTR_IS_ERR(request)) {
      for (auto [r, p] : pending) impl_->wait(r, "flush_all", p);
      impl_->throw_failed("flush_all", peer, UCS_PTR_STATUS(request));
    }
    if (request) pending.emplace_back(request, peer);
  }
  for (auto [request, peer] : pending) impl_->wait(request, "flush_all", peer);
  impl_->wait_for_calls(no_rank, "flush_all");
  impl_->unpin_flushed(no_rank);
}

void Transport::fence() {
  auto in_use = impl_->use_worker("fence");
  detail::check_ucx(rank_, "ucp_worker_fence", no_rank, ucp_worker_fence(impl_->worker));
}

}  // namespace mpidsm
