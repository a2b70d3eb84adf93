#include "library_messaging.hpp"

#include <ucp/api/ucp.h>

#include <string>

#include "common/mpi_exchange.hpp"
#include "tag_codec.hpp"
#include "transport_impl.hpp"

namespace mpidsm::detail {

std::uint32_t LibraryMessaging::add_answering_handler(AnsweringHandler handler, void* context) {
  return transport_.impl_->add_handler(nullptr, handler, context);
}

Request LibraryMessaging::call_answered(int peer, std::uint32_t id, const void* bytes,
                                        std::size_t size, void* answer, std::size_t capacity) {
  auto in_use = transport_.impl_->use_worker("call_answered");
  Transport::Impl& s = *transport_.impl_;
  s.check_peer(peer, "call_answered");
  if (id >= s.remote_handlers.size() || s.remote_handlers[id].answering.load() == nullptr)
    throw Error(Errc::invalid_argument, transport_.rank_,
                "call_answered: no answering handler " + std::to_string(id));
  const std::uint32_t sequence =
      s.next_answer_sequence.fetch_add(1, std::memory_order_relaxed) & (TagCodec::agreed_bit - 1);
  // The receive first, so the answer lands in place rather than in UCX's
  // buffers for unexpected messages.
  Request answered = receive_answer(peer, sequence, answer, capacity, "call_answered");
  try {
    s.send_call(peer, {id, transport_.rank_, sequence, 0, 0}, bytes, size, "call_answered");
  } catch (const Error&) {
    answered.cancel();
    throw;
  }
  return answered;
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

// Inside the handler's progress, UCX's own calls only: no wait, no worker
// use (the thread running the handler holds the worker already).
void LibraryMessaging::put_from_handler(int peer, const MemoryRegion& region, std::size_t offset,
                                        const std::uint64_t& word) noexcept {
  Transport::Impl& s = *transport_.impl_;
  try {
    const auto& key = s.remote(region, peer, offset, sizeof word, "put_from_handler");
    s.traffic.note(sizeof word);
    ucp_request_param_t param{};
    const ucs_status_ptr_t put =
        ucp_put_nbx(s.endpoints.get(peer), &word, sizeof word, key.base + offset,
                    static_cast<ucp_rkey_h>(key.rkey), &param);
    if (UCS_PTR_IS_PTR(put)) ucp_request_free(put);  // UCX completes it on its own
  } catch (const Error&) {
    // The peer is gone (or this runtime is lost): nobody waits for the word.
  }
}

}  // namespace mpidsm::detail
