// Teams and their collectives (OpenSHMEM's teams, over MPI communicators).
//
// A Team is a set of a Pgas's ranks that act together: it wraps a duplicate
// of an MPI communicator whose ranks all belong to the Pgas's runtime, so
// an MPI program's own communicators (a row of a process grid, the ranks of
// a node) are teams as they are. Collectives (sync, broadcast, collect,
// fcollect, alltoall, alltoalls, reductions) run through memory the members
// map when the team shares a node (contributions up to 8 KiB), else over
// MPI's collectives on that communicator; they are collective calls, with the
// threading rules of docs/threading.md, and every member must pass the same
// counts, root and operation (as in MPI and OpenSHMEM: a mismatch is not
// detected). Buffers may be symmetric or not.
#pragma once

#include "mpidsm/language.hpp"

#include <mpi.h>

#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "mpidsm/error.hpp"
#include "mpidsm/pgas.hpp"

namespace mpidsm {

namespace detail {
class NodeCollectives;
}

/// \addtogroup pgas
/// @{

/// The reductions of Team::reduce (OpenSHMEM's and, or, xor, max, min, sum, prod).
enum class ReduceOp { bit_and, bit_or, bit_xor, max, min, sum, prod };

/// The element types Team collectives move and reduce: integers, float,
/// double, long double and their complex forms (complex: sum and prod only).
template <class T>
concept TeamElement = std::is_arithmetic_v<T> || std::same_as<T, std::complex<float>> ||
    std::same_as<T, std::complex<double>>;

/// A set of ranks of one Pgas, for collectives. Movable, not copyable.
class Team {
 public:
  /// An empty team (valid() false): what split_strided gives non-members.
  Team();
  /// Collective over `comm`: a team of its ranks, which must all be ranks
  /// of `pgas`'s runtime (Errc::invalid_argument otherwise, on every rank).
  Team(Pgas& pgas, MPI_Comm comm);
  /// Every rank of `pgas` (OpenSHMEM's SHMEM_TEAM_WORLD); collective.
  static Team world(Pgas& pgas);
  /// The ranks of `pgas` on this node (OpenSHMEM's SHMEM_TEAM_SHARED); collective.
  static Team shared(Pgas& pgas);
  ~Team();  ///< frees the team's communicator (locally)
  /// Takes over `other`'s membership; `other` becomes empty.
  Team(Team&& other) noexcept;
  /// Frees this team's communicator, then takes over `other`'s.
  Team& operator=(Team&& other) noexcept;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  /// Whether this rank is a member.
  bool valid() const noexcept { return comm_ != MPI_COMM_NULL; }
  /// This rank's number in the team.
  int rank() const noexcept { return rank_; }
  /// Members.
  int size() const noexcept { return size_; }
  /// The team's communicator (a duplicate: the team's traffic never meets
  /// the application's).
  MPI_Comm comm() const noexcept { return comm_; }
  /// The Pgas rank of member `team_rank` (Errc::invalid_rank outside the team).
  int pgas_rank(int team_rank) const;
  /// Member `team_rank` of this team as a member of `other`, or -1 when it
  /// is not one (OpenSHMEM's shmem_team_translate_pe).
  int translate(int team_rank, const Team& other) const;
  /// Collective over this team: the members start, start+stride, ... (`size`
  /// of them, numbered in that order; a negative stride counts down, stride
  /// 0 names one member) form a new team; the other members get an empty
  /// team (OpenSHMEM's shmem_team_split_strided). Errc::invalid_argument when
  /// the triplet leaves the team.
  Team split_strided(int start, int stride, int size) const;

  /// Collective: every member has reached it (no completion of puts: that
  /// is Pgas::quiet or Pgas::barrier).
  void sync() const;
  /// Collective: `count` elements of root's `source` into every member's `dest`.
  template <TeamElement T>
  void broadcast(T* dest, const T* source, std::size_t count, int root) const {
    broadcast_bytes(dest, source, count * sizeof(T), root, "Team::broadcast");
  }
  /// Collective: every member's `count` elements, in member order, into
  /// every `dest` (room for count times size()) (OpenSHMEM's fcollect).
  template <TeamElement T>
  void fcollect(T* dest, const T* source, std::size_t count) const {
    fcollect_bytes(dest, source, count * sizeof(T), "Team::fcollect");
  }
  /// Collective: as fcollect, with counts that may differ per member
  /// (OpenSHMEM's collect); returns the elements gathered.
  template <TeamElement T>
  std::size_t collect(T* dest, const T* source, std::size_t count) const {
    return collect_bytes(dest, source, count * sizeof(T), "Team::collect") / sizeof(T);
  }
  /// Collective: block j of `source` (count elements) to member j, whose
  /// block i of `dest` receives it from member i.
  template <TeamElement T>
  void alltoall(T* dest, const T* source, std::size_t count) const {
    alltoall_bytes(dest, source, count * sizeof(T), "Team::alltoall");
  }
  /// Collective: as alltoall, element k of a block at stride `source_stride`
  /// (and `dest_stride`) elements (OpenSHMEM's alltoalls).
  template <TeamElement T>
  void alltoalls(T* dest, const T* source, std::ptrdiff_t dest_stride, std::ptrdiff_t source_stride,
                 std::size_t count) const {
    alltoalls_bytes(dest, source, dest_stride, source_stride, count, sizeof(T));
  }
  /// Collective: dest[i] = op over the members of source[i], on every member
  /// (dest may equal source).
  template <TeamElement T>
  void reduce(ReduceOp op, T* dest, const T* source, std::size_t count) const {
    reduce_raw(op, dest, source, count, element_type<T>(), kind_of<T>(), "Team::reduce");
  }

 private:
  enum class Kind { integer, floating, complex };
  template <class T>
  static constexpr Kind kind_of() {
    if constexpr (std::is_integral_v<T>)
      return Kind::integer;
    else if constexpr (std::is_floating_point_v<T>)
      return Kind::floating;
    else
      return Kind::complex;
  }
  template <class T>
  static MPI_Datatype element_type() {
    if constexpr (std::is_same_v<T, bool>)
      return MPI_CXX_BOOL;
    else if constexpr (std::is_integral_v<T>)
      return integer_type(sizeof(T), std::is_signed_v<T>);
    else if constexpr (std::is_same_v<T, float>)
      return MPI_FLOAT;
    else if constexpr (std::is_same_v<T, double>)
      return MPI_DOUBLE;
    else if constexpr (std::is_same_v<T, long double>)
      return MPI_LONG_DOUBLE;
    else if constexpr (std::is_same_v<T, std::complex<float>>)
      return MPI_C_FLOAT_COMPLEX;
    else
      return MPI_C_DOUBLE_COMPLEX;
  }
  static MPI_Datatype integer_type(std::size_t bytes, bool is_signed);

  // Takes `comm` (already this team's own, or MPI_COMM_NULL on a rank left
  // out), a communicator of the runtime's ranks. Collective over `comm`.
  Team(Runtime& runtime, MPI_Comm comm);
  void check_member(const char* operation) const;
  // check_member, and `team_rank` names a member.
  void check_member_rank(int team_rank, const char* operation) const;
  void broadcast_bytes(void* dest, const void* source, std::size_t bytes, int root,
                       const char* operation) const;
  void fcollect_bytes(void* dest, const void* source, std::size_t bytes,
                      const char* operation) const;
  std::size_t collect_bytes(void* dest, const void* source, std::size_t bytes,
                            const char* operation) const;
  void alltoall_bytes(void* dest, const void* source, std::size_t bytes,
                      const char* operation) const;
  void alltoalls_bytes(void* dest, const void* source, std::ptrdiff_t dest_stride,
                       std::ptrdiff_t source_stride, std::size_t count, std::size_t element) const;
  void reduce_raw(ReduceOp op, void* dest, const void* source, std::size_t count, MPI_Datatype type,
                  Kind kind, const char* operation) const;

  std::weak_ptr<const void> alive_;  // the runtime's Runtime::lifetime()
  Runtime* runtime_ = nullptr;       // used only while alive_ holds
  MPI_Comm world_ = MPI_COMM_NULL;   // the runtime's communicator: Pgas ranks
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = -1;
  int size_ = 0;
  // Collectives through shared memory when the team shares a node, else null
  // (MPI's collectives then).
  std::unique_ptr<detail::NodeCollectives> node_;
};

/// @}

}  // namespace mpidsm
