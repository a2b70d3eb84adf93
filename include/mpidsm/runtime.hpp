// The runtime: mpidsm over one MPI communicator. Created collectively after
// the application's MPI_Init / MPI_Init_thread and finalized collectively
// before its MPI_Finalize; mpidsm never initialises or finalises MPI itself.
// Runtimes on disjoint communicators coexist and never see each other's
// traffic; a runtime may be created and destroyed repeatedly in one job.
#pragma once

#include "mpidsm/language.hpp"

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "mpidsm/config.hpp"
#include "mpidsm/error.hpp"
#include "mpidsm/transport.hpp"

namespace mpidsm {

/// \addtogroup runtime
/// @{

/// mpidsm on one MPI communicator: configuration, the UCX transport and progress.
class Runtime {
 public:
  /// An empty handle: every use is an Errc::not_initialized error.
  Runtime() noexcept;
  /// Collective over comm (duplicated internally, so mpidsm's collectives never
  /// mix with the application's). Reads the MPIDSM_* configuration.
  explicit Runtime(MPI_Comm comm);
  /// Finalizes if still active (collective: every rank must destroy it).
  ~Runtime();
  /// Takes over a runtime; the source becomes inactive.
  Runtime(Runtime&&) noexcept;
  /// Finalizes this runtime, then takes over `other`.
  Runtime& operator=(Runtime&&) noexcept;

  /// Collective: completes outstanding operations, stops the progress thread,
  /// releases UCX and the communicator. The handle is empty afterwards.
  void finalize();
  /// False once finalized or moved from.
  bool active() const noexcept { return state_ != nullptr; }

  /// This rank's number in the communicator.
  int rank() const;
  /// Ranks in the communicator.
  int size() const;
  /// The runtime's private duplicate of the communicator it was created on.
  MPI_Comm comm() const;
  /// The id stamped into this runtime's message tags.
  std::uint16_t id() const;
  /// The MPIDSM_* configuration, as the ranks agreed on it.
  const Config& config() const;
  /// The UCX transport the faces are built on.
  Transport& transport();
  /// Whether the progress thread has started (docs/progress.md).
  bool progress_thread_running() const;
  /// Whether blocking MPI calls of this rank drive mpidsm's progress too
  /// (MPIDSM_PROGRESS_IN_MPI, with Open MPI, once the progress thread runs,
  /// peers need this rank's progress, or it has sent or received a tagged
  /// message).
  bool progress_in_mpi() const;
  /// Expires when the runtime is finalized. Objects built on the runtime (Pgas,
  /// Dsm) keep it, refuse to be used once it expired, and then leave out the
  /// collective part of their destruction.
  std::weak_ptr<const void> lifetime() const;

 private:
  struct State;
  State& state() const;
  /// finalize() for destructors and move-assignment, which cannot throw: an
  /// error is printed instead.
  void finalize_reporting_errors() noexcept;
  std::unique_ptr<State> state_;
};

/// @}

}  // namespace mpidsm
