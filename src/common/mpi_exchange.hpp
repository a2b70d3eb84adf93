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

// Every collective of mpidsm is a non-blocking MPI collective whose request
// is waited for here, so that a peer's death ends the wait with an error
// instead of a hang (MPI itself would wait for ever). The wait is the one
// that a Transport attached to the communicator: it drives UCX and checks
// the peers' liveness. On a communicator with none (a Transport's own
// bootstrap, before it can serve), MPI_Wait.
struct CollectiveWait {
  void (*wait)(void* context, MPI_Request& request, const char* operation);
  void* context;
};
// Attaches `wait` to `comm` (an MPI attribute; dups do not inherit it) or,
// given nullptr, detaches it. `wait` must outlive the attachment.
void attach_collective_wait(MPI_Comm comm, const CollectiveWait* wait);
// Detaches `wait` from `comm` if it is still the one attached.
void detach_collective_wait(MPI_Comm comm, const CollectiveWait* wait);
// Attaches to `to` the wait attached to `from`, if any (a communicator made
// from a Transport's, whose collectives should wait the same way).
void share_collective_wait(MPI_Comm from, MPI_Comm to);
// Waits for `request`, a collective's on `comm`; `operation` names the call
// in errors ("Dsm::allocate: rank 2 is gone ...").
void wait_collective(MPI_Comm comm, int rank, MPI_Request& request, const char* operation);

// Blocking collectives made of the non-blocking ones and wait_collective.
// `operation` names mpidsm's call in errors; the MPI call's name is added.
void barrier(MPI_Comm comm, int rank, const char* operation);
void broadcast(MPI_Comm comm, int rank, void* buffer, int count, MPI_Datatype type, int root,
               const char* operation);
void allreduce(MPI_Comm comm, int rank, const void* mine, void* result, int count,
               MPI_Datatype type, MPI_Op op, const char* operation);
void allgather(MPI_Comm comm, int rank, const void* mine, void* all, int count, MPI_Datatype type,
               const char* operation);
void alltoall(MPI_Comm comm, int rank, const void* mine, void* all, int count, MPI_Datatype type,
              const char* operation);
void gather(MPI_Comm comm, int rank, const void* mine, void* all, int count, MPI_Datatype type,
            int root, const char* operation);

// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), which MPI has in no
// non-blocking form: the ranks first meet in a waited MPI_Ibarrier, so a
// rank that died before is named instead of waited for; only a death inside
// the split itself can still block.
MPI_Comm split_by_node(MPI_Comm comm, int rank, const char* operation);

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
ValueRange value_range(MPI_Comm comm, int rank, std::span<const long long> mine,
                       const char* operation);

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

// Ends the whole job with `status`: MPI_Abort on MPI_COMM_WORLD while MPI
// runs, this process alone (_Exit) before MPI_Init or after MPI_Finalize.
[[noreturn]] void abort_job(int status) noexcept;

// Throws Error(Errc::mpi) naming the MPI call when rc is not MPI_SUCCESS.
void check_mpi(int rank, const char* call, int rc);

}  // namespace mpidsm::detail
