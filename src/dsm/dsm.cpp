// mpidsm::Dsm: the public face of the engine.
#include "mpidsm/dsm.hpp"

#include <unistd.h>

#include <optional>

#include "common/mpi_exchange.hpp"
#include "common/startup_watch.hpp"
#include "dsm/engine/engine.hpp"
#include "dsm/protocol/diff_kernels.hpp"
#include "footprint.hpp"

namespace mpidsm {

Dsm::Dsm(Runtime& runtime) : Dsm(runtime, DsmSettings::from(runtime.config())) {}
namespace {

// Settings valid on every rank and the same where they must be (the region
// and the lock table are collective; each rank's cache and prefetch are its
// own), or an error on every rank.
const DsmSettings& validated(const DsmSettings& settings, Runtime& runtime) {
  detail::startup_point("dsm-start");
  const int rank = runtime.rank();
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::optional<Error> bad;
  if (settings.size == 0 || settings.size % page != 0)
    bad.emplace(Errc::invalid_argument, rank,
                "Dsm: region size " + std::to_string(settings.size) +
                    " is not a positive multiple of the page size " + std::to_string(page));
  else if (settings.cache_pages == 0 || settings.locks == 0)
    bad.emplace(Errc::invalid_argument, rank, "Dsm: cache_pages and locks must be at least 1");
  else if (!detail::find_diff_kernel(settings.diff_kernel))
    bad.emplace(Errc::invalid_argument, rank,
                std::string("Dsm: DsmSettings::diff_kernel (MPIDSM_DIFF_KERNEL) ") +
                    to_string(settings.diff_kernel) +
                    " needs instructions this CPU lacks; it runs " +
                    detail::kernels_this_cpu_runs());
  detail::throw_if_any_failed(runtime.comm(), rank, bad, "Dsm");
  static constexpr const char* kNames[] = {"DsmSettings::size (MPIDSM_DSM_SIZE)",
                                           "DsmSettings::locks (MPIDSM_LOCKS)"};
  const long long values[] = {static_cast<long long>(settings.size),
                              static_cast<long long>(settings.locks)};
  detail::require_same_values(runtime.comm(), rank, kNames, values, Errc::collective_mismatch,
                              "Dsm");
  detail::throw_if_any_failed(
      runtime.comm(), rank, detail::refuse_unservable(settings, rank, runtime.size(), page), "Dsm");
  return settings;
}

// Errors of the layers below (a transport call: "add to rank 1: ...") name
// the Dsm call the application made, as every other error of it does.
template <class F>
void as_call(const char* operation, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.message().rfind("Dsm::", 0) == 0) throw;
    throw Error(e.code(), e.rank(), std::string("Dsm::") + operation + ": " + e.message());
  }
}

}  // namespace

Dsm::Dsm(Runtime& runtime, const DsmSettings& settings)
    : engine_(std::make_unique<Engine>(runtime, validated(settings, runtime))),
      alive_(runtime.lifetime()) {}

// Collective while the runtime and MPI are up. After Runtime::finalize UCX
// has released the registered memory already and only this process's own
// mappings are left to undo; after MPI_Finalize nobody can be waited for.
Dsm::~Dsm() {
  if (!engine_) return;
  if (alive_.expired()) {
    engine_->abandon_transport();
    return;
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  try {
    engine_->barrier();  // nothing written is lost
    if (engine_->stats_at_exit()) engine_->print_stats(stderr);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

Dsm::Engine& Dsm::live(const char* operation) const {
  if (alive_.expired()) [[unlikely]]
    throw Error(Errc::not_initialized, engine_->rank(),
                std::string("Dsm::") + operation + ": the Dsm's Runtime was finalized");
  return *engine_;
}

void* Dsm::allocate_bytes(std::size_t bytes, const Placement& placement, Coherence coherence) {
  detail::require_mpi_callable(engine_->rank(), "Dsm::allocate");
  return live("allocate").allocate(bytes, placement, coherence);
}
void Dsm::free(void* address) {
  detail::require_mpi_callable(engine_->rank(), "Dsm::free");
  live("free").free(address);
}
void Dsm::barrier() {
  detail::require_mpi_callable(engine_->rank(), "Dsm::barrier");
  as_call("barrier", [&] { live("barrier").barrier(); });
}
void Dsm::sync_with(std::span<const int> peers) {
  as_call("sync_with", [&] { live("sync_with").sync_with(peers); });
}
void Dsm::lock(std::size_t id) {
  as_call("lock", [&] { live("lock").lock(id, false); });
}
void Dsm::lock_among_threads(std::size_t id) {
  as_call("lock_among_threads", [&] { live("lock_among_threads").lock(id, true); });
}
void Dsm::unlock(std::size_t id) {
  as_call("unlock", [&] { live("unlock").unlock(id); });
}
void Dsm::set_flag(std::size_t id) {
  as_call("set_flag", [&] { live("set_flag").set_flag(id); });
}
void Dsm::wait_flag(std::size_t id) {
  as_call("wait_flag", [&] { live("wait_flag").wait_flag(id); });
}
void Dsm::reset_flag(std::size_t id) {
  as_call("reset_flag", [&] { live("reset_flag").reset_flag(id); });
}
std::size_t Dsm::lock_count() const {
  return engine_->lock_count();
}
void Dsm::prefetch(const void* address, std::size_t bytes) {
  as_call("prefetch", [&] { live("prefetch").prefetch(address, bytes); });
}
DsmAccess Dsm::make_accessible(const void* address, std::size_t bytes, Access access) {
  if (bytes == 0) return {};
  Engine& engine = live("make_accessible");
  engine.check_in_region(address, bytes, "Dsm::make_accessible");
  engine.pin(address, bytes, access == Access::read_write);
  return DsmAccess(address, bytes);
}

DsmAccess& DsmAccess::operator=(DsmAccess&& other) noexcept {
  if (this != &other) {
    release();
    address_ = std::exchange(other.address_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

// Through the fault ranges, not the engine: a no-op once the Dsm is gone.
void DsmAccess::release() noexcept {
  if (bytes_ != 0) detail::unpin(address_, bytes_);
  address_ = nullptr;
  bytes_ = 0;
}

void* Dsm::base() const {
  return engine_->base();
}
std::size_t Dsm::size() const {
  return engine_->size();
}
std::size_t Dsm::page_size() const {
  return engine_->page_size();
}
int Dsm::home_of(const void* address) const {
  return live("home_of").home_of(address);
}
Coherence Dsm::coherence_of(const void* address) const {
  return live("coherence_of").coherence_of(address);
}
Coherence Dsm::default_coherence() const {
  return engine_->default_coherence();
}
void Dsm::set_home_migration(HomeMigration mode) {
  live("set_home_migration").set_home_migration(mode);
}
DsmStats Dsm::stats() const {
  return live("stats").stats();
}
void Dsm::reset_stats() {
  detail::require_mpi_callable(engine_->rank(), "Dsm::reset_stats");
  live("reset_stats").reset_stats();
}
void Dsm::print_stats(std::FILE* out) const {
  detail::require_mpi_callable(engine_->rank(), "Dsm::print_stats");
  live("print_stats").print_stats(out);
}
int Dsm::rank() const {
  return engine_->rank();
}

}  // namespace mpidsm
