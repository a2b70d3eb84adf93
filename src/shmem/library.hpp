// The state of libmpidsm_shmem between shmem_init and shmem_finalize, the
// handles behind shmem_team_t and shmem_ctx_t, and `guarded`, which runs an
// entry point's body so that an error ends the job with a message naming the
// routine (as shmem_global_exit(1) does) instead of crossing into C.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "mpidsm/error.hpp"
#include "mpidsm/pgas.hpp"
#include "mpidsm/runtime.hpp"
#include "mpidsm/team.hpp"
#include "shmem.h"

struct mpidsm_shmem_team {
  mpidsm::Team team;
  int num_contexts = 0;  // as the split's configuration asked (shmem_team_get_config)
};
struct mpidsm_shmem_ctx {
  shmem_team_t team = SHMEM_TEAM_WORLD;
  long options = 0;
};

namespace mpidsm::shmem {

// What shmem_init made: mpidsm over MPI_COMM_WORLD, so PE numbers are its ranks.
struct Library {
  explicit Library(bool started);
  bool started_mpi;  // shmem_init initialised MPI: shmem_finalize finalizes it
  int thread_level = SHMEM_THREAD_SINGLE;
  Runtime runtime;
  Pgas pgas;
  // The deprecated active-set collectives' teams, by (PE_start, logPE_stride, PE_size).
  std::map<std::tuple<int, int, int>, Team> active_sets;
  // shmem_align's pointers past their allocation's start, to that start.
  std::unordered_map<const void*, void*> aligned;
  // The ticket this PE holds of each lock it holds (locks.cpp); threads of
  // the PE may take and clear locks at once (SHMEM_THREAD_MULTIPLE).
  std::mutex held_locks_mutex;
  std::unordered_map<const long*, std::uint32_t> held_locks;
};

// What shmem_init made, or null outside shmem_init ... shmem_finalize.
extern Library* the_library;
[[noreturn]] void throw_not_initialized(const char* function);
// The library, or Errc::not_initialized naming `function` outside
// shmem_init ... shmem_finalize.
inline Library& library(const char* function) {
  if (!the_library) [[unlikely]]
    throw_not_initialized(function);
  return *the_library;
}
inline Pgas& pgas(const char* function) {
  return library(function).pgas;
}

// The PGAS rank (MPI_COMM_WORLD rank) of `pe` as `ctx` numbers it: the PEs
// of the context's team.
int team_pe(shmem_ctx_t ctx, int pe, const char* function);
inline int world_pe(shmem_ctx_t ctx, int pe, const char* function) {
  if (ctx == SHMEM_CTX_DEFAULT) [[likely]]
    return pe;
  return team_pe(ctx, pe, function);
}
// The team behind a handle; SHMEM_TEAM_INVALID is an error naming `function`.
const Team& team_of(shmem_team_t team, const char* function);
// SHMEM_CMP_* as the PGAS face's comparison.
Compare compare_of(int cmp, const char* function);

// Ends the job: the message, then MPI_Abort (shmem_global_exit's way).
[[noreturn]] void fatal(const char* function, const char* message) noexcept;

template <class Body>
auto guarded(const char* function, Body&& body) noexcept -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& e) {
    fatal(function, e.what());
  } catch (...) {
    fatal(function, "an error of unknown type");
  }
}

// For the routines whose specification defines a failure return (team
// splits, context creation): the message, and nonzero; the job goes on.
int report(const char* function, const std::exception& e) noexcept;

}  // namespace mpidsm::shmem
