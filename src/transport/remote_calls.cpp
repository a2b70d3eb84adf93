// Remote calls: a handler a peer runs on a message, over UCX active messages,
// acknowledged once the handler has returned. flush(peer) waits for those
// acknowledgements, so a call completes exactly as a put does.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mpi_exchange.hpp"
#include "transport_impl.hpp"

namespace mpidsm {
namespace {

// UCX active-message ids of mpidsm's two messages.
constexpr unsigned kCallMessage = 0x6d64;  // "md": run a handler
constexpr unsigned kDoneMessage = 0x6d65;  // its handler returned

}  // namespace

// Runs at the callee, inside its progress: calls the handler, then tells the
// caller. UCX hands over the whole message (eager: forced by the sender).
ucs_status_t Transport::Impl::on_call(void* arg, const void* header, std::size_t header_length,
                                      void* data, std::size_t length,
                                      const ucp_am_recv_param_t* param) {
  auto& s = *static_cast<Impl*>(arg);
  CallHeader call;
  if (header_length != sizeof call || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    std::fprintf(stderr, "mpidsm: rank %d: malformed remote call (header %zu bytes)\n", s.rank,
                 header_length);
    std::abort();
  }
  std::memcpy(&call, header, sizeof call);
  if (call.handler >= s.remote_handlers.size() || call.source < 0 || call.source >= s.size ||
      s.remote_handlers[call.handler].handler.load(std::memory_order_acquire) == nullptr) {
    std::fprintf(stderr, "mpidsm: rank %d: remote call from rank %d to unknown handler %u\n",
                 s.rank, call.source, call.handler);
    std::abort();
  }
  auto& slot = s.remote_handlers[call.handler];
  slot.handler.load(std::memory_order_acquire)(slot.context.load(std::memory_order_acquire),
                                               call.source, static_cast<const std::byte*>(data),
                                               length);
  ucp_request_param_t done{};
  ucs_status_ptr_t request = ucp_am_send_nbx(s.endpoints[static_cast<std::size_t>(call.source)],
                                             kDoneMessage, &s.acknowledgement_header,
                                             sizeof s.acknowledgement_header, nullptr, 0, &done);
  if (UCS_PTR_IS_ERR(request)) {
    // The caller learns of the failure from its own endpoint (peer gone).
    std::fprintf(stderr, "mpidsm: rank %d: acknowledging a remote call from rank %d failed: %s\n",
                 s.rank, call.source, ucs_status_string(UCS_PTR_STATUS(request)));
  } else if (request != nullptr) {
    ucp_request_free(request);  // released by UCX once sent
  }
  return UCS_OK;
}

ucs_status_t Transport::Impl::on_call_done(void* arg, const void* header, std::size_t header_length,
                                           void*, std::size_t, const ucp_am_recv_param_t*) {
  auto& s = *static_cast<Impl*>(arg);
  std::int32_t callee = -1;
  if (header_length == sizeof callee) std::memcpy(&callee, header, sizeof callee);
  if (callee < 0 || callee >= s.size) {
    std::fprintf(stderr, "mpidsm: rank %d: malformed remote call acknowledgement\n", s.rank);
    std::abort();
  }
  s.calls_in_flight[static_cast<std::size_t>(callee)].fetch_sub(1, std::memory_order_release);
  return UCS_OK;
}

void Transport::Impl::listen_for_remote_calls() {
  acknowledgement_header = rank;
  calls_in_flight = std::make_unique<std::atomic<std::int64_t>[]>(static_cast<std::size_t>(size));
  for (auto [id, callback] :
       {std::pair{kCallMessage, &on_call}, std::pair{kDoneMessage, &on_call_done}}) {
    ucp_am_handler_param_t param{};
    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    param.id = id;
    param.cb = callback;
    param.arg = this;
    param.flags = UCP_AM_FLAG_WHOLE_MSG;
    detail::check_ucx(rank, "ucp_worker_set_am_recv_handler", no_rank,
                      ucp_worker_set_am_recv_handler(worker, &param));
  }
}

void Transport::Impl::wait_for_calls(int peer, const char* operation) {
  const int first = peer == no_rank ? 0 : peer, last = peer == no_rank ? size - 1 : peer;
  for (int p = first; p <= last; ++p) {
    auto& pending = calls_in_flight[static_cast<std::size_t>(p)];
    if (pending.load(std::memory_order_acquire) == 0) continue;
    progress_until([&] { return pending.load(std::memory_order_acquire) == 0; }, operation);
  }
}

std::uint32_t Transport::add_remote_handler(RemoteHandler handler, void* context) {
  Impl& s = *impl_;
  std::uint32_t id = 0;
  while (id < s.remote_handlers.size() && s.remote_handlers[id].handler.load() != nullptr) ++id;
  std::optional<Error> full;
  if (id == s.remote_handlers.size())
    full.emplace(Errc::no_memory, rank_,
                 "add_remote_handler: all " + std::to_string(id) + " handler slots are in use");
  detail::throw_if_any_failed(s.comm, rank_, full, "add_remote_handler");
  static constexpr const char* kNames[] = {"remote handler id"};
  const long long values[] = {static_cast<long long>(id)};
  detail::require_same_values(s.comm, rank_, kNames, values, Errc::collective_mismatch,
                              "add_remote_handler");
  auto& slot = s.remote_handlers[id];
  slot.header = {id, rank_};
  slot.context.store(context, std::memory_order_relaxed);
  slot.handler.store(handler, std::memory_order_release);
  return id;
}

void Transport::remove_remote_handler(std::uint32_t id) noexcept {
  if (id < impl_->remote_handlers.size())
    impl_->remote_handlers[id].handler.store(nullptr, std::memory_order_release);
}

void Transport::call_nbi(int peer, std::uint32_t id, const void* bytes, std::size_t size) {
  auto in_use = impl_->use_worker("call_nbi");
  Impl& s = *impl_;
  s.check_peer(peer, "call_nbi");
  if (id >= s.remote_handlers.size() || s.remote_handlers[id].handler.load() == nullptr)
    throw Error(Errc::invalid_argument, rank_, "call_nbi: no remote handler " + std::to_string(id));
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  // Eager: the callee's handler gets the whole message at once, never a
  // rendezvous descriptor it would have to receive into memory of its own.
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  auto& pending = s.calls_in_flight[static_cast<std::size_t>(peer)];
  pending.fetch_add(1, std::memory_order_relaxed);
  ucs_status_ptr_t request =
      ucp_am_send_nbx(s.endpoints[static_cast<std::size_t>(peer)], kCallMessage,
                      &s.remote_handlers[id].header, sizeof(Impl::CallHeader), bytes, size, &param);
  if (UCS_PTR_IS_ERR(request)) pending.fetch_sub(1, std::memory_order_relaxed);
  // The acknowledgement, not the request, tells that the bytes were used.
  s.detach(request, "call_nbi", peer);
}

}  // namespace mpidsm
