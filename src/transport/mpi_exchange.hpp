// MPI collectives the transport uses to bootstrap: exchanging variable-size
// blobs (worker addresses, packed rkeys) and agreeing on success so that a
// failure on one rank unwinds every rank instead of hanging the others.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {

// Every rank contributes `mine`; returns all contributions indexed by rank.
std::vector<std::vector<std::byte>> allgather_blobs(MPI_Comm comm, std::span<const std::byte> mine);

// Collective agreement on a step that may fail locally: when any rank holds a
// `local` error, every rank throws, the failing ranks their own error, the
// others one with the same code saying "<operation> failed on rank N: <its message>".
void throw_if_any_failed(MPI_Comm comm, int rank, const std::optional<Error>& local,
                         const std::string& operation);

// Collective check that every rank passed the same arguments: returns the
// element-wise smallest and largest of `mine` over all ranks (equal exactly
// when every rank passed the same values), with one MPI_Allreduce.
struct ValueRange {
  std::vector<long long> low, high;
  bool uniform() const { return low == high; }
};
ValueRange value_range(MPI_Comm comm, int rank, std::span<const long long> mine);

// Collective: every rank passes the same names and its own values; when some
// value differs between ranks, every rank throws Error(code) naming the first
// such name and which ranks hold which value ("<context>: MPIDSM_DSM_SIZE
// differs: 268435456 on ranks 0, 2; 536870912 on rank 1").
void require_same_values(MPI_Comm comm, int rank, std::span<const char* const> names,
                         std::span<const long long> values, Errc code, const std::string& context);

// Throws Error(Errc::mpi) naming `operation` when this thread may not call
// MPI now: after MPI_Finalize (a collective then cannot run; Open MPI would
// abort the process), or on a thread other than MPI's main thread when MPI
// provides less than MPI_THREAD_SERIALIZED (docs/threading.md).
void require_mpi_callable(int rank, const char* operation);

// Throws Error(Errc::mpi) naming the MPI call when rc is not MPI_SUCCESS.
void check_mpi(int rank, const char* call, int rc);

}  // namespace mpidsm::detail
