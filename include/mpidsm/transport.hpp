// The transport layer: mpidsm's only door to UCX. One UCP context and two
// workers per runtime (one-sided operations, and tagged messages, which the
// progress thread never sleeps on), each with an endpoint to every rank of
// the communicator (self included), collective memory registration with
// rkeys exchanged over MPI, one-sided RMA, atomics, tagged messages and
// progress. This header includes no UCX header: UCX handles stay opaque so
// the layers above (and users) never depend on UCX's ABI.
//
// Completion rules of the RMA calls:
//   put_nbi/get_nbi  return at once; the source of a put may be reused and the
//                    destination of a get read only after flush(peer)/flush_all().
//   put_nb/get_nb    return a Request; its completion means local completion
//                    (put: source reusable; get: data arrived).
//   flush(peer)      remote completion of every put, get and atomic issued to peer.
//   flush_all()      the same for every peer.
// All calls except the collectives are non-collective and are made by one
// application thread at a time; a progress thread may share the worker when
// TransportOptions::shareable is set.
#pragma once

#include "mpidsm/language.hpp"

#include <mpi.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mpidsm/progress_modes.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm {

/// \addtogroup transport
/// @{

class Transport;

/// Receive wildcard: a message from any rank.
inline constexpr int any_source = -1;
/// Receive wildcard: a message of any tag.
inline constexpr int any_tag = -1;
/// Largest tag a message may carry.
inline constexpr int max_tag = (1 << 24) - 1;
/// Largest communicator mpidsm supports.
inline constexpr int max_ranks = 1 << 24;

/// Remote atomic operations.
enum class AtomicOp { add, swap, compare_swap, bit_and, bit_or, bit_xor };
/// The name of an atomic operation, for messages.
const char* to_string(AtomicOp op);

/// What a receive or probe found: sender, tag and size in bytes.
struct MessageInfo {
  /// The sender.
  int source = any_source;
  /// The message's tag.
  int tag = any_tag;
  /// Bytes of the message.
  std::size_t size = 0;
};

/// How a Transport is set up (the Runtime fills it from Config).
struct TransportOptions {
  /// Another thread (the progress thread) may call progress() and arm(): the
  /// workers are then created UCS_THREAD_MODE_MULTI, otherwise single-threaded.
  bool shareable = false;
  /// Rendezvous threshold for tagged messages; 0 keeps UCX's own choice.
  std::size_t rndv_threshold = 0;
  /// Messages to ranks of this node go through shared-memory mailboxes, whole
  /// up to this size (at most 16,360 bytes); 0: every message through UCX.
  /// Collective: ranks agree on the smallest value.
  std::size_t shm_eager_limit = 4096;
  /// Waits yield the CPU after a run of idle polls: always, never, or (auto)
  /// when the node runs more ranks than it has CPUs.
  YieldMode yield_when_idle = YieldMode::automatic;
  /// Endpoints to every rank at start-up; otherwise to ranks of this node at
  /// start-up and to other ranks on first use.
  bool eager_connect = false;
};

namespace detail {
class ProgressControl;
class DrivingProgress;
class LibraryMessaging;

/// What this rank knows of one peer's part of a registered region.
struct RemoteKey {
  std::uint64_t base = 0;  ///< the region's address in the peer's address space
  std::size_t size = 0;    ///< the peer's region size
  void* rkey = nullptr;    ///< ucp_rkey_h unpacked on the endpoint to the peer, or nullptr
  void* mapped = nullptr;  ///< where the peer's region is mapped here, or nullptr
  /// The peer's packed rkey until its first use unpacks it (peers this
  /// rank has no endpoint to yet: endpoints are made on use).
  std::vector<std::byte> packed;
};

/// Registered region bookkeeping. Slots are reused; a generation number tells a
/// live handle from a stale one so use after deregistration is an error, not a crash.
struct RegionState {
  std::uint64_t generation = 0;  ///< 0 while the slot is free
  int owner_rank = no_rank;      ///< this rank, for error messages
  void* base = nullptr;
  std::size_t size = 0;
  void* memh = nullptr;          ///< ucp_mem_h
  std::vector<RemoteKey> peers;  ///< indexed by rank
};

}  // namespace detail

/// A non-owning handle to a collectively registered region. Copyable; becomes
/// invalid (and every use an Errc::unregistered error) after Transport::deregister.
class MemoryRegion {
 public:
  MemoryRegion() = default;

  /// False for an empty or deregistered handle.
  bool valid() const noexcept { return state_ && state_->generation == generation_; }
  /// This rank's part of the region.
  void* local_base() const { return checked().base; }
  /// Bytes of this rank's part.
  std::size_t local_size() const { return checked().size; }
  /// The size of the region on `peer`.
  std::size_t size(int peer) const;
  /// Where peer's part of the region can be loaded from and stored to directly,
  /// or nullptr when UCX cannot map it (another node, tcp, memory UCX did not allocate).
  void* mapped(int peer) const;
  /// True when every rank's part, self included, is mapped here.
  bool all_mapped() const;

 private:
  friend class Transport;
  MemoryRegion(detail::RegionState* state, std::uint64_t generation)
      : state_(state), generation_(generation) {}
  const detail::RegionState& checked() const;

  detail::RegionState* state_ = nullptr;
  std::uint64_t generation_ = 0;
};

/// Completion handle of a non-blocking operation. Move-only; destroying an
/// incomplete request waits for it, so a buffer is never released under UCX.
/// A request must not outlive the Transport that issued it.
class Request {
 public:
  Request() = default;  ///< an already complete request
  /// Takes over `other`, which becomes complete.
  Request(Request&& other) noexcept;
  /// Waits for this request, then takes over `other`.
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  /// Progresses once and reports whether the operation completed.
  bool test();
  /// Blocks until completion. Throws Error on a failed operation; a receive whose
  /// message did not fit throws Errc::truncated.
  void wait();
  /// As wait(), while also letting MPI progress (an MPI_Iprobe on `comm`
  /// every few polls): for a wait on a peer that may itself still be
  /// waiting in MPI for traffic with this rank. Whatever that traffic still
  /// needs from this rank (the rest of a send, a control message of MPI's
  /// rendezvous) moves only in this rank's MPI progress, which a wait in UCX
  /// alone never makes. Only from a thread that may call MPI;
  /// MPI_COMM_NULL: as wait().
  void wait_moving_mpi(MPI_Comm comm);
  /// For a receive: source, tag and size of the message (valid once complete).
  const MessageInfo& message() const noexcept { return message_; }

 private:
  friend class Transport;
  friend class detail::LibraryMessaging;
  /// send_or_rma and receive run on the transport's worker (one-sided
  /// operations, agreed messages, answers); message_send, message_receive and
  /// mailbox_receive (a receive in the same-node mailboxes' matching) on its
  /// messaging worker.
  enum class Kind { send_or_rma, receive, message_send, message_receive, mailbox_receive };
  bool messaging() const noexcept {
    return kind_ == Kind::message_send || kind_ == Kind::message_receive ||
           kind_ == Kind::mailbox_receive;
  }
  /// `pinned` (of `pinned_size` bytes) is DSM memory the operation uses,
  /// unpinned when it completes.
  Request(Transport* transport, void* handle, Kind kind, const char* what, int peer,
          std::size_t capacity, const void* pinned = nullptr, std::size_t pinned_size = 0);
  bool poll();
  bool poll_mailbox();
  /// A receive nothing will arrive for: withdrawn from UCX.
  void cancel() noexcept;
  void release() noexcept;
  void unpin() noexcept;
  /// The operation is over: forgets the handle and unpins the buffer.
  void finish() noexcept;

  Transport* transport_ = nullptr;
  void* handle_ = nullptr;  ///< UCX request (or mailbox receive); nullptr once complete
  Kind kind_ = Kind::send_or_rma;
  const char* what_ = "";
  int peer_ = no_rank;
  std::size_t capacity_ = 0;
  MessageInfo message_{};
  const void* pinned_ = nullptr;
  std::size_t pinned_size_ = 0;
};

template <class T>
concept AtomicWord = std::integral<T> &&(sizeof(T) == 4 || sizeof(T) == 8);

/// What a rank holds of UCX (Transport::resources): for start-up and memory
/// accounting at scale (benchmarks/startup_scaling, docs/scaling.md).
struct TransportResources {
  std::size_t workers = 0;           ///< UCX workers
  std::size_t endpoints = 0;         ///< endpoints to other ranks, over every worker
  std::size_t regions = 0;           ///< registered memory regions
  std::size_t registered_bytes = 0;  ///< this rank's bytes in them
  std::size_t remote_keys = 0;       ///< peers' keys unpacked, over every region
  /// Bytes kept to reach peers not used yet: their worker addresses and
  /// packed keys (endpoints and keys are made on first use).
  std::size_t addressing_bytes = 0;
};

/// What a rank has sent since its Transport started (Transport::traffic):
/// figures that do not depend on the machine, for comparing a DSM program's
/// communication with an MPI twin's. Each put, get and atomic, each tagged,
/// agreed or active message (a remote call and its answer), and each message
/// through the node's shared-memory mailboxes counts once, with its payload
/// bytes (a get's are those it brings back; an atomic's its operand's).
/// Loads and stores through memory mapped from a peer are no messages, and
/// the MPI calls mpidsm makes (collective set-up, allocation, the notices of
/// a DSM barrier on one node) are MPI's to count.
struct TransportTraffic {
  std::uint64_t messages = 0;  ///< operations and messages started
  std::uint64_t bytes = 0;     ///< their payload bytes
};

/// mpidsm's only door to UCX (see the header): one per Runtime.
class Transport {
 public:
  /// Collective over comm (which the caller keeps alive for the Transport's
  /// lifetime). runtime_id is stamped into every tag.
  Transport(MPI_Comm comm, std::uint16_t runtime_id, const TransportOptions& options);
  /// Collective: flushes, closes endpoints in step with the peers, releases UCX.
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  /// This rank's number.
  int rank() const noexcept { return rank_; }
  /// Ranks of the communicator.
  int size() const noexcept { return size_; }
  /// Ranks of the communicator on this node (MPI_COMM_TYPE_SHARED, this one
  /// included), counted at start-up.
  int ranks_on_node() const noexcept { return node_ranks_; }
  /// The UCX transports and devices of the endpoint to `peer`, as UCX names
  /// them ("posix/memory cma/memory", "tcp/eth0"), distinct, in lane order.
  std::string path_to(int peer) const;
  /// The workers, endpoints, registered regions and remote keys this rank holds now.
  TransportResources resources() const;
  /// What this rank has sent so far (see TransportTraffic).
  TransportTraffic traffic() const noexcept;

  // --- memory (collective) ----------------------------------------------------
  /// Registers [base, base+size) on every rank (sizes may differ by rank).
  MemoryRegion register_memory(void* base, std::size_t size);
  /// Lets UCX allocate `size` bytes on every rank, in memory peers on the same
  /// node can map (shared memory), which makes the load/store fast path possible.
  /// With `zeroed`, every byte reads 0 before any peer can reach the memory
  /// (without a shared-memory transport UCX may hand out recycled heap memory).
  MemoryRegion allocate(std::size_t size, bool zeroed = false);
  /// Collective: releases a region after every peer has completed its operations on it.
  /// `free_memory` (for memory given to register_memory) frees what lies
  /// under it once no peer can reach it: at once while every peer lives;
  /// after a peer's death, when this Transport's workers are destroyed
  /// (until then a live peer's operation may still land in it).
  void deregister(MemoryRegion& region, std::function<void()> free_memory = {});
  /// The registered region holding a local address and the offset in it; throws
  /// Errc::unregistered for an address in no region.
  std::pair<MemoryRegion, std::size_t> locate(const void* address) const;

  // --- RMA ---------------------------------------------------------------------
  /// Non-blocking put of `size` bytes to `peer` at `offset` of `dst`; complete at flush.
  void put_nbi(int peer, const MemoryRegion& dst, std::size_t offset, const void* src,
               std::size_t size);
  /// Non-blocking get; `dst` may be read after a flush.
  void get_nbi(int peer, const MemoryRegion& src, std::size_t offset, void* dst, std::size_t size);
  /// Non-blocking put; the Request completes when `src` may be reused.
  Request put_nb(int peer, const MemoryRegion& dst, std::size_t offset, const void* src,
                 std::size_t size);
  /// Non-blocking get; the Request completes when the data has arrived.
  Request get_nb(int peer, const MemoryRegion& src, std::size_t offset, void* dst,
                 std::size_t size);
  /// Blocking: return after remote completion (put) or arrival (get).
  void put(int peer, const MemoryRegion& dst, std::size_t offset, const void* src,
           std::size_t size);
  /// Blocking get: the data has arrived on return.
  void get(int peer, const MemoryRegion& src, std::size_t offset, void* dst, std::size_t size);
  /// Remote completion of every operation issued to `peer`.
  void flush(int peer);
  /// Remote completion of every operation issued to any peer.
  void flush_all();
  /// Orders: operations issued after the fence reach each target after those
  /// issued before it (ucp_worker_fence); no completion is waited for.
  void fence();

  // --- atomics on 32- and 64-bit words (offset aligned to the word size) --------
  /// Returns the previous value. compare is used by compare_swap only.
  template <AtomicWord T>
  T atomic_fetch(AtomicOp op, int peer, const MemoryRegion& region, std::size_t offset, T operand,
                 T compare = 0) {
    std::uint64_t result =
        atomic_fetch_raw(op, peer, region, offset, sizeof(T), static_cast<std::uint64_t>(operand),
                         static_cast<std::uint64_t>(compare));
    return static_cast<T>(result);
  }
  /// Non-fetching (add, and, or, xor): remote completion at the next flush.
  template <AtomicWord T>
  void atomic_post(AtomicOp op, int peer, const MemoryRegion& region, std::size_t offset,
                   T operand) {
    atomic_post_raw(op, peer, region, offset, sizeof(T), static_cast<std::uint64_t>(operand));
  }

  // --- tagged messages -----------------------------------------------------------
  /// Tags are 0..max_tag. Messages between one pair of ranks with one tag arrive in
  /// order. Sends of at least the rendezvous threshold go zero-copy by rendezvous.
  void send(int peer, int tag, const void* buffer, std::size_t size);
  /// Non-blocking send; `buffer` stays untouched until the Request completes.
  Request isend(int peer, int tag, const void* buffer, std::size_t size);
  /// source may be any_source and tag any_tag. A message larger than capacity is
  /// consumed and reported as Errc::truncated.
  MessageInfo recv(int source, int tag, void* buffer, std::size_t capacity);
  /// Non-blocking receive; wait() then message() describes what arrived.
  Request irecv(int source, int tag, void* buffer, std::size_t capacity);
  /// Non-blocking: describes a matching message without receiving it.
  std::optional<MessageInfo> probe(int source, int tag);

  // --- remote calls ------------------------------------------------------------------
  /// A handler a peer runs on bytes this rank sent with call_nbi, inside the
  /// peer's UCX progress (its progress thread, or any wait inside mpidsm), so
  /// it may run beside the peer's other threads. For work one-sided
  /// operations would need many round trips for, such as writing a diff of
  /// scattered runs. It must not block, throw or call into the Transport.
  /// `argument` is the caller's (call_nbi).
  using RemoteHandler = void (*)(void* context, int source, std::uint64_t argument,
                                 const std::byte* bytes, std::size_t size);
  /// Collective: every rank adds the same handlers in the same order, so an id
  /// names the same handler everywhere (Errc::collective_mismatch otherwise).
  std::uint32_t add_remote_handler(RemoteHandler handler, void* context);
  /// Once no call to it can be in flight (after a flush and a barrier).
  void remove_remote_handler(std::uint32_t id) noexcept;
  /// Runs handler `id` at `peer` on [bytes, bytes+size), which must stay
  /// unchanged until the next flush of `peer` (or flush_all): that flush
  /// returns once the handler has returned at the peer. The handler gets
  /// `argument` too (an offset, say, so the bytes need no header of theirs).
  void call_nbi(int peer, std::uint32_t id, const void* bytes, std::size_t size,
                std::uint64_t argument = 0);
  /// As call_nbi, but the bytes may be reused on return.
  void call(int peer, std::uint32_t id, const void* bytes, std::size_t size,
            std::uint64_t argument = 0);
  /// True when UCX reaches `peer`'s memory through active messages (tcp):
  /// every put, get or atomic then needs the peer's CPU, and a call that
  /// does several of them at once saves round trips.
  bool rma_through_messages(int peer) const;

  // --- progress --------------------------------------------------------------------
  /// Drives UCX once (one-sided operations, and messages in flight); true
  /// when something happened.
  bool progress();
  /// Drives UCX until `done(context)` holds, as this class's own waits do:
  /// the progress thread sleeps meanwhile (this thread serves the peers),
  /// and the wait yields where waits yield. Throws Errc::transport naming
  /// `waiting_for` when a peer is gone.
  void progress_until(bool (*done)(void* context), void* context, const char* waiting_for);
  /// Waiting loops should yield the CPU after a run of idle polls instead of
  /// spinning (MPIDSM_YIELD_WHEN_IDLE; by default when more ranks of the
  /// communicator run on this node than it has CPUs). The transport's own
  /// waits sleep once they have yielded many times in a row.
  bool yield_when_idle() const;
  /// Blocks in MPI_Ibarrier on comm while driving UCX progress, so peers that
  /// wait on this rank's progress are never starved by a blocking collective.
  void barrier();
  /// Waits for a non-blocking MPI request while driving UCX progress.
  void wait_mpi(MPI_Request& request, const char* waiting_for);
  /// Waits for every one of `requests` (MPI_REQUEST_NULL among them is done).
  void wait_mpi(std::span<MPI_Request> requests, const char* waiting_for);
  /// Every blocking wait ends with Errc::transport naming the rank and
  /// `waiting_for` once a peer's process is gone (checked at most every
  /// 100 ms; peers on this node). Loops that wait outside mpidsm's own calls
  /// (on a word a peer sets) call this.
  void check_peers(const char* waiting_for);

 private:
  friend class Request;
  // The internal surfaces (src/transport): progress plumbing, and the
  // messaging mpidsm's own layers use.
  friend class detail::ProgressControl;
  friend class detail::DrivingProgress;
  friend class detail::LibraryMessaging;
  std::uint64_t atomic_fetch_raw(AtomicOp op, int peer, const MemoryRegion& region,
                                 std::size_t offset, std::size_t width, std::uint64_t operand,
                                 std::uint64_t compare);
  void atomic_post_raw(AtomicOp op, int peer, const MemoryRegion& region, std::size_t offset,
                       std::size_t width, std::uint64_t operand);
  struct Impl;
  int rank_ = no_rank;
  int size_ = 0;
  int node_ranks_ = 1;
  std::unique_ptr<Impl> impl_;
};

/// @}

}  // namespace mpidsm
