// shmem_init ... shmem_finalize and the queries: mpidsm's runtime and PGAS
// face over MPI_COMM_WORLD. shmem_init initialises MPI when the program has
// not (and shmem_finalize then finalizes it); calls nest, as OpenSHMEM 1.5
// allows: the library ends at the shmem_finalize matching the first init.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "common/mpi_exchange.hpp"
#include "library.hpp"
#include "static_data.hpp"

struct mpidsm_shmem_team mpidsm_shmem_team_world;
struct mpidsm_shmem_team mpidsm_shmem_team_shared;
struct mpidsm_shmem_ctx mpidsm_shmem_ctx_default;

namespace mpidsm::shmem {
namespace {

int init_calls = 0;  // shmem_init calls not yet matched by shmem_finalize

// OpenSHMEM 1.0-1.4 programs (start_pes) and many later ones never call
// shmem_finalize: finalization is then implicit at exit, as the
// specification says, so every PE leaves through MPI_Finalize and the job
// exits 0. Runs from exit() (a return from main included), once per
// process; nothing when the program finalized, or MPI is gone already.
void finalize_at_exit() {
  if (!the_library) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  init_calls = 1;
  shmem_finalize();
}

int mpi_level_of(int shmem_level) {
  switch (shmem_level) {
    case SHMEM_THREAD_SINGLE:
      return MPI_THREAD_SINGLE;
    case SHMEM_THREAD_FUNNELED:
      return MPI_THREAD_FUNNELED;
    case SHMEM_THREAD_SERIALIZED:
      return MPI_THREAD_SERIALIZED;
    default:
      return MPI_THREAD_MULTIPLE;
  }
}

int shmem_level_of(int mpi_level) {
  if (mpi_level >= MPI_THREAD_MULTIPLE) return SHMEM_THREAD_MULTIPLE;
  if (mpi_level >= MPI_THREAD_SERIALIZED) return SHMEM_THREAD_SERIALIZED;
  if (mpi_level >= MPI_THREAD_FUNNELED) return SHMEM_THREAD_FUNNELED;
  return SHMEM_THREAD_SINGLE;
}

// The thread level: what was asked, as far as MPI provides it (the
// collectives call MPI from the calling thread; docs/threading.md).
int start(int requested, const char* function) {
  if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE)
    throw Error(Errc::invalid_argument, no_rank,
                std::string(function) + ": thread level " + std::to_string(requested) +
                    " is not one of SHMEM_THREAD_SINGLE ... SHMEM_THREAD_MULTIPLE");
  if (the_library) {
    ++init_calls;
    return the_library->thread_level;
  }
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    throw Error(Errc::mpi, no_rank,
                std::string(function) + ": MPI was finalized; OpenSHMEM cannot start again");
  int mpi_level = MPI_THREAD_SINGLE;
  if (!initialized) {
    if (MPI_Init_thread(nullptr, nullptr, mpi_level_of(requested), &mpi_level) != MPI_SUCCESS)
      throw Error(Errc::mpi, no_rank, std::string(function) + ": MPI_Init_thread failed");
  } else {
    MPI_Query_thread(&mpi_level);
  }
  auto made = std::make_unique<Library>(!initialized);
  made->thread_level = std::min(requested, shmem_level_of(mpi_level));
  // Global and static variables are symmetric, as the specification asks.
  if (const StaticData data = program_static_data(); data.bytes > 0)
    made->pgas.add_symmetric_segment(data.base, data.bytes);
  mpidsm_shmem_team_world.team = Team::world(made->pgas);
  mpidsm_shmem_team_shared.team = Team::shared(made->pgas);
  the_library = made.release();
  init_calls = 1;
  static const bool registered = std::atexit(finalize_at_exit) == 0;
  if (!registered)
    std::fprintf(stderr, "mpidsm shmem: %s: could not register the finalization at exit\n",
                 function);
  return the_library->thread_level;
}

}  // namespace

Library::Library(bool started) : started_mpi(started), runtime(MPI_COMM_WORLD), pgas(runtime) {}

Library* the_library = nullptr;

void throw_not_initialized(const char* function) {
  throw Error(Errc::not_initialized, no_rank,
              std::string(function) + ": called outside shmem_init ... shmem_finalize");
}

int team_pe(shmem_ctx_t ctx, int pe, const char* function) {
  if (ctx && ctx->team == SHMEM_TEAM_WORLD) return pe;
  if (!ctx)
    throw Error(Errc::invalid_argument, no_rank,
                std::string(function) + ": the context is SHMEM_CTX_INVALID");
  return team_of(ctx->team, function).pgas_rank(pe);
}

const Team& team_of(shmem_team_t team, const char* function) {
  if (!team || !team->team.valid())
    throw Error(Errc::invalid_argument, no_rank,
                std::string(function) + ": the team is SHMEM_TEAM_INVALID (or destroyed)");
  return team->team;
}

Compare compare_of(int cmp, const char* function) {
  switch (cmp) {
    case SHMEM_CMP_EQ:
      return Compare::eq;
    case SHMEM_CMP_NE:
      return Compare::ne;
    case SHMEM_CMP_GT:
      return Compare::gt;
    case SHMEM_CMP_GE:
      return Compare::ge;
    case SHMEM_CMP_LT:
      return Compare::lt;
    case SHMEM_CMP_LE:
      return Compare::le;
  }
  throw Error(Errc::invalid_argument, no_rank,
              std::string(function) + ": comparison " + std::to_string(cmp) +
                  " is not one of SHMEM_CMP_EQ, _NE, _GT, _GE, _LT, _LE");
}

void fatal(const char* function, const char* message) noexcept {
  int pe = -1, initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &pe);
  std::fprintf(stderr, "mpidsm shmem[PE %d]: %s: %s\n", pe, function, message);
  std::fflush(stderr);
  shmem_global_exit(1);
  std::abort();  // not reached: shmem_global_exit does not return
}

int report(const char* function, const std::exception& e) noexcept {
  std::fprintf(stderr, "mpidsm shmem: %s: %s\n", function, e.what());
  return -1;
}

}  // namespace mpidsm::shmem

using namespace mpidsm::shmem;

extern "C" {

void shmem_init(void) {
  guarded("shmem_init", [] { start(SHMEM_THREAD_SINGLE, "shmem_init"); });
}
int shmem_init_thread(int requested, int* provided) {
  return guarded("shmem_init_thread", [&] {
    const int level = start(requested, "shmem_init_thread");
    if (provided) *provided = level;
    return 0;
  });
}
void start_pes(int) {
  // start_pes may be called again; it never nests (OpenSHMEM 1.2).
  guarded("start_pes", [] {
    if (!the_library) start(SHMEM_THREAD_SINGLE, "start_pes");
  });
}
void shmem_query_thread(int* provided) {
  guarded("shmem_query_thread", [&] { *provided = library("shmem_query_thread").thread_level; });
}
int shmem_query_initialized(void) {
  return the_library != nullptr;
}

void shmem_finalize(void) {
  guarded("shmem_finalize", [] {
    Library& lib = library("shmem_finalize");
    if (--init_calls > 0) return;
    lib.pgas.barrier();  // what every PE issued is complete before anything is released
    lib.active_sets.clear();
    mpidsm_shmem_team_shared.team = mpidsm::Team();
    mpidsm_shmem_team_world.team = mpidsm::Team();
    const bool finalize_mpi = lib.started_mpi;
    the_library = nullptr;
    delete &lib;  // the Pgas, then the runtime: collective
    if (finalize_mpi) MPI_Finalize();
  });
}

void shmem_global_exit(int status) {
  std::fflush(stdout);
  mpidsm::detail::abort_job(status);
}

int shmem_my_pe(void) {
  return guarded("shmem_my_pe", [] { return pgas("shmem_my_pe").rank(); });
}
int shmem_n_pes(void) {
  return guarded("shmem_n_pes", [] { return pgas("shmem_n_pes").size(); });
}
int _my_pe(void) {
  return guarded("_my_pe", [] { return pgas("_my_pe").rank(); });
}
int _num_pes(void) {
  return guarded("_num_pes", [] { return pgas("_num_pes").size(); });
}

int shmem_pe_accessible(int pe) {
  return guarded("shmem_pe_accessible",
                 [&] { return pe >= 0 && pe < pgas("shmem_pe_accessible").size() ? 1 : 0; });
}

int shmem_addr_accessible(const void* addr, int pe) {
  return guarded("shmem_addr_accessible", [&]() -> int {
    mpidsm::Pgas& p = pgas("shmem_addr_accessible");
    if (pe < 0 || pe >= p.size()) return 0;
    try {
      p.global(static_cast<const unsigned char*>(addr), pe);
      return 1;
    } catch (const mpidsm::Error&) {
      return 0;  // not symmetric: the answer, not an error
    }
  });
}

void* shmem_ptr(const void* dest, int pe) {
  return guarded("shmem_ptr", [&]() -> void* {
    mpidsm::Pgas& p = pgas("shmem_ptr");
    return p.local_pointer(p.global(static_cast<const unsigned char*>(dest), pe));
  });
}

void shmem_info_get_version(int* major, int* minor) {
  *major = SHMEM_MAJOR_VERSION;
  *minor = SHMEM_MINOR_VERSION;
}

// SHMEM_VENDOR_STRING, as the specification asks the two to agree (the
// version is shmem_info_get_version's and mpidsm_info's to tell).
void shmem_info_get_name(char* name) {
  std::snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

// A profiling interface's hook: with no profiling library above this one,
// every level leaves the library as it is.
void shmem_pcontrol(const int, ...) {}

}  // extern "C"
