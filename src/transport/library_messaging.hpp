// The messaging mpidsm's own layers use and applications never see: calls
// answered in one round trip (a DSM page fetch or lock request over tcp),
// messages two ranks agreed on beforehand (a DSM barrier's updates, a
// pairwise sync), and the collective choice of CPU atomics for memory only
// handlers change. They share the transport's workers and remote handler
// table with the public remote calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

/// What an answering handler sends back: `size` bytes at `data`, memory of
/// the callee that stays unchanged until sent (size 0: an empty answer).
/// A `transient` answer may change once the handler returns (a scratch
/// buffer the next call overwrites): the transport sends it at once, or
/// sends a copy when UCX cannot (a full socket); keep those small.
struct Answer {
  const void* data = nullptr;  ///< first byte of the answer
  std::size_t size = 0;        ///< bytes to send back
  bool transient = false;      ///< the bytes may change once the handler returns
  /// No answer now: the call named an agreed answer (call_answered_agreed),
  /// which the callee sends later with answer_from_handler or
  /// answer_at_once, once it has one.
  bool later = false;
  static Answer deferred() { return {nullptr, 0, false, true}; }
};
/// A remote handler whose return value goes back to the caller: a request
/// and its reply in one round trip, for peers whose memory one-sided
/// operations reach through messages anyway (rma_through_messages).
/// The same rules as Transport::RemoteHandler apply.
using AnsweringHandler = Answer (*)(void* context, int source, const std::byte* bytes,
                                    std::size_t size);

/// Where a landing call's bytes go at the callee: the address of `size`
/// bytes for the call `source` made with `argument`. It runs inside the
/// callee's progress, as a remote handler does, and aborts on a call it
/// cannot place (the caller checked it: a protocol bug).
using LandingHandler = std::byte* (*)(void* context, int source, std::uint64_t argument,
                                      std::size_t size);

class LibraryMessaging {
 public:
  explicit LibraryMessaging(Transport& transport) noexcept : transport_(transport) {}

  /// Collective, as Transport::add_remote_handler (the ids share one table).
  std::uint32_t add_answering_handler(AnsweringHandler handler, void* context);
  /// Runs answering handler `id` at `peer` on [bytes, bytes+size), which are
  /// the caller's again once this returns (UCX has sent them); the answer lands in
  /// [answer, answer+capacity). The Request completes once it has, and
  /// message().size then gives its length (Errc::truncated if it did not
  /// fit). No flush waits for it.
  Request call_answered(int peer, std::uint32_t id, const void* bytes, std::size_t size,
                        void* answer, std::size_t capacity);

  /// As call_answered, but the answer travels as the agreed message `key`
  /// from `peer` (receive_agreed's): the handler may defer it
  /// (Answer::deferred) and send it when it can, and a caller that stopped
  /// waiting (withdraw_unless_arrived) receives it later with
  /// receive_agreed. At most one such call per caller, callee and key may be
  /// unanswered.
  Request call_answered_agreed(int peer, std::uint32_t id, const void* bytes, std::size_t size,
                               void* answer, std::size_t capacity, std::uint32_t key);
  /// A deferred answer: the agreed message `key` to `peer`, sent at once
  /// (a transient answer is copied when UCX cannot take it now). From inside
  /// a handler, which holds the worker already; where `peer` is gone,
  /// nothing is sent (nobody waits for it there any more).
  void answer_from_handler(int peer, std::uint32_t key, const Answer& answer) noexcept;
  /// The same from any other thread.
  void answer_at_once(int peer, std::uint32_t key, const Answer& answer);

  /// Collective, as Transport::add_remote_handler (the ids share one table).
  std::uint32_t add_landing_handler(LandingHandler handler, void* context);
  /// Landing calls: [bytes, bytes+size) travel by UCX's rendezvous straight
  /// to where `peer`'s landing handler `id` places them (for large data to a
  /// peer reached through messages, where UCX's emulated put sends an
  /// active message, copied at the target and acknowledged, per 8 KiB).
  /// The callee acknowledges once they have landed, so flush(peer) waits for
  /// them, as for a put; they are not ordered against other operations to
  /// `peer` until then (wait_for_calls). call_landing_nbi: the bytes stay
  /// unchanged until that flush. call_landing: the Request completes once
  /// they are the caller's again.
  void call_landing_nbi(int peer, std::uint32_t id, std::uint64_t argument, const void* bytes,
                        std::size_t size);
  Request call_landing(int peer, std::uint32_t id, std::uint64_t argument, const void* bytes,
                       std::size_t size);
  /// Waits until every call to `peer` has returned (or landed).
  void wait_for_calls(int peer);

  /// Messages two ranks agreed on beforehand: `key` (at most max_agreed_key)
  /// names one message from this rank to `peer`, which receives it with
  /// receive_agreed(this rank, key). They travel in a runtime field of the
  /// tag no user message carries, apart from answered calls' answers; a
  /// message sent before its receive is posted waits in UCX. At most one
  /// message per sender and key may be in flight. `bytes` stay unchanged
  /// until the Request completes.
  static constexpr std::uint32_t max_agreed_key = (1u << 23) - 1;
  /// Where an agreed message travels: through the worker (what the progress
  /// thread sleeps on, so an arrival wakes it), or through the messaging
  /// worker, which wakes nobody: for messages whose receiver will wait for
  /// them anyway, such as a barrier's records, which woke a rank's progress
  /// thread while it computed (jia_lu across 1+1 hosts: 1.22-1.35x MPI
  /// through the worker, 1.15-1.21 when the records went through MPI).
  /// Sender and receiver name the same lane.
  enum class Lane { worker, messages };
  /// Sends `size` bytes at `bytes` to `peer` as the agreed message `key`.
  Request send_agreed(int peer, std::uint32_t key, const void* bytes, std::size_t size,
                      Lane lane = Lane::worker);
  /// Receives the message `peer` sent with key `key` into [buffer,
  /// buffer+capacity); message().size gives its length (Errc::truncated if
  /// it did not fit).
  Request receive_agreed(int peer, std::uint32_t key, void* buffer, std::size_t capacity,
                         Lane lane = Lane::worker);
  /// Waits for a request of either lane while serving peers through the
  /// worker (and muting the progress thread), as a wait for a one-sided
  /// operation does: a wait for a tagged message would leave the worker to
  /// the progress thread.
  static void wait_serving_peers(Request& request);
  /// The same, until `give_up` turns non-zero: then a receive is withdrawn
  /// unless its message arrived meanwhile. True when the request completed.
  static bool wait_serving_peers(Request& request, const std::uint64_t& give_up);
  /// Withdraws a receive whose message has not arrived (false; a message
  /// sent later waits in UCX for the next receive of its tag), or completes
  /// it with the one that has (true).
  static bool withdraw_unless_arrived(Request& receive);
  /// A receive nothing will arrive for (its exchange failed) leaves UCX, so
  /// its buffer may be reused; any other request is left as it is.
  static void withdraw(Request& receive) noexcept { receive.cancel(); }

  /// Collective: true when every rank `wants` it and reaches each peer it
  /// does not map (`mapped(peer)`: loads and stores reach it) only through
  /// messages. Then no peer reaches this rank's memory with a NIC's atomics,
  /// and a handler may change it with CPU atomics. Endpoints are made on
  /// use, so a rank asks about the peers it is connected to and one more,
  /// the next unmapped rank after it: N ranks sample N pairs, which tells
  /// every fabric apart but one whose nodes differ pair by pair (where
  /// MPIDSM_EAGER_CONNECT=1 connects, and so asks about, every pair).
  bool all_reach_through_messages(bool wants, const std::function<bool(int)>& mapped);

 private:
  // Posts the receive of the answer numbered `sequence`, then calls.
  Request call_for_answer(int peer, std::uint32_t id, const void* bytes, std::size_t size,
                          void* answer, std::size_t capacity, std::uint32_t sequence,
                          const char* operation);
  // A receive of the answer-tag message `peer` sends as `sequence` (an
  // answered call's answer, or an agreed message) through `lane`.
  Request receive_answer(int peer, std::uint32_t sequence, void* buffer, std::size_t capacity,
                         const char* operation, Lane lane = Lane::worker);

  Transport& transport_;
};

}  // namespace mpidsm::detail
