// Runtime creation over a communicator: checks MPI, reads the configuration,
// agrees on a runtime id, brings up the transport and, when needed, the
// progress thread.
#include "mpidsm/runtime.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

#include "common/mpi_exchange.hpp"
#include "common/startup_watch.hpp"
#include "transport/progress/mpi_progress_hook.hpp"
#include "transport/progress/progress_control.hpp"
#include "transport/progress/progress_thread.hpp"
#include "uncaught_errors.hpp"

extern char** environ;

namespace mpidsm {
namespace {

// Next runtime id this process would propose; ids are agreed with MPI_MAX so
// every rank of a communicator stamps the same id into its tags.
std::atomic<unsigned> next_runtime_id{1};

void require_mpi(MPI_Comm comm) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw Error(Errc::mpi, no_rank,
                std::string("MPI is ") + (finalized ? "already finalized" : "not initialized") +
                    ": create mpidsm::Runtime between MPI_Init and MPI_Finalize");
  if (comm == MPI_COMM_NULL)
    throw Error(Errc::invalid_argument, no_rank, "Runtime: communicator is MPI_COMM_NULL");
  detail::require_mpi_callable(no_rank, "Runtime creation");
}

// Reads the configuration on every rank and fails on all of them together
// when any rank's environment is bad.
Config agreed_config(MPI_Comm comm, int rank) {
  Config config;
  std::optional<Error> failure;
  try {
    config = Config::from_environment();
  } catch (const Error& e) {
    failure.emplace(e.code(), rank, e.message());
  }
  detail::throw_if_any_failed(comm, rank, failure, "reading the MPIDSM_* configuration");
  // Settings with a collective meaning: a difference would give wrong data,
  // a hang or a crash later, far from its cause.
  static constexpr const char* kCollective[] = {"MPIDSM_HEAP_SIZE", "MPIDSM_DSM_SIZE",
                                                "MPIDSM_LOCKS", "MPIDSM_DIRECT_ACCESS"};
  const long long values[] = {static_cast<long long>(config.heap_size),
                              static_cast<long long>(config.dsm_size),
                              static_cast<long long>(config.dsm_locks), config.direct_access};
  detail::require_same_values(comm, rank, kCollective, values, Errc::config,
                              "MPIDSM_* configuration");
  return config;
}

std::uint16_t agree_runtime_id(MPI_Comm comm, int rank) {
  unsigned proposal = next_runtime_id.load();
  unsigned agreed = 0;
  detail::allreduce(comm, rank, &proposal, &agreed, 1, MPI_UNSIGNED, MPI_MAX,
                    "Runtime construction (id)");
  next_runtime_id.store(agreed + 1);
  // Runtimes have separate UCX workers, so a wrapped id cannot cross-match;
  // the id only keeps tags self-describing.
  return static_cast<std::uint16_t>(agreed);
}

}  // namespace

struct Runtime::State {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = no_rank;
  int size = 0;
  std::uint16_t id = 0;
  Config config;
  std::unique_ptr<Transport> transport;
  // Started from a collective call (a region peers cannot map) or from the
  // first tagged message, on whichever thread makes it: hence the lock.
  mutable std::mutex progress_mutex;
  std::unique_ptr<detail::ProgressThread> progress;       // guarded by progress_mutex
  std::unique_ptr<detail::MpiProgressHook> mpi_progress;  // guarded by progress_mutex
  std::shared_ptr<const void> alive = std::make_shared<int>(0);

  ~State() {
    // The worker must outlive what drives it.
    mpi_progress.reset();
    progress.reset();
    transport.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }

  void start_progress_thread() {
    std::lock_guard<std::mutex> guard(progress_mutex);
    if (progress) return;
    progress = std::make_unique<detail::ProgressThread>(
        *transport, std::chrono::microseconds(config.progress_spin_us),
        std::chrono::microseconds(config.progress_slice_us));
    start_progress_in_mpi_locked();
  }
  // Without a thread (MPIDSM_PROGRESS_THREAD=off) too: a rank blocked in
  // MPI would otherwise leave its peers' operations on it waiting until it
  // calls mpidsm again. And for messages: a sender blocked in MPI_Barrier
  // with its isend's rendezvous in flight must move it on, as MPI would.
  void start_progress_in_mpi() {
    std::lock_guard<std::mutex> guard(progress_mutex);
    start_progress_in_mpi_locked();
  }
  void start_progress_in_mpi_locked() {
    if (!mpi_progress && config.progress_in_mpi)
      mpi_progress = std::make_unique<detail::MpiProgressHook>(*transport);
  }
};

Runtime::Runtime() noexcept = default;
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&& other) noexcept {
  if (this != &other) {
    finalize_reporting_errors();
    state_ = std::move(other.state_);
  }
  return *this;
}

void Runtime::finalize_reporting_errors() noexcept {
  if (!state_) return;
  try {
    finalize();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

Runtime::Runtime(MPI_Comm comm) {
  require_mpi(comm);
  auto state = std::make_unique<State>();
  MPI_Comm_rank(comm, &state->rank);
  MPI_Comm_size(comm, &state->size);
  // Until the transport watches its peers, a rank that dies is seen by the
  // start-up watch, so no collective here waits for it for ever.
  detail::StartupWatch watch(comm, state->rank);
  detail::startup_point("runtime-start");
  state->comm = watch.duplicate("Runtime construction (MPI_Comm_idup)");
  detail::startup_point("runtime-duplicated");
  state->config = agreed_config(state->comm, state->rank);
  if (state->config.terminate_handler) detail::report_uncaught_errors_in_one_line();
  state->id = agree_runtime_id(state->comm, state->rank);

  const ProgressMode mode = state->config.progress_thread;
  TransportOptions options;
  options.shareable = mode != ProgressMode::off;
  options.rndv_threshold = state->config.rndv_threshold;
  options.shm_eager_limit = state->config.shm_eager_limit;
  options.yield_when_idle = state->config.yield_when_idle;
  options.eager_connect = state->config.eager_connect;
  detail::startup_point("runtime-configured");
  state->transport = std::make_unique<Transport>(state->comm, state->id, options);
  if (mode == ProgressMode::on) state->start_progress_thread();
  State* raw = state.get();
  detail::ProgressControl progress(*state->transport);
  if (mode == ProgressMode::automatic)
    progress.on_target_progress_needed([raw] { raw->start_progress_thread(); });
  if (mode == ProgressMode::off)
    progress.on_target_progress_needed([raw] { raw->start_progress_in_mpi(); });
  progress.on_messages_need_progress([raw] { raw->start_progress_in_mpi(); });

  if (state->rank == 0)
    for (const auto& name : Config::unknown_variables(environ))
      std::fprintf(stderr, "mpidsm: warning: unknown variable %s is ignored\n", name.c_str());
  state_ = std::move(state);
}

Runtime::~Runtime() {
  finalize_reporting_errors();
}

void Runtime::finalize() {
  state();  // a finalize without a runtime is a usage error like any other call
  int finalized = 0;
  MPI_Finalized(&finalized);
  std::unique_ptr<State> state = std::move(state_);
  if (finalized)
    throw Error(Errc::mpi, state->rank,
                "Runtime finalized after MPI_Finalize: peers could not be waited for");
}

Runtime::State& Runtime::state() const {
  if (!state_)
    throw Error(Errc::not_initialized, no_rank,
                "mpidsm runtime used before creation or after finalize");
  return *state_;
}

int Runtime::rank() const {
  return state().rank;
}
int Runtime::size() const {
  return state().size;
}
MPI_Comm Runtime::comm() const {
  return state().comm;
}
std::uint16_t Runtime::id() const {
  return state().id;
}
const Config& Runtime::config() const {
  return state().config;
}
Transport& Runtime::transport() {
  return *state().transport;
}
bool Runtime::progress_thread_running() const {
  std::lock_guard<std::mutex> guard(state().progress_mutex);
  return state().progress != nullptr;
}
bool Runtime::progress_in_mpi() const {
  std::lock_guard<std::mutex> guard(state().progress_mutex);
  return state().mpi_progress != nullptr && state().mpi_progress->active();
}
std::weak_ptr<const void> Runtime::lifetime() const {
  return state().alive;
}

}  // namespace mpidsm
