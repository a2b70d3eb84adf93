#include "library_messaging.hpp"

#include <ucp/api/ucp.h>

#include <atomic>
#include <string>

#include "common/mpi_exchange.hpp"
#include "tag_codec.hpp"
#include "transport_impl.hpp"

namespace mpidsm::detail {

std::uint32_t LibraryMessaging::add_answering_handler(AnsweringHandler handler, void* context) {
  return transport_.impl_->add_handler(nullptr, handler, nullptr, context);
}

Request LibraryMessaging::call_answered(int peer, std::uint32_t id, const void* bytes,
                                        std::size_t size, void* answer, std::size_t capacity) {
  Transport::Impl& s = *transport_.impl_;
  const std::uint32_t sequence =
      s.next_answer_sequence.fetch_add(1, std::memory_order_relaxed) & (TagCodec::agreed_bit - 1);
  return call_for_answer(peer, id, bytes, size, answer, capacity, sequence, "call_answered");
}

Request LibraryMessaging::call_answered_agreed(int peer, std::uint32_t id, const void* bytes,
                                               std::size_t size, void* answer, std::size_t capacity,
                                               std::uint32_t key) {
  return call_for_answer(peer, id, bytes, size, answer, capacity, TagCodec::agreed_sequence(key),
                         "call_answered_agreed");
}

Request LibraryMessaging::call_for_answer(int peer, std::uint32_t id, const void* bytes,
                                          std::size_t size, void* answer, std::size_t capacity,
                                          std::uint32_t sequence, const char* operation) {
  auto in_use = transport_.impl_->use_worker(operation);
  Transport::Impl& s = *transport_.impl_;
  s.check_peer(peer, operation);
  s.require_handler(id, Transport::Impl::HandlerKind::answering, operation);
  // The receive first, so the answer lands in place rather than in UCX's
  // buffers for unexpected messages.
  Request answered = receive_answer(peer, sequence, answer, capacity, operation);
  try {
    // The bytes are the caller's again on return: a caller may build them
    // in a frame it leaves before the answer, or stop waiting for the answer
    // (withdraw_unless_arrived) and reuse them, while a send UCX cannot
    // complete at once (a large call, a full tcp socket) reads them later.
    s.wait_until_sent(
        s.send_call(peer, {id, transport_.rank_, sequence, 0, 0}, bytes, size, operation),
        operation);
  } catch (const Error&) {
    answered.cancel();
    throw;
  }
  return answered;
}

void LibraryMessaging::answer_from_handler(int peer, std::uint32_t key,
                                           const Answer& answer) noexcept {
  Transport::Impl& s = *transport_.impl_;
  try {
    s.send_answer(
        s.endpoints.get(peer), peer,
        TagCodec::answer_tag(s.runtime_id, transport_.rank_, TagCodec::agreed_sequence(key)),
        answer);
  } catch (const Error&) {
    // The peer is gone (or this runtime is lost): nobody waits for the answer.
  }
}

void LibraryMessaging::answer_at_once(int peer, std::uint32_t key, const Answer& answer) {
  auto in_use = transport_.impl_->use_worker("answer_at_once");
  transport_.impl_->check_peer(peer, "answer_at_once");
  answer_from_handler(peer, key, answer);
}

Request LibraryMessaging::send_agreed(int peer, std::uint32_t key, const void* bytes,
                                      std::size_t size, Lane lane) {
  auto in_use = transport_.impl_->use_worker("send_agreed");
  Transport::Impl& s = *transport_.impl_;
  s.check_peer(peer, "send_agreed");
  s.traffic.note(size);
  const bool messages = lane == Lane::messages;
  ucp_request_param_t send{};
  return Request(
      &transport_,
      ucp_tag_send_nbx(
          (messages ? s.messaging_endpoints : s.endpoints).get(peer), bytes, size,
          TagCodec::answer_tag(s.runtime_id, transport_.rank_, TagCodec::agreed_sequence(key)),
          &send),
      messages ? Request::Kind::message_send : Request::Kind::send_or_rma, "send_agreed", peer, 0);
}

Request LibraryMessaging::receive_agreed(int peer, std::uint32_t key, void* buffer,
                                         std::size_t capacity, Lane lane) {
  auto in_use = transport_.impl_->use_worker("receive_agreed");
  transport_.impl_->check_peer(peer, "receive_agreed");
  return receive_answer(peer, TagCodec::agreed_sequence(key), buffer, capacity, "receive_agreed",
                        lane);
}

void LibraryMessaging::wait_serving_peers(Request& request) {
  if (!request.handle_) return;
  Transport::Impl& s = *request.transport_->impl_;
  auto in_use = s.use_worker(request.what_);
  // On the worker: the messaging worker is polled too while a message of
  // either lane is in flight (messaging_due).
  s.progress_until([&] { return request.poll(); }, request.what_);
}

bool LibraryMessaging::wait_serving_peers(Request& request, const std::uint64_t& give_up) {
  if (!request.handle_) return true;
  Transport::Impl& s = *request.transport_->impl_;
  auto in_use = s.use_worker(request.what_);
  s.progress_until(
      [&] {
        return request.poll() ||
               std::atomic_ref<const std::uint64_t>(give_up).load(std::memory_order_acquire) != 0;
      },
      request.what_);
  return withdraw_unless_arrived(request);
}

bool LibraryMessaging::withdraw_unless_arrived(Request& receive) {
  if (!receive.handle_) return true;
  Transport::Impl& s = *receive.transport_->impl_;
  auto in_use = s.use_worker(receive.what_);
  if (receive.poll()) return true;
  ucp_worker_h worker = receive.messaging() ? s.messaging_worker : s.worker;
  ucp_request_cancel(worker, receive.handle_);
  ucp_tag_recv_info_t info{};
  ucs_status_t status;
  while ((status = ucp_tag_recv_request_test(receive.handle_, &info)) == UCS_INPROGRESS)
    ucp_worker_progress(worker);
  if (status != UCS_ERR_CANCELED) return receive.poll();  // it came first: complete (or throws)
  ucp_request_free(receive.handle_);
  receive.finish();
  return false;
}

Request LibraryMessaging::receive_answer(int peer, std::uint32_t sequence, void* buffer,
                                         std::size_t capacity, const char* operation, Lane lane) {
  Transport::Impl& s = *transport_.impl_;
  const bool messages = lane == Lane::messages;
  ucp_request_param_t receive{};
  receive.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;  // see irecv()
  return Request(&transport_,
                 ucp_tag_recv_nbx(messages ? s.messaging_worker : s.worker, buffer, capacity,
                                  TagCodec::answer_tag(s.runtime_id, peer, sequence),
                                  ~std::uint64_t{0}, &receive),
                 messages ? Request::Kind::message_receive : Request::Kind::receive, operation,
                 peer, capacity);
}

bool LibraryMessaging::all_reach_through_messages(bool wants,
                                                  const std::function<bool(int)>& mapped) {
  int mine = wants ? 1 : 0;
  const int ranks = transport_.size();
  bool sampled = false;
  for (int step = 1; mine && step < ranks; ++step) {
    const int peer = (transport_.rank() + step) % ranks;
    if (mapped(peer) || (sampled && !transport_.impl_->endpoints.connected(peer))) continue;
    sampled = true;
    if (!transport_.rma_through_messages(peer)) mine = 0;
  }
  int all = 0;
  allreduce(transport_.impl_->comm, transport_.rank(), &mine, &all, 1, MPI_INT, MPI_LAND,
            "choosing how peers are reached");
  return all != 0;
}

}  // namespace mpidsm::detail
