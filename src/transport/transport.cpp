// Transport lifetime: UCP context and workers, the workers' addresses
// exchanged through MPI (endpoints follow on use: endpoint_table.hpp),
// progress, and a shutdown that closes endpoints in step with the peers.
#include <ucp/api/ucp.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "common/mpi_exchange.hpp"
#include "common/startup_watch.hpp"
#include "tag_codec.hpp"
#include "transport_impl.hpp"

namespace mpidsm {
namespace {

// Sets UCX variable UCX_<name> in `config`; throws naming it.
void modify(ucp_config_t* config, int rank, const char* name, const char* value) {
  const ucs_status_t status = ucp_config_modify(config, name, value);
  if (status == UCS_OK) return;
  ucp_config_release(config);
  detail::throw_ucx(rank, (std::string("ucp_config_modify(") + name + ")").c_str(), no_rank,
                    status);
}

// mpidsm's default for UCX_<name>: the user's setting, when there is one,
// wins. `key` names it for ucp_config_modify when that differs.
void set_default(ucp_config_t* config, int rank, const char* name, const char* value,
                 const char* key = nullptr) {
  if (std::getenv((std::string("UCX_") + name).c_str()) == nullptr)
    modify(config, rank, key ? key : name, value);
}

// Whether UCX may open its tcp transport. A setting only tcp reads must not
// be made otherwise: UCX would warn, on stdout, that nothing used it.
bool may_use_tcp(bool shared_memory_only) {
  const char* tls = std::getenv("UCX_TLS");
  if (tls == nullptr) return !shared_memory_only;  // else "sm,self" below
  const std::string list(tls);
  const bool names_tcp = list.find("tcp") != std::string::npos;
  if (list.starts_with('^')) return !names_tcp;  // a list of what to leave out
  return names_tcp || list.find("all") != std::string::npos;
}

// Which of UCX's transports can reach some peer: a job on one node needs no
// network, and a rank alone on its node no shared memory.
enum class Reach { shared_memory_only, network_only, both };

ucp_context_h create_context(int rank, int size, Reach reach, const TransportOptions& options) {
  ucp_config_t* config = nullptr;
  detail::check_ucx(rank, "ucp_config_read", no_rank, ucp_config_read(nullptr, nullptr, &config));
  const bool shared_memory_only = reach == Reach::shared_memory_only;
  // Polling UCX's tcp interfaces costs a system call on every progress call.
  if (shared_memory_only) set_default(config, rank, "TLS", "sm,self");
  // Before the progress thread sleeps, UCX arms every interface: a recvfrom
  // per shared-memory transport per remote wait. Across two simulated hosts,
  // four alternating pairs, tagged 8-byte latency went from 10.1-11.5 us to
  // 9.5-10.4 us without them (MPI: 8.6-9.8 us).
  if (reach == Reach::network_only) set_default(config, rank, "TLS", "^sm");
  // Shared memory from SysV only: UCX's POSIX allocator creates files in
  // /dev/shm and writes them whole, so a rank dying while it allocates
  // leaves them behind (and the write commits memory nobody touched). Where
  // SysV cannot serve, private memory follows (reached through UCX instead
  // of loads and stores).
  set_default(config, rank, "ALLOC_PRIO", "md:sysv,huge,thp,mmap,heap");
  // Over tcp every large transfer travels in segments. Endpoints that
  // detect a peer's failure (UCP_ERR_HANDLING_MODE_PEER, which mpidsm needs)
  // get no tcp lane for zero-copy RMA in UCX 1.13 (the tcp memory domain
  // cannot invalidate remote access: openucx/ucx#11929), so puts and the
  // data of every rendezvous, tagged or active message, go as active
  // messages of one segment each: a send() and a receive per segment, 8 KiB
  // by default. Across two simulated hosts (put_bw --ucx, 2 alternating
  // runs each), mpidsm's puts of 256 KiB to 1 MiB by rendezvous ran at
  // 0.62-0.97 GB/s with 8 KiB segments, 1.0-2.7 GB/s with 64 KiB and
  // 2.2-4.3 GB/s with 256 KiB (MPI 1.9-3.5, raw UCX without error
  // handling 2.4-3.6); tagged bandwidth from 64 KiB went from 0.6-1.3x MPI to
  // 1.1-1.9x. Latency below 64 KiB is unchanged; a 128 KiB message now goes
  // eagerly, 1.1-1.3x MPI's latency against 0.8-1.0x. Segments are taken from
  // a pool as messages are in flight, not per peer.
  // (A transport's setting is named without its prefix here: "TCP_TX_SEG_SIZE"
  // was accepted and ignored.)
  if (may_use_tcp(shared_memory_only)) {
    set_default(config, rank, "TCP_TX_SEG_SIZE", "256k", "TX_SEG_SIZE");
    set_default(config, rank, "TCP_RX_SEG_SIZE", "256k", "RX_SEG_SIZE");
    // A peer's process that dies shows at once: its kernel closes the
    // connection. A host that stops answering (power, network) shows only
    // through TCP keepalive: 2 s idle, then 3 probes 1 s apart, about 5 s
    // (UCX's defaults, 10 s and 2 s apart, took longer than the 10 s a
    // wait may take to end). Probes go only on idle connections.
    set_default(config, rank, "TCP_KEEPIDLE", "2s", "KEEPIDLE");
    set_default(config, rank, "TCP_KEEPINTVL", "1s", "KEEPINTVL");
    set_default(config, rank, "TCP_KEEPCNT", "3", "KEEPCNT");
  }
  if (options.rndv_threshold != 0)
    modify(config, rank, "RNDV_THRESH", std::to_string(options.rndv_threshold).c_str());
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_TAG_SENDER_MASK |
                      UCP_PARAM_FIELD_ESTIMATED_NUM_EPS | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_TAG |
                    UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.tag_sender_mask = detail::TagCodec::runtime_field | detail::TagCodec::rank_field;
  params.estimated_num_eps = 2 * static_cast<std::size_t>(size);  // two workers
  params.name = "mpidsm";
  ucp_context_h context = nullptr;
  ucs_status_t status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  detail::check_ucx(rank, "ucp_init", no_rank, status);
  return context;
}

ucp_worker_h create_worker(int rank, ucp_context_h context, bool shareable) {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // Multi-threaded only when a progress thread may share the worker. (A
  // serialized worker guarded by mpidsm's own lock lost tcp events between
  // the two threads and hung atomics under contention.)
  params.thread_mode = shareable ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SINGLE;
  ucp_worker_h worker = nullptr;
  detail::check_ucx(rank, "ucp_worker_create", no_rank,
                    ucp_worker_create(context, &params, &worker));
  return worker;
}

}  // namespace

Transport::Transport(MPI_Comm comm, std::uint16_t runtime_id, const TransportOptions& options)
    : impl_(std::make_unique<Impl>()) {
  detail::watch_for_fork();
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  if (size_ > max_ranks)
    throw Error(Errc::invalid_argument, rank_,
                "communicator of " + std::to_string(size_) + " ranks exceeds the limit of " +
                    std::to_string(max_ranks));
  Impl& s = *impl_;
  s.comm = comm;
  s.rank = rank_;
  s.size = size_;
  s.runtime_id = runtime_id;

  // Success is agreed collectively so a failure on one rank unwinds all ranks
  // rather than leaving them blocked in the address exchange.
  detail::startup_point("transport-start");
  node_ranks_ = s.learn_node();
  const int local_ranks = node_ranks_;
  const Reach reach = local_ranks == size_ ? Reach::shared_memory_only
                      : local_ranks == 1   ? Reach::network_only
                                           : Reach::both;
  // The node's online CPUs, not this process's affinity mask: mpirun binds
  // each rank to one core when there are enough of them.
  const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  s.yield_when_idle = options.yield_when_idle == YieldMode::automatic
                          ? local_ranks > cpus
                          : options.yield_when_idle == YieldMode::on;
  s.no_spare_cpu = local_ranks >= cpus || s.yield_when_idle;
  std::optional<Error> failure;
  try {
    s.context = create_context(rank_, size_, reach, options);
    s.worker = create_worker(rank_, s.context, options.shareable);
    s.messaging_worker = create_worker(rank_, s.context, options.shareable);
    if (!options.shareable) s.worker_guard.enable_single_threaded(rank_);
    s.listen_for_remote_calls();
    if (options.shareable) s.handoff.open(rank_, s.worker, s.yield_when_idle);
  } catch (const Error& e) {
    failure = e;
  }
  try {
    detail::throw_if_any_failed(comm, rank_, failure, "UCX start-up");
  } catch (const Error&) {
    s.release_local();
    throw;
  }

  try {
    s.connect(options.eager_connect, options.shm_eager_limit);
  } catch (const Error&) {
    s.abandon();
    throw;
  }
  detail::startup_point("transport-end");
}

// From here a collective's wait drives UCX and watches the peers
// (PeerLiveness): the runtime's start-up watch, which sees only the
// processes of this node, hands over as soon as the endpoints exist.
void Transport::Impl::connect(bool eager_connect, std::size_t shm_eager_limit) {
  rma_since_flush = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(size));
  liveness.exchange(comm, rank);
  detail::startup_point("transport-pids");
  endpoint_watches.resize(static_cast<std::size_t>(size));
  for (int peer = 0; peer < size; ++peer)
    endpoint_watches[static_cast<std::size_t>(peer)] = {&liveness, peer};
  using Wiring = detail::EndpointTable::Wiring;
  // Both workers connect the ring: the DSM barrier's dissemination rounds
  // send to the ranks 2^k before this one on the messaging worker, so their
  // first barrier never opens a connection, and over tcp a connection UCX
  // 1.13 first opens to a peer that has just died can fail an assertion
  // inside UCX (tcp_ep.c, uct_tcp_ep_destroy_progress) instead of reporting
  // the peer gone.
  const auto wiring = eager_connect ? Wiring::every : Wiring::node_ring;
  endpoints.open(comm, rank, worker, endpoint_watches, liveness, wiring);
  messaging_endpoints.open(comm, rank, messaging_worker, endpoint_watches, liveness, wiring);
  collective_wait = {&Impl::wait_for_collective, this};
  detail::attach_collective_wait(comm, &collective_wait);
  detail::startup_point("transport-endpoints");
  told_word = map_region(nullptr, sizeof(std::uint64_t), true, true, false);
  liveness.hear_from(static_cast<const std::uint64_t*>(told_word.local_base()));
  open_mailboxes(shm_eager_limit);
}

// Construction failed once peers may hold our addresses: release what this
// rank holds without waiting for any peer, as the destructor does after a
// death.
void Transport::Impl::abandon() noexcept {
  detail::detach_collective_wait(comm, &collective_wait);
  liveness.hear_from(nullptr);
  try {
    for (auto& region : regions)
      if (region.generation != 0) release_region(region, false, {});
  } catch (const Error&) {
    // Nothing to save; what is left goes with the process.
  }
  lose();
  release_local();
}

Transport::~Transport() {
  if (!impl_) return;
  Impl& s = *impl_;
  int finalized = 0;
  MPI_Finalized(&finalized);
  // After MPI_Finalize, or once a peer's process is gone, no peer can be
  // waited for: release local resources only.
  if (!finalized) detail::attach_collective_wait(s.comm, nullptr);
  bool collective =
      !finalized && s.worker != nullptr && s.endpoints.opened() && s.liveness.dead_peer() < 0;
  try {
    if (collective) {
      flush_all();
      s.barrier();  // no peer touches our memory past this point
    }
    s.liveness.hear_from(nullptr);  // the told word goes with the regions
    for (auto& region : s.regions)
      if (region.generation != 0) s.release_region(region, collective, {});
    if (collective)
      s.close_endpoints(0);
    else
      s.lose();  // before any memory goes: no peer's operation lands in it
    // Peers may still need our progress to finish closing their endpoints to
    // us: on both workers (a messaging endpoint's close waited for ever on a
    // peer whose barrier drove only the RMA worker, over tcp across hosts).
    if (collective) s.closing_barrier();
  } catch (const Error&) {
    // A failing peer during shutdown leaves nothing to save; release what we hold.
  }
  s.release_local();
}

void Transport::Impl::close_endpoints(std::uint32_t flags) {
  std::vector<ucs_status_ptr_t> closing;
  endpoints.close(flags, closing);
  messaging_endpoints.close(flags, closing);
  auto closed = [&] {
    for (auto request : closing)
      if (ucp_request_check_status(request) == UCS_INPROGRESS) return false;
    return true;
  };
  if (flags & UCP_EP_CLOSE_FLAG_FORCE)
    drive_briefly(closed);  // nothing to wait for from peers
  else
    progress_until([&] { return ucp_worker_progress(messaging_worker), closed(); },
                   "closing endpoints");
  for (auto request : closing)
    if (ucp_request_check_status(request) != UCS_INPROGRESS) ucp_request_free(request);
}

void Transport::Impl::lose() noexcept {
  if (lost.exchange(true)) return;
  tell_connected_peers();
  close_endpoints(UCP_EP_CLOSE_FLAG_FORCE);
}

// Writes the dead rank into every connected peer's told word, unless the
// word already holds one, for at most a second: a peer that then sees this
// rank's endpoints close knows why. A death passes so from rank to rank
// along the connections (the liveness ring among them: endpoint_table.hpp).
// Compare-and-swap, not put: a survivor that took another survivor's
// closing for the death would otherwise overwrite what an earlier teller
// wrote (seen across 8 simulated hosts: the last writer named a survivor,
// and the reader never learnt of the dead rank). A fetching atomic
// completes once the old value is back, so the word is written by then.
void Transport::Impl::tell_connected_peers() noexcept {
  const int dead = liveness.first_gone();
  if (dead < 0 || !told_word.valid()) return;
  static constexpr std::uint64_t kNoneTold = 0;
  // UCP_ATOMIC_OP_CSWAP compares with the operand buffer and swaps in the
  // reply buffer's value, where the old value lands (native_fetch). A
  // member: a request still open after the second writes it while the
  // endpoints close.
  telling.assign(static_cast<std::size_t>(size), static_cast<std::uint64_t>(dead) + 1);
  std::vector<ucs_status_ptr_t> requests;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank || liveness.known_gone(peer) || !endpoints.connected(peer)) continue;
    try {
      // Not through remote(), which refuses every operation once `lost` is set.
      detail::RemoteKey& key = told_word.state_->peers[static_cast<std::size_t>(peer)];
      unpack_on_first_use(key, peer);
      ucp_request_param_t swap{};
      swap.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
      swap.datatype = ucp_dt_make_contig(sizeof kNoneTold);
      swap.reply_buffer = &telling[static_cast<std::size_t>(peer)];
      ucs_status_ptr_t request =
          ucp_atomic_op_nbx(endpoints.get(peer), UCP_ATOMIC_OP_CSWAP, &kNoneTold, 1, key.base,
                            static_cast<ucp_rkey_h>(key.rkey), &swap);
      if (request && !UCS_PTR_IS_ERR(request)) requests.push_back(request);
    } catch (const Error&) {
      // This peer does not hear of it; its own waits end when it sees ours close.
    }
  }
  drive_briefly([&] {
    for (auto request : requests)
      if (ucp_request_check_status(request) == UCS_INPROGRESS) return false;
    return true;
  });
  for (auto request : requests)
    if (ucp_request_check_status(request) != UCS_INPROGRESS) ucp_request_free(request);
}

void Transport::Impl::release_region(detail::RegionState& state, bool now,
                                     std::function<void()> free_memory) {
  for (auto& key : state.peers)
    if (key.rkey) ucp_rkey_destroy(static_cast<ucp_rkey_h>(key.rkey));
  state.generation = 0;
  state.peers.clear();
  if (now) {
    ucp_mem_unmap(context, static_cast<ucp_mem_h>(state.memh));
    if (free_memory) free_memory();
  } else {
    unmap_after_workers.push_back(static_cast<ucp_mem_h>(state.memh));
    if (free_memory) free_after_workers.push_back(std::move(free_memory));
  }
}

void Transport::Impl::release_local() noexcept {
  if (messaging_worker) ucp_worker_destroy(messaging_worker);
  if (worker) ucp_worker_destroy(worker);
  for (ucp_mem_h memh : unmap_after_workers) ucp_mem_unmap(context, memh);
  unmap_after_workers.clear();
  for (auto& free_memory : free_after_workers) free_memory();
  free_after_workers.clear();
  if (context) ucp_cleanup(context);
  messaging_worker = nullptr;
  worker = nullptr;
  context = nullptr;
}

// The messaging worker too while messages are in flight: the DSM's lock
// and flag loops poll here, and over tcp every poll of a worker is a
// system call.
bool Transport::progress() {
  auto in_use = impl_->use_worker("progress");
  return impl_->progress_once(Impl::Waiting::on_worker) != 0;
}

void Transport::progress_until(bool (*done)(void* context), void* context,
                               const char* waiting_for) {
  auto in_use = impl_->use_worker(waiting_for);
  impl_->progress_until([&] { return done(context); }, waiting_for);
}

bool Transport::yield_when_idle() const {
  return impl_->yield_when_idle;
}

void Transport::Impl::throw_invalid_rank(int peer, const char* operation) const {
  throw Error(Errc::invalid_rank, rank,
              std::string(operation) + ": rank " + std::to_string(peer) +
                  " is outside the communicator of size " + std::to_string(size));
}

void Transport::Impl::announce_unmappable_peer() {
  if (target_progress_needed) return;
  target_progress_needed = true;
  if (target_progress_hook) target_progress_hook();
}

void Transport::barrier() {
  auto in_use = impl_->use_worker("barrier");
  detail::require_mpi_callable(rank_, "Transport::barrier");
  impl_->barrier();
}

void Transport::Impl::barrier() {
  MPI_Request request;
  detail::check_mpi(rank, "MPI_Ibarrier", MPI_Ibarrier(comm, &request));
  wait_mpi(std::span<MPI_Request>(&request, 1), "barrier");
}

void Transport::Impl::closing_barrier() {
  MPI_Request request;
  detail::check_mpi(rank, "MPI_Ibarrier", MPI_Ibarrier(comm, &request));
  int done = 0;
  progress_until(
      [&] {
        ucp_worker_progress(messaging_worker);
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        return done != 0;
      },
      "closing endpoints");
}

void Transport::Impl::wait_for_collective(void* impl, MPI_Request& request, const char* operation) {
  Impl& s = *static_cast<Impl*>(impl);
  auto in_use = s.use_worker(operation);
  s.wait_mpi(std::span<MPI_Request>(&request, 1), operation);
}

void Transport::Impl::wait_mpi(std::span<MPI_Request> requests, const char* waiting_for) {
  int done = 0;
  progress_until(
      [&] {
        for (int look = 0; look < kMpiLooksPerPoll && !done; ++look)
          MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                      MPI_STATUSES_IGNORE);
        return done != 0;
      },
      waiting_for);
}

void Transport::Impl::throw_peer_gone(const char* waiting_for) const {
  throw Error(Errc::transport, rank,
              std::string(waiting_for) + ": " + liveness.describe_gone() +
                  "; the runtime cannot go on without it");
}

void Transport::wait_mpi(MPI_Request& request, const char* waiting_for) {
  wait_mpi(std::span<MPI_Request>(&request, 1), waiting_for);
}

void Transport::wait_mpi(std::span<MPI_Request> requests, const char* waiting_for) {
  auto in_use = impl_->use_worker("wait_mpi");
  impl_->wait_mpi(requests, waiting_for);
}

void Transport::check_peers(const char* waiting_for) {
  impl_->check_peers(waiting_for);
}

}  // namespace mpidsm
