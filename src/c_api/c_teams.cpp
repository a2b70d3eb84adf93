// The C API's teams and their collectives: thin calls into mpidsm::Team.
#include <cstddef>
#include <cstdint>
#include <string>

#include "c_boundary.hpp"

using mpidsm::c_api::create;
using mpidsm::c_api::guarded;
using mpidsm::c_api::pgas_of;
using mpidsm::c_api::require;
using mpidsm::c_api::take;
using mpidsm::c_api::with_element_type;

namespace {

mpidsm::Team& team_of(mpidsm_team_t team, const char* function) {
  return require(team, function, "team").team;
}

mpidsm::ReduceOp reduce_op_of(int op, const char* function) {
  if (op < MPIDSM_REDUCE_AND || op > MPIDSM_REDUCE_PROD)
    throw mpidsm::Error(
        mpidsm::Errc::invalid_argument, mpidsm::no_rank,
        std::string(function) + ": op " + std::to_string(op) + " is not an mpidsm_reduce_op_t");
  return static_cast<mpidsm::ReduceOp>(op);  // the same order
}

template <class T>
mpidsm_status_t reduce(const char* function, mpidsm_team_t team, int op, T* dest, const T* src,
                       std::size_t count) {
  return guarded(function, [&] {
    team_of(team, function).reduce(reduce_op_of(op, function), dest, src, count);
  });
}

}  // namespace

static_assert(static_cast<int>(mpidsm::ReduceOp::prod) == MPIDSM_REDUCE_PROD);

extern "C" {

mpidsm_status_t mpidsm_team_world(mpidsm_pgas_t pgas, mpidsm_team_t* team) {
  return guarded("mpidsm_team_world", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_team_world: pgas");
    create(require(team, "mpidsm_team_world: team"), [&] { return mpidsm::Team::world(p); });
  });
}

mpidsm_status_t mpidsm_team_shared(mpidsm_pgas_t pgas, mpidsm_team_t* team) {
  return guarded("mpidsm_team_shared", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_team_shared: pgas");
    create(require(team, "mpidsm_team_shared: team"), [&] { return mpidsm::Team::shared(p); });
  });
}

mpidsm_status_t mpidsm_team_create(mpidsm_pgas_t pgas, MPI_Comm comm, mpidsm_team_t* team) {
  return guarded("mpidsm_team_create", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_team_create: pgas");
    create(require(team, "mpidsm_team_create: team"), [&] { return mpidsm::Team(p, comm); });
  });
}

mpidsm_status_t mpidsm_team_split_strided(mpidsm_team_t parent, int start, int stride, int size,
                                          mpidsm_team_t* team) {
  return guarded("mpidsm_team_split_strided", [&] {
    mpidsm_team_t& out = require(team, "mpidsm_team_split_strided: team");
    out = nullptr;
    mpidsm::Team part =
        team_of(parent, "mpidsm_team_split_strided").split_strided(start, stride, size);
    if (part.valid()) create(out, [&] { return std::move(part); });
  });
}

mpidsm_status_t mpidsm_team_destroy(mpidsm_team_t* team) {
  return guarded("mpidsm_team_destroy", [&] { take(require(team, "mpidsm_team_destroy: team")); });
}

mpidsm_status_t mpidsm_team_rank(mpidsm_team_t team, int* rank) {
  return guarded("mpidsm_team_rank", [&] {
    require(rank, "mpidsm_team_rank: rank") = team_of(team, "mpidsm_team_rank").rank();
  });
}

mpidsm_status_t mpidsm_team_size(mpidsm_team_t team, int* size) {
  return guarded("mpidsm_team_size", [&] {
    require(size, "mpidsm_team_size: size") = team_of(team, "mpidsm_team_size").size();
  });
}

mpidsm_status_t mpidsm_team_translate(mpidsm_team_t team, int team_rank, mpidsm_team_t other,
                                      int* other_rank) {
  return guarded("mpidsm_team_translate", [&] {
    int& out = require(other_rank, "mpidsm_team_translate: other_rank");
    const mpidsm::Team& from = team_of(team, "mpidsm_team_translate");
    out = other ? from.translate(team_rank, other->team) : -1;
  });
}

mpidsm_status_t mpidsm_team_sync(mpidsm_team_t team) {
  return guarded("mpidsm_team_sync", [&] { team_of(team, "mpidsm_team_sync").sync(); });
}

mpidsm_status_t mpidsm_team_broadcast(mpidsm_team_t team, void* dest, const void* src, size_t bytes,
                                      int root) {
  return guarded("mpidsm_team_broadcast", [&] {
    team_of(team, "mpidsm_team_broadcast")
        .broadcast(static_cast<unsigned char*>(dest), static_cast<const unsigned char*>(src), bytes,
                   root);
  });
}

mpidsm_status_t mpidsm_team_fcollect(mpidsm_team_t team, void* dest, const void* src,
                                     size_t bytes) {
  return guarded("mpidsm_team_fcollect", [&] {
    team_of(team, "mpidsm_team_fcollect")
        .fcollect(static_cast<unsigned char*>(dest), static_cast<const unsigned char*>(src), bytes);
  });
}

mpidsm_status_t mpidsm_team_collect(mpidsm_team_t team, void* dest, const void* src, size_t bytes,
                                    size_t* total) {
  return guarded("mpidsm_team_collect", [&] {
    size_t& out = require(total, "mpidsm_team_collect: total");
    out = team_of(team, "mpidsm_team_collect")
              .collect(static_cast<unsigned char*>(dest), static_cast<const unsigned char*>(src),
                       bytes);
  });
}

mpidsm_status_t mpidsm_team_alltoall(mpidsm_team_t team, void* dest, const void* src,
                                     size_t bytes) {
  return guarded("mpidsm_team_alltoall", [&] {
    team_of(team, "mpidsm_team_alltoall")
        .alltoall(static_cast<unsigned char*>(dest), static_cast<const unsigned char*>(src), bytes);
  });
}

mpidsm_status_t mpidsm_team_alltoalls(mpidsm_team_t team, void* dest, const void* src,
                                      ptrdiff_t dest_stride, ptrdiff_t src_stride,
                                      size_t element_bytes, size_t count) {
  return guarded("mpidsm_team_alltoalls", [&] {
    const mpidsm::Team& t = team_of(team, "mpidsm_team_alltoalls");
    with_element_type(element_bytes, "mpidsm_team_alltoalls", [&](auto element) {
      using T = decltype(element);
      t.alltoalls(static_cast<T*>(dest), static_cast<const T*>(src), dest_stride, src_stride,
                  count);
    });
  });
}

#define MPIDSM_DEFINE_TEAM_REDUCE(T, S)                                                     \
  mpidsm_status_t mpidsm_team_reduce_##S(mpidsm_team_t team, int op, T* dest, const T* src, \
                                         size_t count) {                                    \
    return reduce<T>("mpidsm_team_reduce_" #S, team, op, dest, src, count);                 \
  }
MPIDSM_DEFINE_TEAM_REDUCE(int32_t, i32)
MPIDSM_DEFINE_TEAM_REDUCE(uint32_t, u32)
MPIDSM_DEFINE_TEAM_REDUCE(int64_t, i64)
MPIDSM_DEFINE_TEAM_REDUCE(uint64_t, u64)
MPIDSM_DEFINE_TEAM_REDUCE(float, f32)
MPIDSM_DEFINE_TEAM_REDUCE(double, f64)

}  // extern "C"
