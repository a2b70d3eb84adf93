// The C API's DSM face.
#include <cstdint>
#include <vector>

#include "c_boundary.hpp"

using mpidsm::c_api::create;
using mpidsm::c_api::guarded;
using mpidsm::c_api::require;
using mpidsm::c_api::take;

namespace {

mpidsm::Dsm& dsm_of(mpidsm_dsm_t dsm, const char* what) {
  return require(dsm, what).dsm;
}

mpidsm::Placement placement_of(const mpidsm_placement_t* placement, int rank) {
  using mpidsm::Placement;
  if (placement == nullptr) return Placement::block();
  switch (placement->kind) {
    case MPIDSM_PLACE_BLOCK:
      return Placement::block();
    case MPIDSM_PLACE_CYCLIC:
      return Placement::cyclic(placement->pages_per_block, placement->rank);
    case MPIDSM_PLACE_ON_RANK:
      return Placement::on(placement->rank);
    case MPIDSM_PLACE_FIRST_TOUCH:
      return Placement::first_touch();
    case MPIDSM_PLACE_BLOCKS: {
      if (placement->block_count > 0 && placement->blocks == nullptr)
        throw mpidsm::Error(mpidsm::Errc::invalid_argument, rank,
                            "mpidsm_dsm_alloc: placement->blocks is NULL with block_count " +
                                std::to_string(placement->block_count));
      std::vector<mpidsm::PlacementBlock> list;
      list.reserve(placement->block_count);
      for (std::size_t i = 0; i < placement->block_count; ++i)
        list.push_back({placement->blocks[i].bytes, placement->blocks[i].home});
      return Placement::blocks(std::move(list));
    }
  }
  throw mpidsm::Error(mpidsm::Errc::invalid_argument, rank,
                      "mpidsm_dsm_alloc: placement->kind " + std::to_string(placement->kind) +
                          " is not an mpidsm_placement_kind_t");
}

}  // namespace

extern "C" {

mpidsm_status_t mpidsm_dsm_create(mpidsm_runtime_t runtime, mpidsm_dsm_t* dsm) {
  return guarded("mpidsm_dsm_create", [&] {
    create(require(dsm, "mpidsm_dsm_create: dsm"),
           [&] { return mpidsm::Dsm(require(runtime, "mpidsm_dsm_create: runtime").runtime); });
  });
}

mpidsm_status_t mpidsm_dsm_destroy(mpidsm_dsm_t* dsm) {
  return guarded("mpidsm_dsm_destroy", [&] {
    take(require(dsm, "mpidsm_dsm_destroy: dsm"));  // collective, in ~Dsm
  });
}

mpidsm_status_t mpidsm_dsm_alloc(mpidsm_dsm_t dsm, size_t bytes,
                                 const mpidsm_placement_t* placement, void** address) {
  return guarded("mpidsm_dsm_alloc", [&] {
    auto& out = require(address, "mpidsm_dsm_alloc: address");
    out = nullptr;
    mpidsm::Dsm& d = dsm_of(dsm, "mpidsm_dsm_alloc: dsm");
    out = d.allocate<std::byte>(bytes, placement_of(placement, d.rank()));
  });
}

static_assert(static_cast<int>(mpidsm::Coherence::adaptive) == MPIDSM_COHERENCE_ADAPTIVE &&
                  static_cast<int>(mpidsm::Coherence::invalidate) == MPIDSM_COHERENCE_INVALIDATE &&
                  static_cast<int>(mpidsm::Coherence::update) == MPIDSM_COHERENCE_UPDATE &&
                  static_cast<int>(mpidsm::Coherence::read_mostly) ==
                      MPIDSM_COHERENCE_READ_MOSTLY &&
                  static_cast<int>(mpidsm::Coherence::single_writer) ==
                      MPIDSM_COHERENCE_SINGLE_WRITER,
              "mpidsm_coherence_t numbers mpidsm::Coherence's policies alike");

mpidsm_status_t mpidsm_dsm_alloc_policy(mpidsm_dsm_t dsm, size_t bytes,
                                        const mpidsm_placement_t* placement, int policy,
                                        void** address) {
  return guarded("mpidsm_dsm_alloc_policy", [&] {
    auto& out = require(address, "mpidsm_dsm_alloc_policy: address");
    out = nullptr;
    mpidsm::Dsm& d = dsm_of(dsm, "mpidsm_dsm_alloc_policy: dsm");
    if (policy < MPIDSM_COHERENCE_ADAPTIVE || policy > MPIDSM_COHERENCE_SINGLE_WRITER)
      throw mpidsm::Error(mpidsm::Errc::invalid_argument, d.rank(),
                          "mpidsm_dsm_alloc_policy: policy " + std::to_string(policy) +
                              " is not an mpidsm_coherence_t (0 adaptive .. 4 single_writer)");
    out = d.allocate<std::byte>(bytes, placement_of(placement, d.rank()),
                                static_cast<mpidsm::Coherence>(policy));
  });
}

mpidsm_status_t mpidsm_dsm_coherence_of(mpidsm_dsm_t dsm, const void* address, int* policy) {
  return guarded("mpidsm_dsm_coherence_of", [&] {
    require(policy, "mpidsm_dsm_coherence_of: policy") =
        static_cast<int>(dsm_of(dsm, "mpidsm_dsm_coherence_of: dsm").coherence_of(address));
  });
}

mpidsm_status_t mpidsm_dsm_make_accessible(mpidsm_dsm_t dsm, const void* address, size_t bytes,
                                           int access, mpidsm_dsm_access_t* handle) {
  return guarded("mpidsm_dsm_make_accessible", [&] {
    auto& out = require(handle, "mpidsm_dsm_make_accessible: handle");
    out = nullptr;
    mpidsm::Dsm& d = dsm_of(dsm, "mpidsm_dsm_make_accessible: dsm");
    if (access != MPIDSM_ACCESS_READ && access != MPIDSM_ACCESS_READ_WRITE)
      throw mpidsm::Error(mpidsm::Errc::invalid_argument, d.rank(),
                          "mpidsm_dsm_make_accessible: access " + std::to_string(access) +
                              " is neither MPIDSM_ACCESS_READ nor MPIDSM_ACCESS_READ_WRITE");
    create(out, [&] {
      return d.make_accessible(
          address, bytes,
          access == MPIDSM_ACCESS_READ ? mpidsm::Access::read : mpidsm::Access::read_write);
    });
  });
}

mpidsm_status_t mpidsm_dsm_access_release(mpidsm_dsm_access_t* handle) {
  return guarded("mpidsm_dsm_access_release", [&] {
    take(require(handle, "mpidsm_dsm_access_release: handle"));  // released in ~DsmAccess
  });
}

mpidsm_status_t mpidsm_dsm_free(mpidsm_dsm_t dsm, void* address) {
  return guarded("mpidsm_dsm_free", [&] { dsm_of(dsm, "mpidsm_dsm_free: dsm").free(address); });
}

mpidsm_status_t mpidsm_dsm_barrier(mpidsm_dsm_t dsm) {
  return guarded("mpidsm_dsm_barrier", [&] { dsm_of(dsm, "mpidsm_dsm_barrier: dsm").barrier(); });
}

mpidsm_status_t mpidsm_dsm_sync_with(mpidsm_dsm_t dsm, const int* peers, size_t count) {
  return guarded("mpidsm_dsm_sync_with", [&] {
    mpidsm::Dsm& d = dsm_of(dsm, "mpidsm_dsm_sync_with: dsm");
    if (count > 0) require(peers, "mpidsm_dsm_sync_with: peers");
    d.sync_with({peers, count});
  });
}

mpidsm_status_t mpidsm_dsm_lock(mpidsm_dsm_t dsm, size_t id) {
  return guarded("mpidsm_dsm_lock", [&] { dsm_of(dsm, "mpidsm_dsm_lock: dsm").lock(id); });
}

mpidsm_status_t mpidsm_dsm_unlock(mpidsm_dsm_t dsm, size_t id) {
  return guarded("mpidsm_dsm_unlock", [&] { dsm_of(dsm, "mpidsm_dsm_unlock: dsm").unlock(id); });
}

mpidsm_status_t mpidsm_dsm_lock_count(mpidsm_dsm_t dsm, size_t* count) {
  return guarded("mpidsm_dsm_lock_count", [&] {
    require(count, "mpidsm_dsm_lock_count: count") =
        dsm_of(dsm, "mpidsm_dsm_lock_count: dsm").lock_count();
  });
}

mpidsm_status_t mpidsm_dsm_set_flag(mpidsm_dsm_t dsm, size_t id) {
  return guarded("mpidsm_dsm_set_flag",
                 [&] { dsm_of(dsm, "mpidsm_dsm_set_flag: dsm").set_flag(id); });
}

mpidsm_status_t mpidsm_dsm_wait_flag(mpidsm_dsm_t dsm, size_t id) {
  return guarded("mpidsm_dsm_wait_flag",
                 [&] { dsm_of(dsm, "mpidsm_dsm_wait_flag: dsm").wait_flag(id); });
}

mpidsm_status_t mpidsm_dsm_reset_flag(mpidsm_dsm_t dsm, size_t id) {
  return guarded("mpidsm_dsm_reset_flag",
                 [&] { dsm_of(dsm, "mpidsm_dsm_reset_flag: dsm").reset_flag(id); });
}

mpidsm_status_t mpidsm_dsm_prefetch(mpidsm_dsm_t dsm, const void* address, size_t bytes) {
  return guarded("mpidsm_dsm_prefetch",
                 [&] { dsm_of(dsm, "mpidsm_dsm_prefetch: dsm").prefetch(address, bytes); });
}

mpidsm_status_t mpidsm_dsm_home_of(mpidsm_dsm_t dsm, const void* address, int* home) {
  return guarded("mpidsm_dsm_home_of", [&] {
    require(home, "mpidsm_dsm_home_of: home") =
        dsm_of(dsm, "mpidsm_dsm_home_of: dsm").home_of(address);
  });
}

mpidsm_status_t mpidsm_dsm_set_home_migration(mpidsm_dsm_t dsm, int mode) {
  return guarded("mpidsm_dsm_set_home_migration", [&] {
    mpidsm::Dsm& d = dsm_of(dsm, "mpidsm_dsm_set_home_migration: dsm");
    if (mode < MPIDSM_HOME_MIGRATION_OFF || mode > MPIDSM_HOME_MIGRATION_ON)
      throw mpidsm::Error(mpidsm::Errc::invalid_argument, d.rank(),
                          "mpidsm_dsm_set_home_migration: mode " + std::to_string(mode) +
                              " is not an mpidsm_home_migration_t (0 off, 1 adaptive, 2 on)");
    static constexpr mpidsm::HomeMigration kModes[] = {
        mpidsm::HomeMigration::off, mpidsm::HomeMigration::adaptive, mpidsm::HomeMigration::on};
    d.set_home_migration(kModes[mode]);
  });
}

mpidsm_status_t mpidsm_dsm_stats(mpidsm_dsm_t dsm, mpidsm_dsm_stats_t* stats) {
  return guarded("mpidsm_dsm_stats", [&] {
    auto& out = require(stats, "mpidsm_dsm_stats: stats");
    const mpidsm::DsmStats in = dsm_of(dsm, "mpidsm_dsm_stats: dsm").stats();
    out = {in.read_faults,
           in.write_faults,
           in.pages_fetched,
           in.prefetched,
           in.fetch_waits,
           in.fetch_wait_ns,
           in.prefetch_used,
           in.prefetch_unused,
           in.evictions,
           in.diffs,
           in.diff_runs,
           in.diff_bytes,
           in.diff_messages,
           in.invalidations,
           in.lock_acquires,
           in.lock_wait_ns,
           in.lock_log_overflows,
           in.barriers,
           in.barrier_ns,
           in.mapping_resets,
           in.copy_log_overflows,
           in.barrier_refetches,
           in.barrier_updates_sent,
           in.syncs,
           in.sync_ns,
           in.sync_refetches,
           in.homes_gained,
           in.homes_lost,
           in.updates_received,
           in.lock_grant_pages,
           in.updates_adopted,
           in.updates_dropped,
           in.updates_watched,
           in.view_protections,
           in.pages_adaptive,
           in.pages_invalidate,
           in.pages_update,
           in.pages_read_mostly,
           in.pages_single_writer};
    static_assert(sizeof(mpidsm_dsm_stats_t) == sizeof(mpidsm::DsmStats),
                  "the C statistics list every field of DsmStats");
  });
}

mpidsm_status_t mpidsm_dsm_reset_stats(mpidsm_dsm_t dsm) {
  return guarded("mpidsm_dsm_reset_stats",
                 [&] { dsm_of(dsm, "mpidsm_dsm_reset_stats: dsm").reset_stats(); });
}

mpidsm_status_t mpidsm_dsm_print_stats(mpidsm_dsm_t dsm, FILE* out) {
  return guarded("mpidsm_dsm_print_stats", [&] {
    require(out, "mpidsm_dsm_print_stats: out");
    dsm_of(dsm, "mpidsm_dsm_print_stats: dsm").print_stats(out);
  });
}

}  // extern "C"
