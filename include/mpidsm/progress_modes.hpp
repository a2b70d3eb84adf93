// The progress and waiting modes a Transport is set up with: whether a
// thread drives UCX for remote ranks, and whether waits yield the CPU. The
// transport's own settings, apart from the Runtime's configuration
// (config.hpp reads them from MPIDSM_PROGRESS_THREAD and
// MPIDSM_YIELD_WHEN_IDLE), so the transport's header needs nothing of the
// layers above it.
#pragma once

#include "mpidsm/language.hpp"

namespace mpidsm {

/// \addtogroup transport
/// @{

/// Whether a thread drives UCX progress on behalf of remote ranks' operations.
enum class ProgressMode {
  automatic,  ///< started when some peer's memory is not reachable by load/store
  on,         ///< always started
  off,        ///< never started: remote ranks' emulated RMA waits for this rank's calls
};

/// Whether blocking waits yield the CPU after a short run of idle polls (as
/// Open MPI's mpi_yield_when_idle does) instead of spinning.
enum class YieldMode {
  automatic,  ///< when this node runs more ranks than it has CPUs
  on,         ///< always: a loaded node, or hosts that share cores
  off,        ///< never: spin for the lowest latency
};

/// "auto", "on" or "off", as MPIDSM_PROGRESS_THREAD spells it.
const char* to_string(ProgressMode mode);
/// "auto", "on" or "off", as MPIDSM_YIELD_WHEN_IDLE spells it.
const char* to_string(YieldMode mode);

/// @}

}  // namespace mpidsm
