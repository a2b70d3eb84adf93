// Collectives on teams (sync, broadcast, collect, fcollect, alltoall,
// alltoalls and every reduction) over mpidsm's Team collectives, which run
// through node memory when a team shares a node and MPI's collectives
// otherwise; and the deprecated active-set forms, whose PE triplets name
// teams made once per triplet (pSync and pWrk are not needed).
#include <mpi.h>

#include <complex>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "library.hpp"

namespace mpidsm::shmem {
namespace {

template <class T>
struct Element {
  using type = T;
};
template <>
struct Element<double _Complex> {
  using type = std::complex<double>;
};
template <>
struct Element<float _Complex> {
  using type = std::complex<float>;
};
// The Team element a C element type travels as.
template <class T>
using As = typename Element<T>::type;

template <class T>
int broadcast(const char* f, shmem_team_t team, void* dest, const void* source, std::size_t n,
              int root) noexcept {
  return guarded(f, [&] {
    team_of(team, f).broadcast(static_cast<As<T>*>(dest), static_cast<const As<T>*>(source), n,
                               root);
    return 0;
  });
}
template <class T>
int collect(const char* f, shmem_team_t team, void* dest, const void* source,
            std::size_t n) noexcept {
  return guarded(f, [&] {
    team_of(team, f).collect(static_cast<As<T>*>(dest), static_cast<const As<T>*>(source), n);
    return 0;
  });
}
template <class T>
int fcollect(const char* f, shmem_team_t team, void* dest, const void* source,
             std::size_t n) noexcept {
  return guarded(f, [&] {
    team_of(team, f).fcollect(static_cast<As<T>*>(dest), static_cast<const As<T>*>(source), n);
    return 0;
  });
}
template <class T>
int alltoall(const char* f, shmem_team_t team, void* dest, const void* source,
             std::size_t n) noexcept {
  return guarded(f, [&] {
    team_of(team, f).alltoall(static_cast<As<T>*>(dest), static_cast<const As<T>*>(source), n);
    return 0;
  });
}
template <class T>
int alltoalls(const char* f, shmem_team_t team, void* dest, const void* source, std::ptrdiff_t dst,
              std::ptrdiff_t sst, std::size_t n) noexcept {
  return guarded(f, [&] {
    team_of(team, f).alltoalls(static_cast<As<T>*>(dest), static_cast<const As<T>*>(source), dst,
                               sst, n);
    return 0;
  });
}
template <class T>
int reduce(const char* f, ReduceOp op, shmem_team_t team, T* dest, const T* source,
           std::size_t n) noexcept {
  return guarded(f, [&] {
    team_of(team, f).reduce(op, reinterpret_cast<As<T>*>(dest),
                            reinterpret_cast<const As<T>*>(source), n);
    return 0;
  });
}

// The team of an active set, made on first use by its members alone
// (MPI_Comm_create_group is collective over the group only).
const Team& active_set(int start, int log_stride, int size, const char* f) {
  Library& lib = library(f);
  const int n_pes = lib.pgas.size(), me = lib.pgas.rank();
  const auto key = std::make_tuple(start, log_stride, size);
  if (auto found = lib.active_sets.find(key); found != lib.active_sets.end()) return found->second;
  const long long stride = log_stride >= 0 && log_stride < 31 ? 1LL << log_stride : -1;
  const long long last = start + (static_cast<long long>(size) - 1) * stride;
  if (start < 0 || size < 1 || stride < 0 || last >= n_pes)
    throw Error(Errc::invalid_argument, me,
                std::string(f) + ": the active set (PE_start " + std::to_string(start) +
                    ", logPE_stride " + std::to_string(log_stride) + ", PE_size " +
                    std::to_string(size) + ") leaves the " + std::to_string(n_pes) + " PEs");
  if (me < start || (me - start) % stride != 0 || me > last)
    throw Error(Errc::invalid_argument, me,
                std::string(f) + ": this PE is not in the active set (PE_start " +
                    std::to_string(start) + ", logPE_stride " + std::to_string(log_stride) +
                    ", PE_size " + std::to_string(size) + ")");
  std::vector<int> members(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i)
    members[static_cast<std::size_t>(i)] = static_cast<int>(start + i * stride);
  MPI_Group world = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_group(lib.runtime.comm(), &world);
  MPI_Group_incl(world, size, members.data(), &group);
  const int status = MPI_Comm_create_group(lib.runtime.comm(), group, 0, &comm);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  if (status != MPI_SUCCESS)
    throw Error(Errc::mpi, me, std::string(f) + ": MPI_Comm_create_group failed");
  Team team(lib.pgas, comm);
  MPI_Comm_free(&comm);
  return lib.active_sets.emplace(key, std::move(team)).first->second;
}

// OpenSHMEM 1.4's broadcast leaves the root's dest as it was: the root
// passes its source as dest, which a root only reads (Team::broadcast copies
// source to dest only when they differ), so nothing is allocated per call.
void broadcast_active(const char* f, std::size_t element, void* dest, const void* source,
                      std::size_t n, int root, int start, int log_stride, int size) noexcept {
  guarded(f, [&] {
    const Team& team = active_set(start, log_stride, size, f);
    void* into = team.rank() == root ? const_cast<void*>(source) : dest;
    team.broadcast(static_cast<unsigned char*>(into), static_cast<const unsigned char*>(source),
                   n * element, root);
  });
}

}  // namespace
}  // namespace mpidsm::shmem

using namespace mpidsm::shmem;
using mpidsm::ReduceOp;

#define MPIDSM_SHMEM_DEFINE_COLLECTIVES(TYPE, NAME)                                               \
  int shmem_##NAME##_broadcast(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems,  \
                               int PE_root) {                                                     \
    return broadcast<TYPE>("shmem_" #NAME "_broadcast", team, dest, source, nelems, PE_root);     \
  }                                                                                               \
  int shmem_##NAME##_collect(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems) {  \
    return collect<TYPE>("shmem_" #NAME "_collect", team, dest, source, nelems);                  \
  }                                                                                               \
  int shmem_##NAME##_fcollect(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems) { \
    return fcollect<TYPE>("shmem_" #NAME "_fcollect", team, dest, source, nelems);                \
  }                                                                                               \
  int shmem_##NAME##_alltoall(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems) { \
    return alltoall<TYPE>("shmem_" #NAME "_alltoall", team, dest, source, nelems);                \
  }                                                                                               \
  int shmem_##NAME##_alltoalls(shmem_team_t team, TYPE* dest, const TYPE* source, ptrdiff_t dst,  \
                               ptrdiff_t sst, size_t nelems) {                                    \
    return alltoalls<TYPE>("shmem_" #NAME "_alltoalls", team, dest, source, dst, sst, nelems);    \
  }

#define MPIDSM_SHMEM_DEFINE_REDUCE(TYPE, NAME, OP, REDUCE_OP)                                      \
  int shmem_##NAME##_##OP##_reduce(shmem_team_t team, TYPE* dest, const TYPE* source,              \
                                   size_t nreduce) {                                               \
    return reduce<TYPE>("shmem_" #NAME "_" #OP "_reduce", REDUCE_OP, team, dest, source, nreduce); \
  }
#define MPIDSM_SHMEM_DEFINE_BITWISE_REDUCE(TYPE, NAME)           \
  MPIDSM_SHMEM_DEFINE_REDUCE(TYPE, NAME, and, ReduceOp::bit_and) \
  MPIDSM_SHMEM_DEFINE_REDUCE(TYPE, NAME, or, ReduceOp::bit_or)   \
  MPIDSM_SHMEM_DEFINE_REDUCE(TYPE, NAME, xor, ReduceOp::bit_xor)
#define MPIDSM_SHMEM_DEFINE_MINMAX_REDUCE(TYPE, NAME)        \
  MPIDSM_SHMEM_DEFINE_REDUCE(TYPE, NAME, max, ReduceOp::max) \
  MPIDSM_SHMEM_DEFINE_REDUCE(TYPE, NAME, min, ReduceOp::min)
#define MPIDSM_SHMEM_DEFINE_ARITH_REDUCE(TYPE, NAME)         \
  MPIDSM_SHMEM_DEFINE_REDUCE(TYPE, NAME, sum, ReduceOp::sum) \
  MPIDSM_SHMEM_DEFINE_REDUCE(TYPE, NAME, prod, ReduceOp::prod)

#define MPIDSM_SHMEM_DEFINE_TO_ALL(TYPE, NAME, OP, REDUCE_OP)                                  \
  void shmem_##NAME##_##OP##_to_all(TYPE* dest, const TYPE* source, int nreduce, int PE_start, \
                                    int logPE_stride, int PE_size, TYPE*, long*) {             \
    const char* f = "shmem_" #NAME "_" #OP "_to_all";                                          \
    guarded(f, [&] {                                                                           \
      active_set(PE_start, logPE_stride, PE_size, f)                                           \
          .reduce(REDUCE_OP, reinterpret_cast<As<TYPE>*>(dest),                                \
                  reinterpret_cast<const As<TYPE>*>(source), static_cast<size_t>(nreduce));    \
    });                                                                                        \
  }
#define MPIDSM_SHMEM_DEFINE_TO_ALL_BITWISE(TYPE, NAME)           \
  MPIDSM_SHMEM_DEFINE_TO_ALL(TYPE, NAME, and, ReduceOp::bit_and) \
  MPIDSM_SHMEM_DEFINE_TO_ALL(TYPE, NAME, or, ReduceOp::bit_or)   \
  MPIDSM_SHMEM_DEFINE_TO_ALL(TYPE, NAME, xor, ReduceOp::bit_xor)
#define MPIDSM_SHMEM_DEFINE_TO_ALL_MINMAX(TYPE, NAME)        \
  MPIDSM_SHMEM_DEFINE_TO_ALL(TYPE, NAME, max, ReduceOp::max) \
  MPIDSM_SHMEM_DEFINE_TO_ALL(TYPE, NAME, min, ReduceOp::min)
#define MPIDSM_SHMEM_DEFINE_TO_ALL_ARITH(TYPE, NAME)         \
  MPIDSM_SHMEM_DEFINE_TO_ALL(TYPE, NAME, sum, ReduceOp::sum) \
  MPIDSM_SHMEM_DEFINE_TO_ALL(TYPE, NAME, prod, ReduceOp::prod)

#define MPIDSM_SHMEM_DEFINE_ACTIVE_SET(BITS)                                                       \
  void shmem_broadcast##BITS(void* dest, const void* source, size_t nelems, int PE_root,           \
                             int PE_start, int logPE_stride, int PE_size, long*) {                 \
    broadcast_active("shmem_broadcast" #BITS, BITS / 8, dest, source, nelems, PE_root, PE_start,   \
                     logPE_stride, PE_size);                                                       \
  }                                                                                                \
  void shmem_collect##BITS(void* dest, const void* source, size_t nelems, int PE_start,            \
                           int logPE_stride, int PE_size, long*) {                                 \
    const char* f = "shmem_collect" #BITS;                                                         \
    guarded(f, [&] {                                                                               \
      active_set(PE_start, logPE_stride, PE_size, f)                                               \
          .collect(static_cast<uint##BITS##_t*>(dest), static_cast<const uint##BITS##_t*>(source), \
                   nelems);                                                                        \
    });                                                                                            \
  }                                                                                                \
  void shmem_fcollect##BITS(void* dest, const void* source, size_t nelems, int PE_start,           \
                            int logPE_stride, int PE_size, long*) {                                \
    const char* f = "shmem_fcollect" #BITS;                                                        \
    guarded(f, [&] {                                                                               \
      active_set(PE_start, logPE_stride, PE_size, f)                                               \
          .fcollect(static_cast<uint##BITS##_t*>(dest),                                            \
                    static_cast<const uint##BITS##_t*>(source), nelems);                           \
    });                                                                                            \
  }                                                                                                \
  void shmem_alltoall##BITS(void* dest, const void* source, size_t nelems, int PE_start,           \
                            int logPE_stride, int PE_size, long*) {                                \
    const char* f = "shmem_alltoall" #BITS;                                                        \
    guarded(f, [&] {                                                                               \
      active_set(PE_start, logPE_stride, PE_size, f)                                               \
          .alltoall(static_cast<uint##BITS##_t*>(dest),                                            \
                    static_cast<const uint##BITS##_t*>(source), nelems);                           \
    });                                                                                            \
  }                                                                                                \
  void shmem_alltoalls##BITS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst,         \
                             size_t nelems, int PE_start, int logPE_stride, int PE_size, long*) {  \
    const char* f = "shmem_alltoalls" #BITS;                                                       \
    guarded(f, [&] {                                                                               \
      active_set(PE_start, logPE_stride, PE_size, f)                                               \
          .alltoalls(static_cast<uint##BITS##_t*>(dest),                                           \
                     static_cast<const uint##BITS##_t*>(source), dst, sst, nelems);                \
    });                                                                                            \
  }

extern "C" {

void shmem_barrier_all(void) {
  guarded("shmem_barrier_all", [] { pgas("shmem_barrier_all").barrier(); });
}
void shmem_sync_all(void) {
  guarded("shmem_sync_all", [] { team_of(SHMEM_TEAM_WORLD, "shmem_sync_all").sync(); });
}
int shmem_team_sync(shmem_team_t team) {
  return guarded("shmem_team_sync", [&] {
    team_of(team, "shmem_team_sync").sync();
    return 0;
  });
}
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long*) {
  guarded("shmem_barrier", [&] {
    const mpidsm::Team& team = active_set(PE_start, logPE_stride, PE_size, "shmem_barrier");
    pgas("shmem_barrier").quiet();
    team.sync();
  });
}
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long*) {
  guarded("shmem_sync", [&] { active_set(PE_start, logPE_stride, PE_size, "shmem_sync").sync(); });
}

MPIDSM_SHMEM_RMA_TYPES(MPIDSM_SHMEM_DEFINE_COLLECTIVES)
int shmem_broadcastmem(shmem_team_t team, void* dest, const void* source, size_t nelems,
                       int PE_root) {
  return broadcast<unsigned char>("shmem_broadcastmem", team, dest, source, nelems, PE_root);
}
int shmem_collectmem(shmem_team_t team, void* dest, const void* source, size_t nelems) {
  return collect<unsigned char>("shmem_collectmem", team, dest, source, nelems);
}
int shmem_fcollectmem(shmem_team_t team, void* dest, const void* source, size_t nelems) {
  return fcollect<unsigned char>("shmem_fcollectmem", team, dest, source, nelems);
}
int shmem_alltoallmem(shmem_team_t team, void* dest, const void* source, size_t nelems) {
  return alltoall<unsigned char>("shmem_alltoallmem", team, dest, source, nelems);
}
int shmem_alltoallsmem(shmem_team_t team, void* dest, const void* source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems) {
  return alltoalls<unsigned char>("shmem_alltoallsmem", team, dest, source, dst, sst, nelems);
}

MPIDSM_SHMEM_BITWISE_REDUCE_TYPES(MPIDSM_SHMEM_DEFINE_BITWISE_REDUCE)
MPIDSM_SHMEM_MINMAX_REDUCE_TYPES(MPIDSM_SHMEM_DEFINE_MINMAX_REDUCE)
MPIDSM_SHMEM_MINMAX_REDUCE_TYPES(MPIDSM_SHMEM_DEFINE_ARITH_REDUCE)
MPIDSM_SHMEM_COMPLEX_REDUCE_TYPES(MPIDSM_SHMEM_DEFINE_ARITH_REDUCE)

MPIDSM_SHMEM_DEFINE_ACTIVE_SET(32)
MPIDSM_SHMEM_DEFINE_ACTIVE_SET(64)
MPIDSM_SHMEM_TO_ALL_BITWISE_TYPES(MPIDSM_SHMEM_DEFINE_TO_ALL_BITWISE)
MPIDSM_SHMEM_TO_ALL_MINMAX_TYPES(MPIDSM_SHMEM_DEFINE_TO_ALL_MINMAX)
MPIDSM_SHMEM_TO_ALL_ARITH_TYPES(MPIDSM_SHMEM_DEFINE_TO_ALL_ARITH)

}  // extern "C"
