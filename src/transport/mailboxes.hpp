// Tagged messages between ranks of one node through shared-memory rings, with
// MPI's matching rules kept in software.
//
// Every message a rank sends to a peer whose mailbox it maps goes through the
// ring to that peer, so messages of one pair stay in order whatever their
// size: a message up to the eager limit travels in its record; a larger one
// sends a rendezvous record, and its bytes follow through UCX's tag API
// (zero-copy rendezvous) under a data tag the receiver matches exactly once
// the record is matched. Peers without a ring (another node, tcp) keep UCX's
// tag matching; a receiver that also has such senders takes their messages
// with ucp_tag_probe_nb, so all its receives match in one place.
//
// Matching follows MPI: receives are matched in the order they were posted,
// and messages of one sender in the order they were sent; a message that
// arrives before its receive waits in an unexpected queue. A send never
// waits for ring space: when the ring is full the message is copied into a
// pending queue that later progress drains, so two ranks flooding each other
// cannot deadlock.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <vector>

#include "mailbox_ring.hpp"
#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

// A receive waiting in the posted queue, or matched and completing. Blocking
// receives keep it on their stack; irecv's Request owns it.
struct PostedReceive {
  int source = any_source;
  int tag = any_tag;
  void* buffer = nullptr;
  std::size_t capacity = 0;
  PostedReceive* next = nullptr;  // posted queue
  bool matched = false;
  void* data = nullptr;  // UCX receive of the bytes (rendezvous, remote peer); null: copied
  MessageInfo info{};
  ucs_status_t status = UCS_OK;
};

class Mailboxes {
 public:
  struct Setup {
    ucp_worker_h worker = nullptr;
    std::uint16_t runtime_id = 0;
    int rank = no_rank;
    std::size_t eager_limit = 0;
    std::vector<std::byte*> outgoing;  // by peer: its ring for us, mapped here; or null
    std::vector<std::byte*> incoming;  // by sender: our ring for it; or null
  };
  void open(Setup setup);

  // Some sender writes to our rings: every receive here goes through the matcher.
  bool matching() const noexcept { return matching_; }
  // Sends to `peer` go through its mailbox.
  bool reaches(int peer) const noexcept { return !outgoing_.empty() && outgoing_[peer].usable(); }

  // A send through the ring; the UCX request of a rendezvous's bytes, or
  // nullptr once the message is written or queued (the buffer is free again).
  ucs_status_ptr_t send(ucp_ep_h endpoint, int peer, int tag, const void* buffer, std::size_t size);
  // Sends queued while a ring was full, or receives posted, are waiting:
  // any wait in the transport should call progress().
  bool has_work() const noexcept { return has_work_.load(std::memory_order_relaxed); }
  // Pushes queued sends and takes in messages for posted receives.
  void progress();

  // Matches `receive` against the messages that have arrived, or queues it.
  void post(PostedReceive& receive);
  // Takes in what has arrived for `receive` and reports whether it has
  // completed, its data too.
  bool poll_for(PostedReceive& receive);
  // Withdraws a receive that was never matched (its waiter gave up).
  void withdraw(PostedReceive& receive);
  // A message that has arrived and matches, without receiving it.
  std::optional<MessageInfo> probe(int source, int tag);

 private:
  // An arrived message: in a record (eager bytes, or a rendezvous's data
  // tag), or held by UCX (from a peer without a ring).
  struct Arrival {
    MessageInfo info;
    RecordKind kind = RecordKind::eager;
    std::uint32_t sequence = 0;
    const std::byte* bytes = nullptr;
    ucp_tag_message_h message = nullptr;
  };
  struct Unexpected {
    Arrival arrival;
    std::vector<std::byte> bytes;  // arrival.bytes points here
  };
  struct PendingSend {
    int peer;
    RecordKind kind;
    int tag;
    std::uint32_t sequence;
    std::vector<std::byte> bytes;  // eager
    std::size_t length = 0;
  };

  // Takes in what has arrived from `source` (any_source: from everyone):
  // while some receive is posted, or everything with `drain`.
  void poll_locked(int source, bool drain);
  void take_from_ring(int sender, bool drain);
  void take_from_ucx(bool drain);
  void push_pending_locked();
  // Hands an arrived message to the first matching posted receive; false
  // when none matches.
  bool deliver_to_posted(const Arrival& arrival);
  template <class Choose>
  PostedReceive* unlink_first_posted(Choose&& chosen);
  void deliver(PostedReceive& receive, const Arrival& arrival);
  void keep_unexpected(const Arrival& arrival);
  bool try_write(int peer, RecordKind kind, int tag, std::uint32_t sequence, const void* payload,
                 std::size_t size);
  ucp_tag_t data_tag(int sender, std::uint32_t sequence) const;

  std::mutex mutex_;
  ucp_worker_h worker_ = nullptr;
  std::uint16_t runtime_id_ = 0;
  int rank_ = no_rank;
  std::size_t eager_limit_ = 0;
  bool matching_ = false;
  bool ucx_senders_ = false;  // some sender has no ring to us: probe UCX too
  std::vector<RingWriter> outgoing_;
  std::vector<RingReader> incoming_;
  std::vector<int> incoming_senders_;         // ranks with a ring to us
  std::vector<std::uint32_t> next_sequence_;  // per peer: rendezvous data tags
  PostedReceive* posted_head_ = nullptr;
  PostedReceive* posted_tail_ = nullptr;
  std::list<Unexpected> unexpected_;
  std::deque<PendingSend> pending_;
  std::vector<std::size_t> pending_count_;       // per peer
  std::vector<std::uint64_t> blocked_in_round_;  // per peer: its ring was full in that push
  std::uint64_t push_round_ = 0;
  void update_work() noexcept {
    has_work_.store(!pending_.empty() || posted_head_ != nullptr, std::memory_order_relaxed);
  }
  std::atomic<bool> has_work_{false};
};

}  // namespace mpidsm::detail
