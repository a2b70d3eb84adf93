// Teams over MPI communicators and their collectives. A team that shares a
// node runs them through memory its members map (node_collectives.hpp),
// which measured a third to a half of MPI's time; any other team, and
// contributions too large for that memory, run as non-blocking MPI
// collectives waited for as the runtime's are. Either way a member's death
// ends the wait with an error naming it, not a hang.
#include "mpidsm/team.hpp"

#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/mpi_exchange.hpp"
#include "node_collectives.hpp"

namespace mpidsm {
namespace {

[[noreturn]] void refuse(int rank, const std::string& message) {
  throw Error(Errc::invalid_argument, rank, message);
}

int as_count(std::size_t count, int rank, const char* operation) {
  if (count > static_cast<std::size_t>(INT32_MAX))
    throw Error(Errc::out_of_range, rank,
                std::string(operation) + ": " + std::to_string(count) +
                    " bytes exceed what one MPI collective moves (2^31 - 1)");
  return static_cast<int>(count);
}

// The ranks of `from` in the group of `to` (MPI_UNDEFINED where absent).
std::vector<int> translate_ranks(MPI_Comm from, MPI_Comm to, std::span<const int> ranks) {
  MPI_Group from_group, to_group;
  MPI_Comm_group(from, &from_group);
  MPI_Comm_group(to, &to_group);
  std::vector<int> out(ranks.size(), MPI_UNDEFINED);
  MPI_Group_translate_ranks(from_group, static_cast<int>(ranks.size()), ranks.data(), to_group,
                            out.data());
  MPI_Group_free(&from_group);
  MPI_Group_free(&to_group);
  return out;
}

int world_rank(MPI_Comm world) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  return rank;
}

}  // namespace

Team::Team(Runtime& runtime, MPI_Comm comm)
    : alive_(runtime.lifetime()), runtime_(&runtime), world_(runtime.comm()), comm_(comm) {
  if (comm_ == MPI_COMM_NULL) return;
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  detail::share_collective_wait(world_, comm_);
  node_ = detail::NodeCollectives::create(comm_, rank_, runtime.config().direct_access,
                                          runtime.transport());
}

Team::Team(Pgas& pgas, MPI_Comm comm) {
  Runtime& runtime = pgas.runtime();
  const int me = pgas.rank();
  detail::require_mpi_callable(me, "Team");
  if (comm == MPI_COMM_NULL) refuse(me, "Team: the communicator is MPI_COMM_NULL");
  MPI_Comm own = MPI_COMM_NULL;
  detail::check_mpi(me, "MPI_Comm_dup in Team", MPI_Comm_dup(comm, &own));
  int members = 0;
  MPI_Comm_size(own, &members);
  std::vector<int> everyone(static_cast<std::size_t>(members));
  for (int r = 0; r < members; ++r) everyone[static_cast<std::size_t>(r)] = r;
  const std::vector<int> in_world = translate_ranks(own, runtime.comm(), everyone);
  std::optional<Error> outsider;
  for (int r = 0; r < members && !outsider; ++r)
    if (in_world[static_cast<std::size_t>(r)] == MPI_UNDEFINED)
      outsider.emplace(Errc::invalid_argument, me,
                       "Team: rank " + std::to_string(r) +
                           " of the communicator is not a rank of the Pgas's runtime");
  try {
    detail::throw_if_any_failed(own, me, outsider, "Team");
  } catch (const Error&) {
    MPI_Comm_free(&own);
    throw;
  }
  *this = Team(runtime, own);
}

Team Team::world(Pgas& pgas) {
  return Team(pgas, pgas.runtime().comm());
}

Team Team::shared(Pgas& pgas) {
  Runtime& runtime = pgas.runtime();
  detail::require_mpi_callable(pgas.rank(), "Team::shared");
  MPI_Comm node = MPI_COMM_NULL;
  detail::check_mpi(
      pgas.rank(), "MPI_Comm_split_type in Team::shared",
      MPI_Comm_split_type(runtime.comm(), MPI_COMM_TYPE_SHARED, pgas.rank(), MPI_INFO_NULL, &node));
  return Team(runtime, node);
}

Team::Team() = default;

Team::~Team() {
  if (comm_ == MPI_COMM_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

Team::Team(Team&& other) noexcept
    : alive_(std::move(other.alive_)),
      runtime_(std::exchange(other.runtime_, nullptr)),
      world_(std::exchange(other.world_, MPI_COMM_NULL)),
      comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      rank_(std::exchange(other.rank_, -1)),
      size_(std::exchange(other.size_, 0)),
      node_(std::move(other.node_)) {}

Team& Team::operator=(Team&& other) noexcept {
  if (this != &other) {
    Team old(std::move(*this));
    alive_ = std::move(other.alive_);
    runtime_ = std::exchange(other.runtime_, nullptr);
    world_ = std::exchange(other.world_, MPI_COMM_NULL);
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    rank_ = std::exchange(other.rank_, -1);
    size_ = std::exchange(other.size_, 0);
    node_ = std::move(other.node_);
  }
  return *this;
}

void Team::check_member(const char* operation) const {
  if (comm_ == MPI_COMM_NULL)
    throw Error(Errc::invalid_state, no_rank,
                std::string(operation) + ": this rank is not a member of the team");
  if (alive_.expired())
    throw Error(Errc::not_initialized, no_rank,
                std::string(operation) + ": the team's Runtime was finalized");
  detail::require_mpi_callable(world_rank(world_), operation);
}

void Team::check_member_rank(int team_rank, const char* operation) const {
  check_member(operation);
  if (team_rank < 0 || team_rank >= size_)
    throw Error(Errc::invalid_rank, world_rank(world_),
                std::string(operation) + ": rank " + std::to_string(team_rank) +
                    " is outside the team of " + std::to_string(size_));
}

int Team::pgas_rank(int team_rank) const {
  check_member_rank(team_rank, "Team::pgas_rank");
  const int ranks[] = {team_rank};
  return translate_ranks(comm_, world_, ranks)[0];
}

int Team::translate(int team_rank, const Team& other) const {
  check_member_rank(team_rank, "Team::translate");
  if (!other.valid()) return -1;
  const int ranks[] = {team_rank};
  const int there = translate_ranks(comm_, other.comm_, ranks)[0];
  return there == MPI_UNDEFINED ? -1 : there;
}

Team Team::split_strided(int start, int stride, int size) const {
  check_member("Team::split_strided");
  // Strides may be negative (members in reverse order) and 0 for one member.
  const long long last = start + static_cast<long long>(stride) * (size - 1);
  if (start < 0 || start >= size_ || size < 1 || last < 0 || last >= size_ ||
      (stride == 0 && size > 1))
    throw Error(Errc::invalid_argument, world_rank(world_),
                "Team::split_strided: start " + std::to_string(start) + ", stride " +
                    std::to_string(stride) + ", size " + std::to_string(size) +
                    " leave the team of " + std::to_string(size_));
  // This member's place in the new team, or -1.
  const long long offset = rank_ - start;
  long long place = -1;
  if (stride == 0)
    place = offset == 0 ? 0 : -1;
  else if (offset % stride == 0 && offset / stride >= 0 && offset / stride < size)
    place = offset / stride;
  MPI_Comm part = MPI_COMM_NULL;
  detail::check_mpi(
      world_rank(world_), "MPI_Comm_split in Team::split_strided",
      MPI_Comm_split(comm_, place >= 0 ? 0 : MPI_UNDEFINED, static_cast<int>(place), &part));
  return Team(*runtime_, part);
}

void Team::sync() const {
  check_member("Team::sync");
  if (node_)
    node_->sync("Team::sync");
  else
    detail::barrier(comm_, rank_, "Team::sync");
}

void Team::broadcast_bytes(void* dest, const void* source, std::size_t bytes, int root,
                           const char* operation) const {
  check_member(operation);
  if (root < 0 || root >= size_)
    throw Error(Errc::invalid_rank, rank_,
                std::string(operation) + ": root " + std::to_string(root) +
                    " is outside the team of " + std::to_string(size_));
  if (rank_ == root && dest != source && bytes > 0) std::memmove(dest, source, bytes);
  if (node_ && node_->fits(bytes)) return node_->broadcast(dest, source, bytes, root, operation);
  detail::broadcast(comm_, rank_, dest, as_count(bytes, rank_, operation), MPI_BYTE, root,
                    operation);
}

void Team::fcollect_bytes(void* dest, const void* source, std::size_t bytes,
                          const char* operation) const {
  check_member(operation);
  if (node_ && node_->fits(bytes)) return node_->fcollect(dest, source, bytes, operation);
  detail::allgather(comm_, rank_, source, dest, as_count(bytes, rank_, operation), MPI_BYTE,
                    operation);
}

std::size_t Team::collect_bytes(void* dest, const void* source, std::size_t bytes,
                                const char* operation) const {
  check_member(operation);
  const int mine = as_count(bytes, rank_, operation);
  std::vector<int> sizes(static_cast<std::size_t>(size_)), offsets(sizes.size());
  if (node_) {
    // The sizes travel through the node's memory, and the data too when it fits.
    std::vector<std::size_t> lengths(sizes.size());
    if (node_->collect(dest, source, bytes, lengths, operation)) {
      std::size_t total = 0;
      for (std::size_t length : lengths) total += length;
      return total;
    }
    for (std::size_t r = 0; r < sizes.size(); ++r) sizes[r] = static_cast<int>(lengths[r]);
  } else {
    detail::allgather(comm_, rank_, &mine, sizes.data(), 1, MPI_INT, operation);
  }
  std::size_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = as_count(total, rank_, operation);
    total += static_cast<std::size_t>(sizes[r]);
  }
  MPI_Request request;
  detail::check_mpi(rank_, "MPI_Iallgatherv in Team::collect",
                    MPI_Iallgatherv(source, mine, MPI_BYTE, dest, sizes.data(), offsets.data(),
                                    MPI_BYTE, comm_, &request));
  detail::wait_collective(comm_, rank_, request, operation);
  return total;
}

void Team::alltoall_bytes(void* dest, const void* source, std::size_t bytes,
                          const char* operation) const {
  check_member(operation);
  const int count = as_count(bytes, rank_, operation);
  if (node_ && node_->fits(bytes * static_cast<std::size_t>(size_)))
    return node_->alltoall(dest, source, bytes, operation);
  MPI_Request request;
  detail::check_mpi(rank_, "MPI_Ialltoall in Team::alltoall",
                    MPI_Ialltoall(source, count, MPI_BYTE, dest, count, MPI_BYTE, comm_, &request));
  detail::wait_collective(comm_, rank_, request, operation);
}

// Strided blocks travel as MPI vector types: no packing copy.
void Team::alltoalls_bytes(void* dest, const void* source, std::ptrdiff_t dest_stride,
                           std::ptrdiff_t source_stride, std::size_t count,
                           std::size_t element) const {
  const char* operation = "Team::alltoalls";
  check_member(operation);
  if (dest_stride < 1 || source_stride < 1)
    throw Error(Errc::invalid_argument, rank_,
                std::string(operation) + ": strides " + std::to_string(dest_stride) + " and " +
                    std::to_string(source_stride) + " must be at least 1");
  auto block_type = [&](std::ptrdiff_t stride) {
    MPI_Datatype element_type, vector, resized;
    MPI_Type_contiguous(as_count(element, rank_, operation), MPI_BYTE, &element_type);
    MPI_Type_vector(as_count(count, rank_, operation), 1, static_cast<int>(stride), element_type,
                    &vector);
    // Block j starts count*stride elements after block j-1.
    MPI_Type_create_resized(
        vector, 0, static_cast<MPI_Aint>(count * static_cast<std::size_t>(stride) * element),
        &resized);
    MPI_Type_commit(&resized);
    MPI_Type_free(&vector);
    MPI_Type_free(&element_type);
    return resized;
  };
  MPI_Datatype send = block_type(source_stride), receive = block_type(dest_stride);
  MPI_Request request;
  const int rc = MPI_Ialltoall(source, 1, send, dest, 1, receive, comm_, &request);
  MPI_Type_free(&send);
  MPI_Type_free(&receive);
  detail::check_mpi(rank_, "MPI_Ialltoall in Team::alltoalls", rc);
  detail::wait_collective(comm_, rank_, request, operation);
}

MPI_Datatype Team::integer_type(std::size_t bytes, bool is_signed) {
  switch (bytes) {
    case 1:
      return is_signed ? MPI_INT8_T : MPI_UINT8_T;
    case 2:
      return is_signed ? MPI_INT16_T : MPI_UINT16_T;
    case 4:
      return is_signed ? MPI_INT32_T : MPI_UINT32_T;
    default:
      return is_signed ? MPI_INT64_T : MPI_UINT64_T;
  }
}

void Team::reduce_raw(ReduceOp op, void* dest, const void* source, std::size_t count,
                      MPI_Datatype type, Kind kind, const char* operation) const {
  check_member(operation);
  MPI_Op mpi_op = MPI_OP_NULL;
  switch (op) {
    case ReduceOp::bit_and:
      mpi_op = MPI_BAND;
      break;
    case ReduceOp::bit_or:
      mpi_op = MPI_BOR;
      break;
    case ReduceOp::bit_xor:
      mpi_op = MPI_BXOR;
      break;
    case ReduceOp::max:
      mpi_op = MPI_MAX;
      break;
    case ReduceOp::min:
      mpi_op = MPI_MIN;
      break;
    case ReduceOp::sum:
      mpi_op = MPI_SUM;
      break;
    case ReduceOp::prod:
      mpi_op = MPI_PROD;
      break;
  }
  const bool bitwise = op == ReduceOp::bit_and || op == ReduceOp::bit_or || op == ReduceOp::bit_xor;
  const bool ordered = op == ReduceOp::max || op == ReduceOp::min;
  if (mpi_op == MPI_OP_NULL || (bitwise && kind != Kind::integer) ||
      (ordered && kind == Kind::complex))
    throw Error(Errc::invalid_argument, rank_,
                std::string(operation) + ": operation " + std::to_string(static_cast<int>(op)) +
                    " does not apply to this element type");
  const int n = as_count(count, rank_, operation);
  int element = 0;
  MPI_Type_size(type, &element);
  if (node_ && node_->fits(count * static_cast<std::size_t>(element)))
    return node_->reduce(dest, source, n, type, mpi_op, operation);
  // MPI receives into a buffer of its own, copied to dest after: dest may
  // be source.
  detail::allreduce(comm_, rank_, source, dest, n, type, mpi_op, operation);
}

}  // namespace mpidsm
