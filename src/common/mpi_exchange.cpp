#include "mpi_exchange.hpp"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {

void abort_job(int status) noexcept {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

void require_mpi_callable(int rank, const char* operation) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    throw Error(Errc::mpi, rank,
                std::string(operation) + " after MPI_Finalize: collective operations need MPI");
  int provided = MPI_THREAD_SINGLE, main_thread = 1;
  MPI_Query_thread(&provided);
  if (provided >= MPI_THREAD_SERIALIZED) return;
  MPI_Is_thread_main(&main_thread);
  if (!main_thread)
    throw Error(Errc::mpi, rank,
                std::string(operation) +
                    " on a thread other than MPI's main thread, but MPI "
                    "provides only " +
                    (provided == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" : "MPI_THREAD_FUNNELED") +
                    ": mpidsm's collective calls call MPI from the calling thread; make them on "
                    "the thread that initialised MPI, or initialise MPI with MPI_Init_thread and "
                    "MPI_THREAD_SERIALIZED or above");
}

void check_mpi(int rank, const char* call, int rc) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(Errc::mpi, rank, std::string(call) + " failed: " + std::string(text, length));
}

namespace {

// The attribute key of CollectiveWait, created on first use. (MPI keeps
// keyvals until MPI_Finalize; one per process is all mpidsm needs.)
int collective_wait_key() {
  static const int key = [] {
    int created = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &created, nullptr);
    return created;
  }();
  return key;
}

// "Dsm::allocate (MPI_Iallreduce)": which MPI call of which of mpidsm's.
std::string call_of(const char* operation, const char* call) {
  return std::string(operation) + " (" + call + ")";
}

std::size_t ranks_of(MPI_Comm comm) {
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  return static_cast<std::size_t>(ranks);
}

std::size_t bytes_of(MPI_Datatype type, std::size_t count) {
  int size = 0;
  MPI_Type_size(type, &size);
  return static_cast<std::size_t>(size) * count;
}

// Starts a non-blocking collective that receives into scratch memory of
// `bytes` (`start(scratch, request)`, holding `in` first when given), waits
// for it, and copies the result to `out`. A wait that throws (a peer died)
// abandons the collective, and MPI may still write into its receive buffer
// as live peers' parts arrive, in any later MPI call: the scratch is then
// left to MPI for good, never freed, so no caller's memory (a stack that has
// moved on) is written.
template <class Start>
void collect(MPI_Comm comm, int rank, const void* in, void* out, std::size_t bytes,
             const char* operation, const char* call, Start&& start) {
  auto scratch = std::make_unique<std::byte[]>(bytes);
  if (in) std::memcpy(scratch.get(), in, bytes);
  MPI_Request request;
  check_mpi(rank, call_of(operation, call).c_str(), start(scratch.get(), request));
  try {
    wait_collective(comm, rank, request, operation);
  } catch (const Error&) {
    static_cast<void>(scratch.release());
    throw;
  }
  if (out && bytes) std::memcpy(out, scratch.get(), bytes);
}

}  // namespace

void attach_collective_wait(MPI_Comm comm, const CollectiveWait* wait) {
  if (wait)
    MPI_Comm_set_attr(comm, collective_wait_key(), const_cast<CollectiveWait*>(wait));
  else
    MPI_Comm_delete_attr(comm, collective_wait_key());
}

void detach_collective_wait(MPI_Comm comm, const CollectiveWait* wait) {
  void* attached = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, collective_wait_key(), &attached, &found);
  if (found && attached == wait) MPI_Comm_delete_attr(comm, collective_wait_key());
}

void share_collective_wait(MPI_Comm from, MPI_Comm to) {
  void* attached = nullptr;
  int found = 0;
  MPI_Comm_get_attr(from, collective_wait_key(), &attached, &found);
  if (found) MPI_Comm_set_attr(to, collective_wait_key(), attached);
}

void wait_collective(MPI_Comm comm, int rank, MPI_Request& request, const char* operation) {
  void* attached = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, collective_wait_key(), &attached, &found);
  if (found) {
    const auto* wait = static_cast<const CollectiveWait*>(attached);
    wait->wait(wait->context, request, operation);
  } else {
    check_mpi(rank, operation, MPI_Wait(&request, MPI_STATUS_IGNORE));
  }
}

void barrier(MPI_Comm comm, int rank, const char* operation) {
  MPI_Request request;
  check_mpi(rank, call_of(operation, "MPI_Ibarrier").c_str(), MPI_Ibarrier(comm, &request));
  wait_collective(comm, rank, request, operation);
}

MPI_Comm split_by_node(MPI_Comm comm, int rank, const char* operation) {
  barrier(comm, rank, operation);
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(rank, call_of(operation, "MPI_Comm_split_type").c_str(),
            MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  return node;
}

void broadcast(MPI_Comm comm, int rank, void* buffer, int count, MPI_Datatype type, int root,
               const char* operation) {
  collect(comm, rank, buffer, buffer, bytes_of(type, static_cast<std::size_t>(count)), operation,
          "MPI_Ibcast", [&](void* scratch, MPI_Request& request) {
            return MPI_Ibcast(scratch, count, type, root, comm, &request);
          });
}

void allreduce(MPI_Comm comm, int rank, const void* mine, void* result, int count,
               MPI_Datatype type, MPI_Op op, const char* operation) {
  collect(comm, rank, nullptr, result, bytes_of(type, static_cast<std::size_t>(count)), operation,
          "MPI_Iallreduce", [&](void* scratch, MPI_Request& request) {
            return MPI_Iallreduce(mine, scratch, count, type, op, comm, &request);
          });
}

void allgather(MPI_Comm comm, int rank, const void* mine, void* all, int count, MPI_Datatype type,
               const char* operation) {
  collect(comm, rank, nullptr, all,
          bytes_of(type, ranks_of(comm) * static_cast<std::size_t>(count)), operation,
          "MPI_Iallgather", [&](void* scratch, MPI_Request& request) {
            return MPI_Iallgather(mine, count, type, scratch, count, type, comm, &request);
          });
}

void alltoall(MPI_Comm comm, int rank, const void* mine, void* all, int count, MPI_Datatype type,
              const char* operation) {
  collect(comm, rank, nullptr, all,
          bytes_of(type, static_cast<std::size_t>(count) * ranks_of(comm)), operation,
          "MPI_Ialltoall", [&](void* scratch, MPI_Request& request) {
            return MPI_Ialltoall(mine, count, type, scratch, count, type, comm, &request);
          });
}

void gather(MPI_Comm comm, int rank, const void* mine, void* all, int count, MPI_Datatype type,
            int root, const char* operation) {
  // Only the root receives.
  const std::size_t bytes =
      rank == root ? bytes_of(type, ranks_of(comm) * static_cast<std::size_t>(count)) : 0;
  collect(comm, rank, nullptr, all, bytes, operation, "MPI_Igather",
          [&](void* scratch, MPI_Request& request) {
            return MPI_Igather(mine, count, type, scratch, count, type, root, comm, &request);
          });
}

std::vector<std::vector<std::byte>> allgather_blobs(MPI_Comm comm,
                                                    std::span<const std::byte> mine) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (mine.size() > INT_MAX)
    throw Error(Errc::invalid_argument, rank,
                "bootstrap blob of " + std::to_string(mine.size()) + " bytes too large");
  int my_length = static_cast<int>(mine.size());
  std::vector<int> lengths(size), displacements(size);
  allgather(comm, rank, &my_length, lengths.data(), 1, MPI_INT, "bootstrap exchange");
  long total = 0;
  for (int r = 0; r < size; ++r) {
    displacements[r] = static_cast<int>(total);
    total += lengths[r];
  }
  if (total > INT_MAX)
    throw Error(
        Errc::invalid_argument, rank,
        "bootstrap exchange of " + std::to_string(total) + " bytes exceeds MPI's int counts");
  std::vector<std::byte> all(static_cast<std::size_t>(total));
  collect(comm, rank, nullptr, all.data(), all.size(), "bootstrap exchange", "MPI_Iallgatherv",
          [&](void* scratch, MPI_Request& request) {
            return MPI_Iallgatherv(mine.data(), my_length, MPI_BYTE, scratch, lengths.data(),
                                   displacements.data(), MPI_BYTE, comm, &request);
          });
  std::vector<std::vector<std::byte>> blobs(size);
  for (int r = 0; r < size; ++r)
    blobs[r].assign(all.begin() + displacements[r], all.begin() + displacements[r] + lengths[r]);
  return blobs;
}

namespace {

// The lowest rank whose `ok` is false, or -1 when all are true.
int first_failed_rank(MPI_Comm comm, int rank, bool ok, const char* operation) {
  int mine = ok ? INT_MAX : rank;
  int lowest = INT_MAX;
  allreduce(comm, rank, &mine, &lowest, 1, MPI_INT, MPI_MIN, operation);
  return lowest == INT_MAX ? -1 : lowest;
}

}  // namespace

void throw_if_any_failed(MPI_Comm comm, int rank, const std::optional<Error>& local,
                         const std::string& operation) {
  int failed = first_failed_rank(comm, rank, !local.has_value(), operation.c_str());
  if (failed < 0) return;
  // The failing rank's code and message reach every rank, so each reports the cause.
  int head[2] = {local ? static_cast<int>(local->code()) : 0,
                 local ? static_cast<int>(local->message().size()) : 0};
  broadcast(comm, rank, head, 2, MPI_INT, failed, operation.c_str());
  std::string message =
      local ? local->message() : std::string(static_cast<std::size_t>(head[1]), ' ');
  broadcast(comm, rank, message.data(), head[1], MPI_CHAR, failed, operation.c_str());
  if (local) throw *local;
  throw Error(static_cast<Errc>(head[0]), rank,
              operation + " failed on rank " + std::to_string(failed) + ": " + message);
}

void require_same_values(MPI_Comm comm, int rank, std::span<const char* const> names,
                         std::span<const long long> values, Errc code, const std::string& context) {
  const ValueRange range = value_range(comm, rank, values, context.c_str());
  std::size_t differing = 0;
  while (differing < values.size() && range.low[differing] == range.high[differing]) ++differing;
  if (differing == values.size()) return;
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  std::vector<long long> all(static_cast<std::size_t>(ranks));
  allgather(comm, rank, &values[differing], all.data(), 1, MPI_LONG_LONG, context.c_str());
  // Each distinct value with the ranks holding it, in rank order.
  std::string detail;
  std::vector<bool> told(all.size(), false);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (told[r]) continue;
    std::string holders;
    std::size_t count = 0;
    for (std::size_t q = r; q < all.size(); ++q)
      if (!told[q] && all[q] == all[r]) {
        told[q] = true;
        if (++count <= 8) holders += (holders.empty() ? "" : ", ") + std::to_string(q);
      }
    if (count > 8) holders += " and " + std::to_string(count - 8) + " more";
    detail += (detail.empty() ? "" : "; ") + std::to_string(all[r]) + " on rank" +
              (count > 1 ? "s " : " ") + holders;
  }
  throw Error(code, rank,
              context + ": " + names[differing] + " differs between ranks: " + detail +
                  " (it must be the same on every rank)");
}

ValueRange value_range(MPI_Comm comm, int rank, std::span<const long long> mine,
                       const char* operation) {
  // The maximum of -x is minus the minimum of x: one reduction gives both.
  const std::size_t n = mine.size();
  std::vector<long long> both(2 * n), reduced(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    both[i] = mine[i];
    both[n + i] = -mine[i];
  }
  allreduce(comm, rank, both.data(), reduced.data(), static_cast<int>(2 * n), MPI_LONG_LONG,
            MPI_MAX, operation);
  ValueRange range;
  range.high.assign(reduced.begin(), reduced.begin() + static_cast<std::ptrdiff_t>(n));
  for (std::size_t i = 0; i < n; ++i) range.low.push_back(-reduced[n + i]);
  return range;
}

}  // namespace mpidsm::detail
