// Remote calls: a handler a peer runs on a message, over UCX active messages,
// acknowledged once the handler has returned. flush(peer) waits for those
// acknowledgements, so a call completes exactly as a put does.
// Answered calls (library_messaging.cpp) get the handler's answer instead,
// as a tagged message the caller posted the receive of before calling (no
// acknowledgement then).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/mpi_exchange.hpp"
#include "tag_codec.hpp"
#include "transport_impl.hpp"

namespace mpidsm {
namespace {

// UCX active-message ids of mpidsm's messages.
constexpr unsigned kCallMessage = 0x6d64;     // "md": run a handler
constexpr unsigned kDoneMessage = 0x6d65;     // its handler returned (or its bytes landed)
constexpr unsigned kLandingMessage = 0x6d66;  // bytes to land where a handler says

// Releases a request whose outcome the caller learns otherwise.
void free_sent(ucs_status_ptr_t request, int rank, const char* what, int peer) {
  if (UCS_PTR_IS_ERR(request)) {
    // The caller learns of the failure from its own endpoint (peer gone).
    std::fprintf(stderr, "mpidsm: rank %d: %s from rank %d failed: %s\n", rank, what, peer,
                 ucs_status_string(UCS_PTR_STATUS(request)));
  } else if (request != nullptr) {
    ucp_request_free(request);  // released by UCX once sent
  }
}

// A transient answer's copy, freed once UCX has sent it.
void free_copy(void*, ucs_status_t, void* copy) {
  std::free(copy);
}

}  // namespace

void Transport::Impl::send_answer(ucp_ep_h caller, int source, std::uint64_t tag,
                                  const detail::Answer& answer) noexcept {
  traffic.note(answer.size);
  ucp_request_param_t send{};
  if (answer.transient) send.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
  ucs_status_ptr_t sent = ucp_tag_send_nbx(caller, answer.data, answer.size, tag, &send);
  if (answer.transient && UCS_PTR_STATUS(sent) == UCS_ERR_NO_RESOURCE) {
    void* copy = std::malloc(answer.size == 0 ? 1 : answer.size);
    if (copy == nullptr) {
      std::fprintf(stderr, "mpidsm: rank %d: no memory to answer a remote call from rank %d\n",
                   rank, source);
      std::abort();
    }
    std::memcpy(copy, answer.data, answer.size);
    send = {};
    send.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    send.cb.send = free_copy;
    send.user_data = copy;
    sent = ucp_tag_send_nbx(caller, copy, answer.size, tag, &send);
    if (!UCS_PTR_IS_PTR(sent)) std::free(copy);  // sent at once, or failed
  }
  free_sent(sent, rank, "answering a remote call", source);
}

// Runs at the callee, inside its progress: calls the handler, then tells the
// caller. UCX hands over the whole message (eager: forced by the sender).
ucs_status_t Transport::Impl::on_call(void* arg, const void* header, std::size_t header_length,
                                      void* data, std::size_t length,
                                      const ucp_am_recv_param_t* param) {
  auto& s = *static_cast<Impl*>(arg);
  // A call UCX delivers while lose() purges: no endpoint is left to answer.
  if (s.lost.load(std::memory_order_relaxed)) return UCS_OK;
  CallHeader call;
  const RemoteHandlerSlot& slot =
      s.delivered_call(header, header_length, *param, CallBytes::eager, call);
  const bool answered = call.answer_sequence != kUnanswered;
  void* context = slot.context.load(std::memory_order_acquire);
  const auto* bytes = static_cast<const std::byte*>(data);
  ucp_ep_h caller = s.caller_endpoint(call.source);
  if (!caller) return UCS_OK;
  if (answered) {
    const detail::Answer answer =
        slot.answering.load(std::memory_order_acquire)(context, call.source, bytes, length);
    if (!answer.later)
      s.send_answer(caller, call.source,
                    detail::TagCodec::answer_tag(s.runtime_id, s.rank, call.answer_sequence),
                    answer);
    return UCS_OK;
  }
  slot.handler.load(std::memory_order_acquire)(context, call.source, call.argument, bytes, length);
  s.acknowledge(caller, call.source);
  return UCS_OK;
}

void Transport::Impl::acknowledge(ucp_ep_h caller, int source) noexcept {
  traffic.note(sizeof acknowledgement_header);
  ucp_request_param_t send{};
  free_sent(ucp_am_send_nbx(caller, kDoneMessage, &acknowledgement_header,
                            sizeof acknowledgement_header, nullptr, 0, &send),
            rank, "acknowledging a remote call", source);
}

ucp_ep_h Transport::Impl::caller_endpoint(int source) noexcept {
  try {
    return endpoints.get(source);  // a first call may come before any of ours
  } catch (const Error& e) {
    // No way back to the caller (UCX refused the endpoint, or this rank's
    // runtime is lost): this rank treats it as gone, so what waits on it here
    // ends with an error.
    if (!lost.load(std::memory_order_relaxed))
      std::fprintf(stderr, "mpidsm: rank %d: cannot answer rank %d: %s\n", rank, source, e.what());
    liveness.report_gone(source);
    return nullptr;
  }
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
  landing_sources = std::make_unique<LandingSource[]>(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) landing_sources[static_cast<std::size_t>(r)] = {this, r};
  for (auto [id, callback] :
       {std::pair{kCallMessage, &on_call}, std::pair{kDoneMessage, &on_call_done},
        std::pair{kLandingMessage, &on_landing}}) {
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

const Transport::Impl::RemoteHandlerSlot& Transport::Impl::delivered_call(
    const void* header, std::size_t header_length, const ucp_am_recv_param_t& param, CallBytes how,
    CallHeader& call) const {
  const char* what = how == CallBytes::landing ? "landing call" : "remote call";
  const bool announced = (param.recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  if (header_length != sizeof call || (how == CallBytes::eager && announced)) {
    std::fprintf(stderr, "mpidsm: rank %d: malformed %s (header %zu bytes)\n", rank, what,
                 header_length);
    std::abort();
  }
  std::memcpy(&call, header, sizeof call);
  const HandlerKind kind = how == CallBytes::landing             ? HandlerKind::landing
                           : call.answer_sequence != kUnanswered ? HandlerKind::answering
                                                                 : HandlerKind::remote;
  if (call.handler >= remote_handlers.size() || !remote_handlers[call.handler].has(kind) ||
      call.source < 0 || call.source >= size) {
    std::fprintf(stderr, "mpidsm: rank %d: %s from rank %d to unknown %s handler %u\n", rank, what,
                 call.source, name(kind), call.handler);
    std::abort();
  }
  return remote_handlers[call.handler];
}

void Transport::Impl::require_handler(std::uint32_t id, HandlerKind kind,
                                      const char* operation) const {
  if (id >= remote_handlers.size() || !remote_handlers[id].has(kind))
    throw Error(Errc::invalid_argument, rank,
                std::string(operation) + ": no " + name(kind) + " handler " + std::to_string(id));
}

std::uint32_t Transport::Impl::add_handler(RemoteHandler handler,
                                           detail::AnsweringHandler answering,
                                           detail::LandingHandler landing, void* context) {
  const char* operation = handler     ? "add_remote_handler"
                          : answering ? "add_answering_handler"
                                      : "add_landing_handler";
  std::uint32_t id = 0;
  while (id < remote_handlers.size() && remote_handlers[id].in_use()) ++id;
  std::optional<Error> full;
  if (id == remote_handlers.size())
    full.emplace(
        Errc::no_memory, rank,
        std::string(operation) + ": all " + std::to_string(id) + " handler slots are in use");
  detail::throw_if_any_failed(comm, rank, full, operation);
  static constexpr const char* kNames[] = {"remote handler id"};
  const long long values[] = {static_cast<long long>(id)};
  detail::require_same_values(comm, rank, kNames, values, Errc::collective_mismatch, operation);
  auto& slot = remote_handlers[id];
  slot.context.store(context, std::memory_order_relaxed);
  slot.landing.store(landing, std::memory_order_release);
  slot.answering.store(answering, std::memory_order_release);
  slot.handler.store(handler, std::memory_order_release);
  return id;
}

std::uint32_t Transport::add_remote_handler(RemoteHandler handler, void* context) {
  return impl_->add_handler(handler, nullptr, nullptr, context);
}

void Transport::remove_remote_handler(std::uint32_t id) noexcept {
  if (id >= impl_->remote_handlers.size()) return;
  impl_->remote_handlers[id].handler.store(nullptr, std::memory_order_release);
  impl_->remote_handlers[id].answering.store(nullptr, std::memory_order_release);
  impl_->remote_handlers[id].landing.store(nullptr, std::memory_order_release);
}

// A call whose handler's return is acknowledged (flush waits for that):
// checked, counted in flight, sent. Returns what send_call does.
std::size_t Transport::Impl::send_acknowledged(int peer, std::uint32_t id, const void* bytes,
                                               std::size_t size, std::uint64_t argument,
                                               const char* operation, CallBytes how,
                                               ucs_status_ptr_t* kept) {
  check_peer(peer, operation);
  require_handler(id, how == CallBytes::landing ? HandlerKind::landing : HandlerKind::remote,
                  operation);
  auto& pending = calls_in_flight[static_cast<std::size_t>(peer)];
  pending.fetch_add(1, std::memory_order_relaxed);
  try {
    return send_call(peer, {id, rank, kUnanswered, 0, argument}, bytes, size, operation, how, kept);
  } catch (const Error&) {
    pending.fetch_sub(1, std::memory_order_relaxed);
    throw;
  }
}

void Transport::call_nbi(int peer, std::uint32_t id, const void* bytes, std::size_t size,
                         std::uint64_t argument) {
  auto in_use = impl_->use_worker("call_nbi");
  impl_->send_acknowledged(peer, id, bytes, size, argument, "call_nbi");
}

void Transport::call(int peer, std::uint32_t id, const void* bytes, std::size_t size,
                     std::uint64_t argument) {
  auto in_use = impl_->use_worker("call");
  Impl& s = *impl_;
  s.wait_until_sent(s.send_acknowledged(peer, id, bytes, size, argument, "call"), "call");
}

void Transport::Impl::wait_until_sent(std::size_t sending, const char* operation) {
  if (sending != kSent)
    progress_until([&] { return !call_header_busy[sending].load(std::memory_order_acquire); },
                   operation);
}

std::size_t Transport::Impl::claim_call_header() {
  for (;;) {
    for (std::size_t tries = 0; tries < kCallHeaders; ++tries) {
      const std::size_t i =
          call_header_cursor.fetch_add(1, std::memory_order_relaxed) % kCallHeaders;
      if (!call_header_busy[i].exchange(true, std::memory_order_acquire)) return i;
    }
    // Every header is still being sent: sends complete as UCX progresses.
    ucp_worker_progress(worker);
    check_peers("sending a remote call");
  }
}

void Transport::Impl::release_call_header(void* request, ucs_status_t, void* busy) {
  static_cast<std::atomic<bool>*>(busy)->store(false, std::memory_order_release);
  ucp_request_free(request);
}

void Transport::Impl::release_kept_call_header(void*, ucs_status_t, void* busy) {
  static_cast<std::atomic<bool>*>(busy)->store(false, std::memory_order_release);
}

std::size_t Transport::Impl::send_call(int peer, const CallHeader& header, const void* bytes,
                                       std::size_t size, const char* operation, CallBytes how,
                                       ucs_status_ptr_t* kept) {
  const std::size_t h = claim_call_header();
  call_headers[h] = header;
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  // Eager: the callee's handler gets the whole message at once, never a
  // rendezvous descriptor it would have to receive into memory of its own.
  // A landing call's bytes always go by rendezvous: the callee receives them
  // in place, and the sender keeps no copy of large data.
  const bool landing = how == CallBytes::landing;
  param.flags = landing ? UCP_AM_SEND_FLAG_RNDV : UCP_AM_SEND_FLAG_EAGER;
  param.cb.send = kept ? &Impl::release_kept_call_header : &Impl::release_call_header;
  param.user_data = &call_header_busy[h];
  traffic.note(size);
  ucs_status_ptr_t request =
      ucp_am_send_nbx(endpoints.get(peer), landing ? kLandingMessage : kCallMessage,
                      &call_headers[h], sizeof(CallHeader), bytes, size, &param);
  if (kept) *kept = UCS_PTR_IS_PTR(request) ? request : nullptr;
  // The callback frees the header, and the request unless it is kept.
  if (request != nullptr && !UCS_PTR_IS_ERR(request)) return h;
  call_header_busy[h].store(false, std::memory_order_release);
  if (UCS_PTR_IS_ERR(request)) detail::throw_ucx(rank, operation, peer, UCS_PTR_STATUS(request));
  return kSent;
}

}  // namespace mpidsm
