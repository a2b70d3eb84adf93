// Teams and contexts. A team handle wraps an mpidsm::Team (a duplicate of an
// MPI communicator of its PEs); a context names a team, whose PE numbers its
// operations use. Contexts share the PGAS face's one stream of operations,
// so a context's quiet or fence also completes or orders the others' (as
// the specification permits); SHMEM_CTX_PRIVATE and the other options are
// accepted and need nothing more.
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <new>
#include <string>

#include "library.hpp"

namespace mpidsm::shmem {
namespace {

bool predefined(shmem_team_t team) {
  return team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED;
}

shmem_team_t handle_for(Team team, const shmem_team_config_t* config, long mask) {
  if (!team.valid()) return SHMEM_TEAM_INVALID;
  auto* handle = new mpidsm_shmem_team{std::move(team)};
  if (config && (mask & SHMEM_TEAM_NUM_CONTEXTS)) handle->num_contexts = config->num_contexts;
  return handle;
}

// Collective over `parent`: the members of each colour form a team, ranked as in parent.
Team split_by_colour(const Team& parent, int colour, const char* f) {
  MPI_Comm comm = MPI_COMM_NULL;
  if (MPI_Comm_split(parent.comm(), colour, parent.rank(), &comm) != MPI_SUCCESS)
    throw Error(Errc::mpi, no_rank, std::string(f) + ": MPI_Comm_split failed");
  Team team(pgas(f), comm);
  MPI_Comm_free(&comm);
  return team;
}

}  // namespace
}  // namespace mpidsm::shmem

using namespace mpidsm::shmem;

extern "C" {

int shmem_team_my_pe(shmem_team_t team) {
  return guarded("shmem_team_my_pe", [&] {
    library("shmem_team_my_pe");
    return team && team->team.valid() ? team->team.rank() : -1;
  });
}
int shmem_team_n_pes(shmem_team_t team) {
  return guarded("shmem_team_n_pes", [&] {
    library("shmem_team_n_pes");
    return team && team->team.valid() ? team->team.size() : -1;
  });
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t* config) {
  return guarded("shmem_team_get_config", [&] {
    library("shmem_team_get_config");
    if (!team || !team->team.valid() || !config) return -1;
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS) config->num_contexts = team->num_contexts;
    return 0;
  });
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) {
  return guarded("shmem_team_translate_pe", [&] {
    library("shmem_team_translate_pe");
    if (!src_team || !dest_team || !src_team->team.valid() || !dest_team->team.valid()) return -1;
    if (src_pe < 0 || src_pe >= src_team->team.size()) return -1;
    return src_team->team.translate(src_pe, dest_team->team);
  });
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t* config, long config_mask,
                             shmem_team_t* new_team) {
  const char* f = "shmem_team_split_strided";
  return guarded(f, [&] {
    if (new_team) *new_team = SHMEM_TEAM_INVALID;
    try {
      const mpidsm::Team& parent = team_of(parent_team, f);
      *new_team = handle_for(parent.split_strided(start, stride, size), config, config_mask);
      return 0;
    } catch (const mpidsm::Error& e) {
      return report(f, e);
    }
  });
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t* xaxis_config, long xaxis_mask,
                        shmem_team_t* xaxis_team, const shmem_team_config_t* yaxis_config,
                        long yaxis_mask, shmem_team_t* yaxis_team) {
  const char* f = "shmem_team_split_2d";
  return guarded(f, [&] {
    *xaxis_team = SHMEM_TEAM_INVALID;
    *yaxis_team = SHMEM_TEAM_INVALID;
    try {
      const mpidsm::Team& parent = team_of(parent_team, f);
      if (xrange <= 0)
        throw mpidsm::Error(
            mpidsm::Errc::invalid_argument, parent.rank(),
            std::string(f) + ": xrange " + std::to_string(xrange) + " is not positive");
      // Rows of xrange consecutive PEs (the last may be shorter); columns
      // of the PEs at one place in their row.
      const int x = std::min(xrange, parent.size());
      *xaxis_team =
          handle_for(split_by_colour(parent, parent.rank() / x, f), xaxis_config, xaxis_mask);
      *yaxis_team =
          handle_for(split_by_colour(parent, parent.rank() % x, f), yaxis_config, yaxis_mask);
      return 0;
    } catch (const mpidsm::Error& e) {
      return report(f, e);
    }
  });
}

void shmem_team_destroy(shmem_team_t team) {
  guarded("shmem_team_destroy", [&] {
    library("shmem_team_destroy");
    if (!team) return;
    if (predefined(team))
      throw mpidsm::Error(mpidsm::Errc::invalid_argument, mpidsm::no_rank,
                          "shmem_team_destroy: SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED last "
                          "until shmem_finalize");
    delete team;
  });
}

void* shmem_team_ptr(shmem_team_t team, const void* dest, int pe) {
  const char* f = "shmem_team_ptr";
  return guarded(f, [&]() -> void* {
    mpidsm::Pgas& p = pgas(f);
    const int rank = team_of(team, f).pgas_rank(pe);
    return p.local_pointer(p.global(static_cast<const unsigned char*>(dest), rank));
  });
}

int shmem_ctx_create(long options, shmem_ctx_t* ctx) {
  return shmem_team_create_ctx(SHMEM_TEAM_WORLD, options, ctx);
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t* ctx) {
  const char* f = "shmem_team_create_ctx";
  return guarded(f, [&] {
    library(f);
    if (!ctx)
      throw mpidsm::Error(mpidsm::Errc::invalid_argument, mpidsm::no_rank,
                          std::string(f) + ": ctx is a null pointer");
    *ctx = SHMEM_CTX_INVALID;
    if (!team || !team->team.valid()) return -1;  // the specification's answer
    *ctx = new mpidsm_shmem_ctx{team, options};
    return 0;
  });
}

void shmem_ctx_destroy(shmem_ctx_t ctx) {
  guarded("shmem_ctx_destroy", [&] {
    if (!ctx) return;
    if (ctx == SHMEM_CTX_DEFAULT)
      throw mpidsm::Error(mpidsm::Errc::invalid_argument, mpidsm::no_rank,
                          "shmem_ctx_destroy: SHMEM_CTX_DEFAULT cannot be destroyed");
    pgas("shmem_ctx_destroy").quiet();  // its operations complete, as destruction requires
    delete ctx;
  });
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t* team) {
  return guarded("shmem_ctx_get_team", [&] {
    if (!team) return -1;
    *team = ctx ? ctx->team : SHMEM_TEAM_INVALID;
    return ctx ? 0 : -1;
  });
}

}  // extern "C"
