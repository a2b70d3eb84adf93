// Landing calls: large data to a peer UCX reaches through active messages,
// sent by UCX's rendezvous and received straight where the callee's landing
// handler places it. Over tcp UCX emulates a put as an active message per
// 8 KiB fragment, which the target copies and acknowledges; a rendezvous
// moves the data in one zero-copy transfer after a request-to-send, as MPI's
// large messages do. The callee acknowledges once the data has landed, as a
// remote call's return (remote_calls.cpp), so flush(peer) covers it.
#include <ucp/api/ucp.h>

#include <cstdio>
#include <cstring>

#include "library_messaging.hpp"
#include "transport_impl.hpp"

namespace mpidsm {

ucs_status_t Transport::Impl::on_landing(void* arg, const void* header, std::size_t header_length,
                                         void* data, std::size_t length,
                                         const ucp_am_recv_param_t* param) {
  auto& s = *static_cast<Impl*>(arg);
  if (s.lost.load(std::memory_order_relaxed)) return UCS_OK;  // nobody left to tell
  CallHeader call;
  const RemoteHandlerSlot& slot =
      s.delivered_call(header, header_length, *param, CallBytes::landing, call);
  std::byte* at = slot.landing.load(std::memory_order_acquire)(
      slot.context.load(std::memory_order_acquire), call.source, call.argument, length);
  ucp_ep_h caller = s.caller_endpoint(call.source);
  if (!caller) return UCS_OK;
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {  // UCX sent it eagerly after all
    std::memcpy(at, data, length);
    s.acknowledge(caller, call.source);
    return UCS_OK;
  }
  ucp_request_param_t receive{};
  receive.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  receive.cb.recv_am = &on_landed;
  receive.user_data = &s.landing_sources[static_cast<std::size_t>(call.source)];
  ucs_status_ptr_t received = ucp_am_recv_data_nbx(s.worker, data, at, length, &receive);
  if (UCS_PTR_IS_ERR(received)) {
    s.landing_failed(call.source, length, UCS_PTR_STATUS(received));
  } else if (received == nullptr) {
    s.acknowledge(caller, call.source);  // landed already
  }
  // The receive was started here, which releases UCX's descriptor.
  return UCS_INPROGRESS;
}

void Transport::Impl::on_landed(void* request, ucs_status_t status, std::size_t length,
                                void* source_pointer) {
  const auto& source = *static_cast<const LandingSource*>(source_pointer);
  Impl& s = *source.impl;
  ucp_request_free(request);
  if (status != UCS_OK)
    s.landing_failed(source.rank, length, status);
  else if (ucp_ep_h caller = s.caller_endpoint(source.rank))
    s.acknowledge(caller, source.rank);
}

// The caller would wait for the acknowledgement in vain: it counts as gone
// here, and its endpoint's failure tells it.
void Transport::Impl::landing_failed(int source, std::size_t length, ucs_status_t status) noexcept {
  if (!lost.load(std::memory_order_relaxed))
    std::fprintf(stderr, "mpidsm: rank %d: receiving %zu bytes from rank %d failed: %s\n", rank,
                 length, source, ucs_status_string(status));
  liveness.report_gone(source);
}

namespace detail {

std::uint32_t LibraryMessaging::add_landing_handler(LandingHandler handler, void* context) {
  return transport_.impl_->add_handler(nullptr, nullptr, handler, context);
}

void LibraryMessaging::call_landing_nbi(int peer, std::uint32_t id, std::uint64_t argument,
                                        const void* bytes, std::size_t size) {
  auto in_use = transport_.impl_->use_worker("call_landing_nbi");
  Transport::Impl& s = *transport_.impl_;
  s.pin_until_flush(peer, bytes, size, false);
  s.send_acknowledged(peer, id, bytes, size, argument, "call_landing_nbi",
                      Transport::Impl::CallBytes::landing);
}

Request LibraryMessaging::call_landing(int peer, std::uint32_t id, std::uint64_t argument,
                                       const void* bytes, std::size_t size) {
  auto in_use = transport_.impl_->use_worker("call_landing");
  Transport::Impl& s = *transport_.impl_;
  const bool pinned = detail::pin(bytes, size, false);
  ucs_status_ptr_t sending = nullptr;
  try {
    s.send_acknowledged(peer, id, bytes, size, argument, "call_landing",
                        Transport::Impl::CallBytes::landing, &sending);
  } catch (const Error&) {
    if (pinned) detail::unpin(bytes, size);
    throw;
  }
  return Request(&transport_, sending, Request::Kind::send_or_rma, "call_landing", peer, 0, bytes,
                 pinned ? size : 0);
}

void LibraryMessaging::wait_for_calls(int peer) {
  auto in_use = transport_.impl_->use_worker("wait_for_calls");
  transport_.impl_->check_peer(peer, "wait_for_calls");
  transport_.impl_->wait_for_calls(peer, "wait_for_calls");
}

}  // namespace detail
}  // namespace mpidsm
