// Private state of a Transport, shared by the files that implement its parts
// (bootstrap, memory, RMA, atomics, tags, requests).
#pragma once

#include <ucp/api/ucp.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/mpi_exchange.hpp"
#include "common/pinned_ranges.hpp"
#include "endpoint_table.hpp"
#include "fork_guard.hpp"
#include "library_messaging.hpp"
#include "mailboxes.hpp"
#include "mpidsm/transport.hpp"
#include "peer_liveness.hpp"
#include "progress/idle_backoff.hpp"
#include "progress/progress_handoff.hpp"
#include "progress/worker_guard.hpp"
#include "traffic_meter.hpp"
#include "ucx_status.hpp"

namespace mpidsm {

struct Transport::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = no_rank;
  int size = 0;
  std::vector<int> node_index;  // per rank: its index among this node's ranks, or -1
  std::uint16_t runtime_id = 0;
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  detail::EndpointTable endpoints;  // to every rank, self included, made on first use
  // Tagged messages (send, recv, probe, the mailboxes' rendezvous) have a
  // worker of their own, which the progress thread never sleeps on: a wait
  // for a message then needs no system call to keep that thread asleep
  // (docs/progress.md, "Messages"). One-sided operations, remote calls and
  // agreed messages stay on `worker`.
  ucp_worker_h messaging_worker = nullptr;
  detail::EndpointTable messaging_endpoints;  // likewise, of the messaging worker
  // Non-blocking messages in flight: while there are any, every wait and
  // MPI's progress loop drive the messaging worker too, as MPI progresses
  // pending requests in any of its calls.
  std::atomic<int> messages_in_flight{0};
  // Also every polls_per_messaging_look polls of each thread that drives
  // the worker: UCX may owe a peer something on the messaging worker that
  // no request here tracks (a rendezvous's acknowledgement queued behind a
  // full FIFO, an endpoint's wire-up) while the peer waits for it. Four
  // ranks on two cores hung that way, the receivers in a barrier and the
  // sender waiting for its isend.
  static constexpr unsigned polls_per_messaging_look = 64;
  bool messaging_due() const noexcept {
    static thread_local unsigned polls = 0;
    return messages_in_flight.load(std::memory_order_relaxed) > 0 || mailboxes.has_work() ||
           ++polls % polls_per_messaging_look == 0;
  }

  // Reused by flush_all so the flush path does not allocate.
  std::vector<std::pair<ucs_status_ptr_t, int>> flush_requests;

  // DSM buffers of put_nbi/get_nbi in flight: pinned until a flush of their
  // peer completes them.
  struct PinnedTransfer {
    int peer;
    const void* address;
    std::size_t size;
  };
  std::vector<PinnedTransfer> pinned_transfers;  // guarded by pinned_mutex
  std::mutex pinned_mutex;
  std::atomic<bool> any_pinned_transfer{false};  // keeps flushes free of the mutex
  void pin_until_flush(int peer, const void* address, std::size_t size, bool write) {
    if (!detail::pin(address, size, write)) return;
    std::lock_guard<std::mutex> guard(pinned_mutex);
    pinned_transfers.push_back({peer, address, size});
    any_pinned_transfer.store(true, std::memory_order_release);
  }
  // After a flush of `peer` (or of every peer: no_rank).
  void unpin_flushed(int peer) {
    if (!any_pinned_transfer.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> guard(pinned_mutex);
    std::erase_if(pinned_transfers, [&](const PinnedTransfer& t) {
      if (peer != no_rank && t.peer != peer) return false;
      detail::unpin(t.address, t.size);
      return true;
    });
    any_pinned_transfer.store(!pinned_transfers.empty(), std::memory_order_release);
  }

  // Stable addresses: MemoryRegion handles point into this deque.
  std::deque<detail::RegionState> regions;
  std::uint64_t next_generation = 1;

  // Remote calls (remote_calls.cpp). UCX reads a send's header until the send
  // completes, so every header lives here, not on a stack.
  struct CallHeader {
    std::uint32_t handler;
    std::int32_t source;
    std::uint32_t answer_sequence;  // kUnanswered: acknowledge, do not answer
    std::uint32_t reserved;
    std::uint64_t argument;  // the caller's, for the handler
  };
  static constexpr std::uint32_t kUnanswered = ~std::uint32_t{0};
  // The three kinds of handler a slot may hold: a remote call's, an
  // answered call's, a landing call's.
  enum class HandlerKind { remote, answering, landing };
  static const char* name(HandlerKind kind) {
    return kind == HandlerKind::remote      ? "remote"
           : kind == HandlerKind::answering ? "answering"
                                            : "landing";
  }
  struct RemoteHandlerSlot {
    std::atomic<RemoteHandler> handler{nullptr};
    std::atomic<detail::AnsweringHandler> answering{nullptr};
    std::atomic<detail::LandingHandler> landing{nullptr};
    std::atomic<void*> context{nullptr};
    bool has(HandlerKind kind) const {
      switch (kind) {
        case HandlerKind::remote:
          return handler.load(std::memory_order_acquire) != nullptr;
        case HandlerKind::answering:
          return answering.load(std::memory_order_acquire) != nullptr;
        case HandlerKind::landing:
          return landing.load(std::memory_order_acquire) != nullptr;
      }
      return false;
    }
    bool in_use() const {
      return has(HandlerKind::remote) || has(HandlerKind::answering) || has(HandlerKind::landing);
    }
  };
  std::array<RemoteHandlerSlot, 32> remote_handlers;
  // Exactly one of the three handlers is set.
  std::uint32_t add_handler(RemoteHandler handler, detail::AnsweringHandler answering,
                            detail::LandingHandler landing, void* context);
  // Headers of calls in flight (each carries its argument and its answer's
  // tag; UCX reads a send's header until the send completes), free again
  // when UCX completes the send: claimed by a scan from a rotating cursor,
  // so neither side takes a lock or allocates.
  static constexpr std::size_t kCallHeaders = 256;
  static constexpr std::size_t kSent = ~std::size_t{0};
  std::array<CallHeader, kCallHeaders> call_headers{};
  std::array<std::atomic<bool>, kCallHeaders> call_header_busy{};
  std::atomic<std::size_t> call_header_cursor{0};
  std::atomic<std::uint32_t> next_answer_sequence{0};
  std::size_t claim_call_header();
  static void release_call_header(void* request, ucs_status_t status, void* busy);
  // How a call's bytes travel: eagerly, into UCX's buffers, for a handler
  // that reads them there; or by rendezvous, straight into the memory a
  // landing handler names (zero-copy where the transport has it).
  enum class CallBytes { eager, landing };
  // Sends a call; returns its header's index while UCX still reads the
  // bytes, kSent once it has let go of them. Throws on a failed send.
  // `kept`: the send's request is the caller's (UCX's callback then frees
  // only the header), stored there (nullptr once sent).
  std::size_t send_call(int peer, const CallHeader& header, const void* bytes, std::size_t size,
                        const char* operation, CallBytes how = CallBytes::eager,
                        ucs_status_ptr_t* kept = nullptr);
  static void release_kept_call_header(void* request, ucs_status_t status, void* busy);
  // Drives the worker until the send_call that returned `sending` has let
  // go of its bytes, which are then the caller's again.
  void wait_until_sent(std::size_t sending, const char* operation);
  // send_call for call_nbi, call and landing calls: checks the handler,
  // counts the call in calls_in_flight until its acknowledgement.
  std::size_t send_acknowledged(int peer, std::uint32_t id, const void* bytes, std::size_t size,
                                std::uint64_t argument, const char* operation,
                                CallBytes how = CallBytes::eager, ucs_status_ptr_t* kept = nullptr);
  // A caller's check before it calls: throws unless handler `id` is of `kind`.
  void require_handler(std::uint32_t id, HandlerKind kind, const char* operation) const;
  // The callee's check of a call UCX delivered as `how` says it was sent:
  // its header's size, its caller's rank, the handler its slot must hold
  // (a landing call's, an answered call's or a remote call's), and an
  // eager call not announced by rendezvous. Returns the header and the
  // slot; aborts on a malformed call (the caller checked what it sent: a
  // protocol bug).
  const RemoteHandlerSlot& delivered_call(const void* header, std::size_t header_length,
                                          const ucp_am_recv_param_t& param, CallBytes how,
                                          CallHeader& call) const;
  // Per peer: a put, get or atomic issued since its last flush, so the next
  // flush needs UCX's (over tcp: a zero-length put and its acknowledgement).
  std::unique_ptr<std::atomic<bool>[]> rma_since_flush;
  // What this rank sent (Transport::traffic).
  detail::TrafficMeter traffic;
  void note_rma(int peer) {
    rma_since_flush[static_cast<std::size_t>(peer)].store(true, std::memory_order_relaxed);
  }
  std::int32_t acknowledgement_header = 0;  // this rank
  // Per peer: calls sent whose handler has not yet reported back.
  std::unique_ptr<std::atomic<std::int64_t>[]> calls_in_flight;
  void listen_for_remote_calls();
  // UCX active-message callbacks: a call to run here, and a call's return.
  static ucs_status_t on_call(void* impl, const void* header, std::size_t header_length, void* data,
                              std::size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t on_call_done(void* impl, const void* header, std::size_t header_length,
                                   void* data, std::size_t length,
                                   const ucp_am_recv_param_t* param);
  // A landing call: its bytes are received where its handler says, then acknowledged.
  static ucs_status_t on_landing(void* impl, const void* header, std::size_t header_length,
                                 void* data, std::size_t length, const ucp_am_recv_param_t* param);
  static void on_landed(void* request, ucs_status_t status, std::size_t length, void* source);
  void landing_failed(int source, std::size_t length, ucs_status_t status) noexcept;
  // Per caller, what a landing's completion needs: which transport, which rank.
  struct LandingSource {
    Impl* impl;
    int rank;
  };
  std::unique_ptr<LandingSource[]> landing_sources;
  // The caller's endpoint, for an acknowledgement or answer; nullptr (the
  // caller then counts as gone) when there is none.
  ucp_ep_h caller_endpoint(int source) noexcept;
  // Tells `source` that a call it made has returned (or landed).
  void acknowledge(ucp_ep_h caller, int source) noexcept;
  // Sends a handler's answer, or a deferred one, to `caller` (the rank
  // `source`) with `tag`, without waiting: a transient answer goes inline
  // when UCX can take it, else from a copy (allocated only then: a socket
  // too full to take it at once). The thread holds the worker.
  void send_answer(ucp_ep_h caller, int source, std::uint64_t tag,
                   const detail::Answer& answer) noexcept;
  // Waits until every call to `peer` (no_rank: to every peer) has returned.
  void wait_for_calls(int peer, const char* operation);

  // One thread at a time in a single-threaded worker (MPIDSM_PROGRESS_THREAD=off).
  detail::WorkerGuard worker_guard;
  // Entered by every call that touches the worker: checks the single-threaded
  // rule, and keeps a progress thread out of the worker meanwhile, except in
  // calls that block in MPI collectives: peers may need this rank's
  // progress until they reach the collective.
  class WorkerUse {
   public:
    WorkerUse(Impl& s, const char* operation, bool counted)
        : guard_(s.worker_guard, operation), inside_(s.handoff, counted) {}

   private:
    detail::WorkerGuard::Use guard_;
    detail::CountedInside inside_;
  };
  // What a wait drives: the worker (one-sided operations, calls, agreed
  // messages, MPI requests), or the messaging worker (tagged messages).
  enum class Waiting { on_worker, for_message };
  static Waiting waiting_for(bool message) {
    return message ? Waiting::for_message : Waiting::on_worker;
  }
  // A wait for a message does not count as inside: it leaves `worker` to the
  // progress thread, which must go on serving peers meanwhile.
  WorkerUse use_worker(const char* operation, Waiting what = Waiting::on_worker) {
    detail::check_not_forked(rank, operation);
    return {*this, operation, what == Waiting::on_worker};
  }
  WorkerUse use_worker_in_collective(const char* operation) {
    detail::check_not_forked(rank, operation);
    return {*this, operation, false};
  }
  // For send, recv and probe: notes the first use of messaging before
  // taking the worker, so that registering MPI's callback then does not
  // hold the worker (with MPIDSM_PROGRESS_THREAD=off, another thread would
  // find it taken meanwhile).
  WorkerUse use_messaging(const char* operation) {
    note_messages_used();
    return use_worker(operation, Waiting::for_message);
  }

  // Tagged messages to ranks of this node (mailbox_setup.cpp).
  detail::Mailboxes mailboxes;
  // Collective: the rest of construction once UCX runs (peers, endpoints,
  // mailboxes); abandon() undoes it when it fails.
  void connect(bool eager_connect, std::size_t shm_eager_limit);
  void abandon() noexcept;
  // Collective: which ranks share this node (node_index); returns how many.
  int learn_node();
  void open_mailboxes(std::size_t eager_limit);

  std::function<void()> target_progress_hook;
  // Read by MPI's progress loop, on whichever thread is blocked in MPI.
  std::atomic<bool> target_progress_needed{false};

  // Runs messages_progress_hook the first time this rank uses messaging:
  // one relaxed load per call after that.
  std::function<void()> messages_progress_hook;
  std::atomic<bool> messages_used{false};
  void note_messages_used() {
    if (messages_used.load(std::memory_order_relaxed) || messages_used.exchange(true)) return;
    if (messages_progress_hook) messages_progress_hook();
  }

  // Waits yield the CPU after idle polls (Transport::yield_when_idle).
  bool yield_when_idle = false;
  // As many ranks on this node as CPUs: a progress thread that polls takes a
  // CPU some rank needs.
  bool no_spare_cpu = false;

  // Threads inside the transport drive the worker themselves; the progress
  // thread keeps out and sleeps meanwhile (opened when that thread may run).
  detail::ProgressHandoff handoff;
  std::atomic<std::uint64_t> progressed_from_mpi{0};   // ProgressControl::progressed_from_mpi
  std::atomic<std::uint64_t> progressed_as_helper{0};  // Transport::progressed_as_helper

  // Drives the worker until done() holds. When told to, yields the CPU at
  // every idle poll past the first few (as Open MPI's mpi_yield_when_idle
  // does), since the rank we wait for may need this core: yielding only
  // every 64th, a clean DSM barrier of 3 ranks on 2 cores across simulated
  // hosts took 90 us against 34. A wait idle for many yields sleeps
  // instead (IdleBackoff). Otherwise it spins, as a system call in the
  // wait would add to latency.
  // A wait still idle after a few polls is a remote one: it mutes the
  // progress thread's wake-ups for its duration (ProgressHandoff).
  // A peer whose process is gone ends the wait: Errc::transport naming it and
  // `waiting_for`.
  // A wait for a message mutes nothing: the thread does not sleep on the
  // messaging worker.
  template <class Done>
  void progress_until(Done&& done, const char* waiting_for, Waiting what = Waiting::on_worker) {
    constexpr unsigned idle_polls_before_mute = 4, idle_polls_before_yield = 5,
                       polls_per_liveness_look = 256;
    unsigned idle = 0, polls = 0;
    detail::IdleBackoff backoff;
    const bool on_worker = what == Waiting::on_worker;
    detail::CountedInside counted(handoff, on_worker);
    while (!done()) {
      // Whatever this rank waits for, messages queued behind a full mailbox
      // leave as it drains, and posted receives take what arrives (a
      // rendezvous's bytes need the receiver to match its record).
      if (mailboxes.has_work()) mailboxes.progress();
      if (progress_once(what) != 0) {
        idle = 0;
        backoff.progressed();
      } else if (++idle == idle_polls_before_mute && on_worker) {
        handoff.mute();
      } else if (yield_when_idle && idle == idle_polls_before_yield) {
        backoff.idle();
        idle = idle_polls_before_mute;
      }
      if (++polls == polls_per_liveness_look) {
        polls = 0;
        check_peers(waiting_for);
      }
    }
  }
  // One poll of what a wait drives; the number of events handled. A wait
  // for a message drives the worker too while no progress thread serves it:
  // peers' one-sided operations on this rank may be what the message waits
  // for.
  unsigned progress_once(Waiting what) {
    const bool on_worker = what == Waiting::on_worker;
    unsigned events = 0;
    if (on_worker || !handoff.helper_running()) events += ucp_worker_progress(worker);
    if (!on_worker || messaging_due()) events += ucp_worker_progress(messaging_worker);
    return events;
  }
  void check_peers(const char* waiting_for) {
    if (liveness.dead_peer() >= 0) [[unlikely]] {
      lose();
      throw_peer_gone(waiting_for);
    }
  }
  // Once a peer is gone the runtime cannot go on, and whatever is still in
  // flight is purged: every endpoint is closed with UCP_EP_CLOSE_FLAG_FORCE,
  // which completes its requests with an error. Otherwise a request that a
  // wait abandoned when it threw would write later into memory its caller
  // no longer owns (over tcp, an atomic's reply landed on a stack that had
  // moved on, and the next unwind crashed). From then on every operation
  // throws before it touches an endpoint (`lost`, read by check_peer).
  // Memory live peers may still reach is released later (release_region).
  // Before the endpoints close, the peers connected to this rank learn
  // which rank was found gone (tell_connected_peers). Idempotent.
  void lose() noexcept;
  std::atomic<bool> lost{false};
  // Where peers tell this rank which rank they found gone (the rank + 1; 0
  // while none), so that a rank never connected to a dead peer still names
  // it, rather than the survivor whose endpoints closed (liveness.hear_from).
  MemoryRegion told_word;
  std::vector<std::uint64_t> telling;  // per peer: what this rank swaps into its told word
  void tell_connected_peers() noexcept;
  [[noreturn]] void throw_peer_gone(const char* waiting_for) const;
  detail::PeerLiveness liveness;
  std::vector<detail::PeerWatch> endpoint_watches;  // indexed by rank

  // Throws for `operation` with `peer`, which failed with `status`. When
  // some peer is gone (looked for now), the error names every rank gone
  // instead: a survivor that closed its endpoints after the same death
  // fails this rank's operations with it too, and must not be blamed alone.
  [[noreturn]] void throw_failed(const char* operation, int peer, ucs_status_t status) {
    if (status != UCS_ERR_MESSAGE_TRUNCATED && status != UCS_ERR_NO_MEMORY &&
        liveness.look_now() >= 0) {
      lose();
      throw_peer_gone(operation);
    }
    detail::throw_ucx(rank, operation, peer, status);
  }
  void check(const char* operation, int peer, ucs_status_t status) {
    if (status != UCS_OK) [[unlikely]]
      throw_failed(operation, peer, status);
  }

  // Waits for a UCX request returned by a *_nbx call (nullptr: completed at
  // once), frees it, and throws with `operation` and `peer` if it failed.
  void wait(ucs_status_ptr_t request, const char* operation, int peer) {
    if (request == nullptr) return;
    if (UCS_PTR_IS_ERR(request)) throw_failed(operation, peer, UCS_PTR_STATUS(request));
    ucs_status_t status;
    try {
      progress_until([&] { return (status = ucp_request_check_status(request)) != UCS_INPROGRESS; },
                     operation);
    } catch (const Error&) {
      finish_purged(request);  // the runtime is lost: lose() purged it
      throw;
    }
    ucp_request_free(request);
    check(operation, peer, status);
  }
  // Drives both workers, without looking at peers, until `done` holds or a
  // second has passed (a purge completes at once; the bound only keeps a
  // UCX that does not from hanging a rank already in error).
  template <class Done>
  void drive_briefly(Done&& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!done() && std::chrono::steady_clock::now() < until) {
      ucp_worker_progress(worker);
      ucp_worker_progress(messaging_worker);
    }
  }
  // Frees a request of a wait that threw once lose() purged it (left to
  // UCX, never freed, if it did not complete).
  void finish_purged(ucs_status_ptr_t request) {
    drive_briefly([&] { return ucp_request_check_status(request) != UCS_INPROGRESS; });
    if (ucp_request_check_status(request) != UCS_INPROGRESS) ucp_request_free(request);
  }

  // Releases a request whose completion is tracked by a later flush.
  void detach(ucs_status_ptr_t request, const char* operation, int peer) {
    if (request == nullptr) return;
    if (UCS_PTR_IS_ERR(request)) throw_failed(operation, peer, UCS_PTR_STATUS(request));
    ucp_request_free(request);
  }

  // Inline on every hot path; the message is built out of line, only on error.
  void check_peer(int peer, const char* operation) const {
    if (peer < 0 || peer >= size) [[unlikely]]
      throw_invalid_rank(peer, operation);
    if (lost.load(std::memory_order_relaxed)) [[unlikely]]
      throw_peer_gone(operation);
  }
  [[noreturn]] void throw_invalid_rank(int peer, const char* operation) const;

  // Validates a region handle, a peer, and [offset, offset+length) inside the
  // peer's part of the region; returns that peer's key, unpacked (and the
  // endpoint to the peer made) on first use.
  const detail::RemoteKey& remote(const MemoryRegion& region, int peer, std::size_t offset,
                                  std::size_t length, const char* operation);
  // Unpacks a peer's key on the endpoint to the peer, unless done already.
  void unpack_on_first_use(detail::RemoteKey& key, int peer) {
    if (!std::atomic_ref<void*>(key.rkey).load(std::memory_order_acquire)) [[unlikely]]
      unpack_on_use(key, peer);
  }
  void unpack_on_use(detail::RemoteKey& key, int peer);
  std::mutex unpacking;  // one unpack per key, whichever thread asks first

  // remote() plus the alignment an atomic on a `width`-byte word needs.
  const detail::RemoteKey& atomic_target(const MemoryRegion& region, int peer, std::size_t offset,
                                         std::size_t width, const char* operation);
  // One UCX atomic with a reply (no argument checks).
  std::uint64_t native_fetch(AtomicOp op, int peer, const detail::RemoteKey& key,
                             std::size_t offset, std::size_t width, std::uint64_t operand,
                             std::uint64_t compare);
  // `peers_need_progress`: peers that cannot map the region reach it through
  // UCX, so this rank's target-side progress matters (false for memory that
  // only same-node peers use).
  MemoryRegion map_region(void* base, std::size_t length, bool allocate, bool zeroed,
                          bool peers_need_progress = true);
  // Validates a receive's arguments and returns the UCX tag and mask it matches.
  std::pair<std::uint64_t, std::uint64_t> receive_match(int source, int tag, const void* buffer,
                                                        std::size_t capacity) const;
  // A blocking receive matched by the mailboxes' software matching.
  MessageInfo receive_from_mailboxes(int source, int tag, void* buffer, std::size_t capacity);
  void barrier();
  // The barrier after close_endpoints: drives both workers, as peers still
  // closing their endpoints to this rank need either.
  void closing_barrier();
  void wait_mpi(std::span<MPI_Request> requests, const char* waiting_for);
  // MPI_Testall calls per poll of the workers in wait_mpi: over tcp a poll
  // of a worker is a system call, and far more ranks than cores made one per
  // test cost MPI_Ibarrier plus this wait 1.5x MPI_Barrier at 16 ranks on 4
  // simulated hosts; 4 tests per poll brought it to 1.3x, and 16 no further.
  static constexpr int kMpiLooksPerPoll = 4;
  // Attached to the communicator: how mpidsm's collectives on it wait
  // (detail::wait_collective), driving UCX and checking peers' liveness.
  detail::CollectiveWait collective_wait{};
  static void wait_for_collective(void* impl, MPI_Request& request, const char* operation);
  void announce_unmappable_peer();
  // Unmaps `state` and frees the memory under it (`free_memory`), at once
  // or, after a peer's death, once the workers are destroyed: over tcp a
  // live peer that reconnects still has its puts and atomics served, by
  // whichever thread drives the worker, until then (lose() cannot stop it).
  void release_region(detail::RegionState& state, bool now, std::function<void()> free_memory);
  std::vector<ucp_mem_h> unmap_after_workers;
  std::vector<std::function<void()>> free_after_workers;
  // Closes every endpoint of both workers and waits until UCX has; `flags`:
  // 0 (in step with the peers) or UCP_EP_CLOSE_FLAG_FORCE (lose()).
  void close_endpoints(std::uint32_t flags);
  // Destroys the worker and context without talking to peers.
  void release_local() noexcept;
};

}  // namespace mpidsm
