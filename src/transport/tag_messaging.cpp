// Tagged send/recv: through the same-node mailboxes where a pair has them
// (mailboxes.hpp), otherwise over UCX's tag matching (offloaded by NICs that
// support it), all on the messaging worker. Rendezvous for large messages is
// UCX's: see TransportOptions::rndv_threshold.
#include <ucp/api/ucp.h>

#include <atomic>

#include "common/pinned_ranges.hpp"
#include "tag_codec.hpp"
#include "transport_impl.hpp"
#include "ucx_status.hpp"

namespace mpidsm {
namespace {

void check_tag(int rank, int tag, bool wildcard_allowed, const char* operation) {
  if ((tag >= 0 && tag <= max_tag) || (wildcard_allowed && tag == any_tag)) return;
  throw Error(Errc::invalid_argument, rank,
              std::string(operation) + ": tag " + std::to_string(tag) + " is outside 0.." +
                  std::to_string(max_tag) + (wildcard_allowed ? " (or any_tag)" : ""));
}

void check_buffer(int rank, const void* buffer, std::size_t size, const char* operation) {
  if (buffer == nullptr && size != 0)
    throw Error(Errc::invalid_argument, rank,
                std::string(operation) + ": buffer is null but size is " + std::to_string(size));
}

// The tag and mask a receive or probe matches with; wildcards clear their field.
std::pair<ucp_tag_t, ucp_tag_t> match(std::uint16_t runtime_id, int source, int tag) {
  bool any_src = source == any_source;
  bool any_t = tag == any_tag;
  ucp_tag_t value = detail::TagCodec::encode(runtime_id, any_src ? 0 : std::uint32_t(source),
                                             any_t ? 0 : std::uint32_t(tag));
  return {value, detail::TagCodec::mask(any_src, any_t)};
}

}  // namespace

std::pair<std::uint64_t, std::uint64_t> Transport::Impl::receive_match(int source, int tag,
                                                                       const void* buffer,
                                                                       std::size_t capacity) const {
  check_peer(source == any_source ? rank : source, "recv");
  check_tag(rank, tag, true, "recv");
  check_buffer(rank, buffer, capacity, "recv");
  return match(runtime_id, source, tag);
}

Request Transport::isend(int peer, int tag, const void* buffer, std::size_t size) {
  auto in_use = impl_->use_messaging("send");
  impl_->check_peer(peer, "send");
  check_tag(rank_, tag, false, "send");
  check_buffer(rank_, buffer, size, "send");
  const bool pinned = detail::pin(buffer, size, false);
  impl_->traffic.note(size);
  ucs_status_ptr_t handle;
  if (impl_->mailboxes.reaches(peer)) {
    handle = impl_->mailboxes.send(impl_->messaging_endpoints.get(peer), peer, tag, buffer, size);
  } else {
    ucp_request_param_t param{};
    ucp_tag_t ucp_tag = detail::TagCodec::encode(
        impl_->runtime_id, static_cast<std::uint32_t>(rank_), static_cast<std::uint32_t>(tag));
    handle = ucp_tag_send_nbx(impl_->messaging_endpoints.get(peer), buffer, size, ucp_tag, &param);
  }
  return Request(this, handle, Request::Kind::message_send, "send", peer, 0, buffer,
                 pinned ? size : 0);
}

void Transport::send(int peer, int tag, const void* buffer, std::size_t size) {
  isend(peer, tag, buffer, size).wait();
}

Request Transport::irecv(int source, int tag, void* buffer, std::size_t capacity) {
  auto in_use = impl_->use_messaging("recv");
  auto [ucp_tag, mask] = impl_->receive_match(source, tag, buffer, capacity);
  const bool pinned = detail::pin(buffer, capacity, true);
  if (impl_->mailboxes.matching()) {
    auto* receive = new detail::PostedReceive{source, tag, buffer, capacity};
    impl_->mailboxes.post(*receive);
    return Request(this, receive, Request::Kind::mailbox_receive, "recv", source, capacity, buffer,
                   pinned ? capacity : 0);
  }
  // Always get a request back (see recv()): the sender's tag and the length
  // are read from the request when it completes.
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  ucs_status_ptr_t handle =
      ucp_tag_recv_nbx(impl_->messaging_worker, buffer, capacity, ucp_tag, mask, &param);
  return Request(this, handle, Request::Kind::message_receive, "recv", source, capacity, buffer,
                 pinned ? capacity : 0);
}

namespace {

// Where a blocking receive's completion callback leaves its result: the wait
// loop then tests a plain flag instead of calling into UCX on every spin.
// The callback may run on the progress thread, hence the atomic flag that
// publishes status and info.
struct ReceiveSlot {
  std::atomic<bool> done{false};
  ucs_status_t status = UCS_OK;
  ucp_tag_recv_info_t info{};
};

void receive_completed(void*, ucs_status_t status, const ucp_tag_recv_info_t* info,
                       void* user_data) {
  auto* slot = static_cast<ReceiveSlot*>(user_data);
  slot->status = status;
  slot->info = *info;
  slot->done.store(true, std::memory_order_release);
}

}  // namespace

MessageInfo Transport::Impl::receive_from_mailboxes(int source, int tag, void* buffer,
                                                    std::size_t capacity) {
  detail::PostedReceive receive{source, tag, buffer, capacity};
  mailboxes.post(receive);
  try {
    progress_until([&] { return mailboxes.poll_for(receive); }, "recv", Waiting::for_message);
  } catch (const Error&) {
    mailboxes.withdraw(receive);
    throw;
  }
  if (receive.status == UCS_ERR_MESSAGE_TRUNCATED)
    throw detail::truncated(rank, receive.info, capacity);
  check("recv", receive.info.source, receive.status);
  return receive.info;
}

MessageInfo Transport::recv(int source, int tag, void* buffer, std::size_t capacity) {
  auto in_use = impl_->use_messaging("recv");
  auto [ucp_tag, mask] = impl_->receive_match(source, tag, buffer, capacity);
  detail::ScopedPin pin(buffer, capacity, true);
  if (impl_->mailboxes.matching())
    return impl_->receive_from_mailboxes(source, tag, buffer, capacity);
  ReceiveSlot slot;
  // NO_IMM_CMPL: UCX 1.13 leaves recv_info empty when a waiting message
  // completes the receive inside the call, so completion always comes
  // through the callback, which does carry the sender's tag and the length.
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = receive_completed;
  param.user_data = &slot;
  ucs_status_ptr_t handle =
      ucp_tag_recv_nbx(impl_->messaging_worker, buffer, capacity, ucp_tag, mask, &param);
  if (UCS_PTR_IS_ERR(handle)) {
    slot.status = UCS_PTR_STATUS(handle);
  } else {
    auto done = [&] { return slot.done.load(std::memory_order_acquire); };
    try {
      impl_->progress_until(done, "recv", Impl::Waiting::for_message);
    } catch (const Error&) {
      // The callback writes into `slot`, on this stack: it must have run
      // before the frame goes (a receive not yet matched ends at once).
      ucp_request_cancel(impl_->messaging_worker, handle);
      impl_->drive_briefly(done);
      if (done()) ucp_request_free(handle);
      throw;
    }
    ucp_request_free(handle);
  }
  MessageInfo info = detail::TagCodec::describe(slot.info.sender_tag, slot.info.length);
  if (slot.status == UCS_ERR_MESSAGE_TRUNCATED) throw detail::truncated(rank_, info, capacity);
  impl_->check("recv", source, slot.status);
  return info;
}

std::optional<MessageInfo> Transport::probe(int source, int tag) {
  auto in_use = impl_->use_messaging("probe");
  if (source != any_source) impl_->check_peer(source, "probe");
  check_tag(rank_, tag, true, "probe");
  impl_->progress_once(Impl::Waiting::for_message);
  if (impl_->mailboxes.matching()) return impl_->mailboxes.probe(source, tag);
  auto [ucp_tag, mask] = match(impl_->runtime_id, source, tag);
  ucp_tag_recv_info_t info{};
  if (!ucp_tag_probe_nb(impl_->messaging_worker, ucp_tag, mask, 0, &info)) return std::nullopt;
  return detail::TagCodec::describe(info.sender_tag, info.length);
}

}  // namespace mpidsm
