#include "mailboxes.hpp"

#include <algorithm>
#include <cstring>

#include "tag_codec.hpp"

namespace mpidsm::detail {
namespace {

bool matches(int source, int tag, const MessageInfo& info) {
  return (source == any_source || source == info.source) && (tag == any_tag || tag == info.tag);
}

bool matches(const PostedReceive& receive, const MessageInfo& info) {
  return matches(receive.source, receive.tag, info);
}

}  // namespace

void Mailboxes::open(Setup setup) {
  worker_ = setup.worker;
  runtime_id_ = setup.runtime_id;
  rank_ = setup.rank;
  eager_limit_ = std::min(setup.eager_limit, RingLayout::max_eager);
  const std::size_t size = setup.outgoing.size();
  outgoing_.clear();
  incoming_.clear();
  incoming_senders_.clear();
  for (std::size_t peer = 0; peer < size; ++peer) {
    outgoing_.emplace_back(setup.outgoing[peer]);
    incoming_.emplace_back(setup.incoming[peer]);
    if (setup.incoming[peer]) incoming_senders_.push_back(static_cast<int>(peer));
  }
  next_sequence_.assign(size, 0);
  pending_count_.assign(size, 0);
  blocked_in_round_.assign(size, 0);
  matching_ = !incoming_senders_.empty();
  ucx_senders_ = incoming_senders_.size() < size;
}

// The bytes of a rendezvous travel under the sender's rank and a sequence
// number in a runtime field of their own (TagCodec::rendezvous_runtime).
ucp_tag_t Mailboxes::data_tag(int sender, std::uint32_t sequence) const {
  return TagCodec::encode(TagCodec::rendezvous_runtime(runtime_id_),
                          static_cast<std::uint32_t>(sender), sequence);
}

bool Mailboxes::try_write(int peer, RecordKind kind, int tag, std::uint32_t sequence,
                          const void* payload, std::size_t size) {
  if (pending_count_[peer] != 0) return false;  // keep the pair's order
  const std::size_t payload_size = kind == RecordKind::eager ? size : 0;
  return outgoing_[peer].try_write(kind, tag, sequence, size, payload, payload_size);
}

ucs_status_ptr_t Mailboxes::send(ucp_ep_h endpoint, int peer, int tag, const void* buffer,
                                 std::size_t size) {
  std::lock_guard<std::mutex> guard(mutex_);
  ucs_status_ptr_t request = nullptr;
  bool queued = false;
  if (size <= eager_limit_) {
    queued = !try_write(peer, RecordKind::eager, tag, 0, buffer, size);
    if (queued) {
      const auto* bytes = static_cast<const std::byte*>(buffer);
      pending_.push_back({peer, RecordKind::eager, tag, 0, {bytes, bytes + size}, size});
    }
  } else {
    const auto sequence = static_cast<std::uint32_t>(next_sequence_[peer]++ & TagCodec::user_field);
    queued = !try_write(peer, RecordKind::rendezvous, tag, sequence, nullptr, size);
    if (queued) pending_.push_back({peer, RecordKind::rendezvous, tag, sequence, {}, size});
    // The bytes may leave at once: the receiver takes them by their data tag
    // only after it has matched the record.
    ucp_request_param_t param{};
    request = ucp_tag_send_nbx(endpoint, buffer, size, data_tag(rank_, sequence), &param);
  }
  if (queued) {
    ++pending_count_[peer];
    update_work();
  }
  return request;
}

void Mailboxes::progress() {
  std::lock_guard<std::mutex> guard(mutex_);
  poll_locked(any_source, false);
}

// In queue order; a peer whose ring is full keeps the rest of its messages
// queued behind the one that did not fit.
void Mailboxes::push_pending_locked() {
  if (pending_.empty()) return;
  ++push_round_;
  for (auto it = pending_.begin(); it != pending_.end();) {
    const int peer = it->peer;
    if (blocked_in_round_[peer] != push_round_ &&
        outgoing_[peer].try_write(it->kind, it->tag, it->sequence, it->length, it->bytes.data(),
                                  it->bytes.size())) {
      --pending_count_[peer];
      it = pending_.erase(it);
    } else {
      blocked_in_round_[peer] = push_round_;
      ++it;
    }
  }
  update_work();
}

void Mailboxes::post(PostedReceive& receive) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
    if (!matches(receive, it->arrival.info)) continue;
    deliver(receive, it->arrival);
    unexpected_.erase(it);
    return;
  }
  receive.next = nullptr;
  if (posted_tail_)
    posted_tail_->next = &receive;
  else
    posted_head_ = &receive;
  posted_tail_ = &receive;
  update_work();
}

bool Mailboxes::poll_for(PostedReceive& receive) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!receive.matched) poll_locked(receive.source, false);
  if (!receive.matched) return false;
  if (receive.data) {
    const ucs_status_t status = ucp_request_check_status(receive.data);
    if (status == UCS_INPROGRESS) return false;
    ucp_request_free(receive.data);
    receive.data = nullptr;
    if (status != UCS_ERR_MESSAGE_TRUNCATED) receive.status = status;
  }
  return true;
}

// Removes the first posted receive `chosen` accepts from the queue; it, or
// nullptr when none.
template <class Choose>
PostedReceive* Mailboxes::unlink_first_posted(Choose&& chosen) {
  PostedReceive* previous = nullptr;
  for (PostedReceive* at = posted_head_; at; previous = at, at = at->next) {
    if (!chosen(*at)) continue;
    (previous ? previous->next : posted_head_) = at->next;
    if (posted_tail_ == at) posted_tail_ = previous;
    update_work();
    return at;
  }
  return nullptr;
}

void Mailboxes::withdraw(PostedReceive& receive) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (receive.data) {
    ucp_request_cancel(worker_, receive.data);
    while (ucp_request_check_status(receive.data) == UCS_INPROGRESS) ucp_worker_progress(worker_);
    ucp_request_free(receive.data);
    receive.data = nullptr;
  }
  if (receive.matched) return;
  unlink_first_posted([&](const PostedReceive& at) { return &at == &receive; });
}

std::optional<MessageInfo> Mailboxes::probe(int source, int tag) {
  std::lock_guard<std::mutex> guard(mutex_);
  poll_locked(source, true);
  for (const Unexpected& waiting : unexpected_)
    if (matches(source, tag, waiting.arrival.info)) return waiting.arrival.info;
  return std::nullopt;
}

void Mailboxes::poll_locked(int source, bool drain) {
  push_pending_locked();
  if (source != any_source) {
    if (incoming_[source].usable())
      take_from_ring(source, drain);
    else
      take_from_ucx(drain);
    return;
  }
  for (int sender : incoming_senders_) take_from_ring(sender, drain);
  if (ucx_senders_) take_from_ucx(drain);
}

// Messages are taken while some receive may want them; without one they stay
// in the ring, where the sender's flow control holds them.
void Mailboxes::take_from_ring(int sender, bool drain) {
  RingReader& ring = incoming_[sender];
  while (drain || posted_head_) {
    const MailboxRecord* record = ring.peek();
    if (!record) return;
    Arrival arrival{{sender, record->tag, record->length}, record->kind, record->sequence};
    if (record->kind == RecordKind::eager) arrival.bytes = RingReader::payload(record);
    if (!deliver_to_posted(arrival)) keep_unexpected(arrival);
    ring.pop(record);
  }
}

void Mailboxes::take_from_ucx(bool drain) {
  while (drain || posted_head_) {
    ucp_tag_recv_info_t info{};
    ucp_tag_message_h message = ucp_tag_probe_nb(worker_, TagCodec::encode(runtime_id_, 0, 0),
                                                 TagCodec::runtime_field, 1, &info);
    if (!message) return;
    Arrival arrival{TagCodec::describe(info.sender_tag, info.length)};
    arrival.message = message;
    if (!deliver_to_posted(arrival)) keep_unexpected(arrival);
  }
}

bool Mailboxes::deliver_to_posted(const Arrival& arrival) {
  PostedReceive* receive =
      unlink_first_posted([&](const PostedReceive& at) { return matches(at, arrival.info); });
  if (receive) deliver(*receive, arrival);
  return receive != nullptr;
}

void Mailboxes::keep_unexpected(const Arrival& arrival) {
  Unexpected& kept = unexpected_.emplace_back();
  kept.arrival = arrival;
  if (arrival.bytes) {
    kept.bytes.assign(arrival.bytes, arrival.bytes + arrival.info.size);
    kept.arrival.bytes = kept.bytes.data();
  }
}

// A message longer than the buffer fills the buffer and is reported as
// truncated, as MPI_ERR_TRUNCATE is; the stream goes on.
void Mailboxes::deliver(PostedReceive& receive, const Arrival& arrival) {
  receive.matched = true;
  receive.info = arrival.info;
  receive.status = arrival.info.size > receive.capacity ? UCS_ERR_MESSAGE_TRUNCATED : UCS_OK;
  ucp_request_param_t param{};
  ucs_status_ptr_t data = nullptr;
  if (arrival.message) {
    data = ucp_tag_msg_recv_nbx(worker_, receive.buffer, receive.capacity, arrival.message, &param);
  } else if (arrival.kind == RecordKind::rendezvous) {
    data = ucp_tag_recv_nbx(worker_, receive.buffer, receive.capacity,
                            data_tag(arrival.info.source, arrival.sequence), ~ucp_tag_t{0}, &param);
  } else if (arrival.info.size != 0 && receive.capacity != 0) {
    std::memcpy(receive.buffer, arrival.bytes, std::min(arrival.info.size, receive.capacity));
  }
  if (UCS_PTR_IS_ERR(data)) {
    if (UCS_PTR_STATUS(data) != UCS_ERR_MESSAGE_TRUNCATED) receive.status = UCS_PTR_STATUS(data);
    data = nullptr;
  }
  receive.data = data;
}

}  // namespace mpidsm::detail
