/** \file
 * \ingroup c_api
 * mpidsm's C API: the runtime, PGAS, the coherent DSM and tagged messaging,
 * for C11 (mpicc) and C++.
 *
 * Every function returns an mpidsm_status_t. A failed call also leaves a
 * message naming what was wrong (rank, address, size, variable) for the
 * calling thread: mpidsm_error_message(). No C++ exception crosses this
 * boundary, and a failed call leaves the runtime usable, as in C++.
 *
 * Collective calls (create, destroy, alloc, free, barrier) must be made by
 * every rank of the runtime's communicator, in the same order. */
#ifndef MPIDSM_H
#define MPIDSM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mpidsm/status.h"
#include "mpidsm/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/** \addtogroup c_api
 * @{ */

/* ---- Errors and version ------------------------------------------------ */

/** The message of the last failed call on this thread ("" if none failed).
 * Valid until the thread's next failed call. */
const char* mpidsm_error_message(void);

/** The library's version. Compare with MPIDSM_VERSION_MAJOR/MINOR (the
 * header's) to detect a header/library mismatch. Never fails. */
mpidsm_status_t mpidsm_version(int* major, int* minor, int* patch);

/* ---- Runtime ----------------------------------------------------------- */

/** A runtime: mpidsm on one MPI communicator. */
typedef struct mpidsm_runtime* mpidsm_runtime_t;

/** Collective over comm (MPI must be initialised; the application owns
 * MPI_Init and MPI_Finalize). Reads the MPIDSM_* environment variables. */
mpidsm_status_t mpidsm_runtime_create(MPI_Comm comm, mpidsm_runtime_t* runtime);
/** Collective. Sets *runtime to NULL; NULL is accepted and ignored. PGAS and
 * DSM objects of the runtime must be destroyed first. */
mpidsm_status_t mpidsm_runtime_destroy(mpidsm_runtime_t* runtime);
/** @{ */
/** This rank's number, and the communicator's size. */
mpidsm_status_t mpidsm_runtime_rank(mpidsm_runtime_t runtime, int* rank);
mpidsm_status_t mpidsm_runtime_size(mpidsm_runtime_t runtime, int* size);
/** @} */

/* ---- PGAS: symmetric allocations and one-sided operations ---------------
 * Remote data is named OpenSHMEM-style: by the address of the same object
 * in this rank's copy of a symmetric allocation, plus the target rank. */

/** A PGAS face: the symmetric heap of a runtime. */
typedef struct mpidsm_pgas* mpidsm_pgas_t;

/** Comparisons of mpidsm_wait_until_u64: word `cmp` value. */
typedef enum mpidsm_cmp {
  MPIDSM_CMP_EQ,
  MPIDSM_CMP_NE,
  MPIDSM_CMP_GT,
  MPIDSM_CMP_GE,
  MPIDSM_CMP_LT,
  MPIDSM_CMP_LE
} mpidsm_cmp_t; /**< Comparisons of mpidsm_wait_until_u64. */

/** What mpidsm_put_signal does to the signal word: store or add the value. */
typedef enum mpidsm_signal_op {
  MPIDSM_SIGNAL_SET, /**< store the value */
  MPIDSM_SIGNAL_ADD  /**< add the value */
} mpidsm_signal_op_t;

/** Collective: the PGAS face of a runtime, with its symmetric heap (MPIDSM_HEAP_SIZE). */
mpidsm_status_t mpidsm_pgas_create(mpidsm_runtime_t runtime, mpidsm_pgas_t* pgas);
mpidsm_status_t mpidsm_pgas_destroy(mpidsm_pgas_t* pgas); /**< collective; NULL ignored */
/** Collective: `bytes` must agree on every rank. 64-byte aligned. */
mpidsm_status_t mpidsm_pgas_alloc(mpidsm_pgas_t pgas, size_t bytes, void** local);
mpidsm_status_t mpidsm_pgas_free(mpidsm_pgas_t pgas, void* local); /**< collective */

/** @{ */
/** Blocking: complete (remotely visible, or data arrived) on return. */
mpidsm_status_t mpidsm_put(mpidsm_pgas_t pgas, int rank, void* dest, const void* src, size_t bytes);
mpidsm_status_t mpidsm_get(mpidsm_pgas_t pgas, void* dest, int rank, const void* src, size_t bytes);
/** @} */
/** @{ */
/** Non-blocking: complete at the next mpidsm_quiet (or barrier); buffers
 * must not be touched until then. */
mpidsm_status_t mpidsm_put_nbi(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                               size_t bytes);
mpidsm_status_t mpidsm_get_nbi(mpidsm_pgas_t pgas, void* dest, int rank, const void* src,
                               size_t bytes);
/** @} */
/** dest's data, then the signal word (set to or added `value`), in that order.
 * op: an mpidsm_signal_op_t. (Enumerations travel as int through this API:
 * a value outside the enumeration is then an error, not undefined.) */
mpidsm_status_t mpidsm_put_signal(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                                  size_t bytes, uint64_t* signal, uint64_t value, int op);
mpidsm_status_t mpidsm_fence(mpidsm_pgas_t pgas);   /**< orders puts to each rank */
mpidsm_status_t mpidsm_quiet(mpidsm_pgas_t pgas);   /**< completes every operation */
mpidsm_status_t mpidsm_barrier(mpidsm_pgas_t pgas); /**< quiet, then a barrier */

/** @{ */
/** Atomics on 64-bit words of a symmetric allocation (8-byte aligned). The
 * fetching forms store the previous value in *old (which may be NULL). */
mpidsm_status_t mpidsm_atomic_fetch_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                        uint64_t* value);
mpidsm_status_t mpidsm_atomic_set_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word, uint64_t value);
mpidsm_status_t mpidsm_atomic_swap_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word, uint64_t value,
                                       uint64_t* old);
mpidsm_status_t mpidsm_atomic_compare_swap_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                               uint64_t expected, uint64_t desired, uint64_t* old);
mpidsm_status_t mpidsm_atomic_fetch_add_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                            uint64_t value, uint64_t* old);
mpidsm_status_t mpidsm_atomic_add_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word, uint64_t value);
/** @} */
/** Waits until the local word (a symmetric allocation's) compares true with
 * value (cmp: an mpidsm_cmp_t); stores what it saw in *seen (may be NULL). */
mpidsm_status_t mpidsm_wait_until_u64(mpidsm_pgas_t pgas, uint64_t* word, int cmp, uint64_t value,
                                      uint64_t* seen);

/* ---- DSM: one shared region, plain loads and stores --------------------- */

/** A DSM face: the coherent shared region of a runtime. */
typedef struct mpidsm_dsm* mpidsm_dsm_t;

/** Where the pages of a DSM allocation have their home. */
typedef enum mpidsm_placement_kind {
  MPIDSM_PLACE_BLOCK,       /**< contiguous equal shares, rank 0 first (the default) */
  MPIDSM_PLACE_CYCLIC,      /**< blocks of pages_per_block pages dealt from rank `rank` */
  MPIDSM_PLACE_ON_RANK,     /**< every page on `rank` */
  MPIDSM_PLACE_FIRST_TOUCH, /**< each page on the rank that touches it first */
  MPIDSM_PLACE_BLOCKS       /* `blocks`: consecutive ranges and their homes */
} mpidsm_placement_kind_t;  /**< Where pages have their home. */

/** One block of an MPIDSM_PLACE_BLOCKS placement. */
typedef struct mpidsm_block {
  size_t bytes;   /**< a multiple of the page size, except the last */
  int home;       /**< the block's home rank */
} mpidsm_block_t; /**< One block of an MPIDSM_PLACE_BLOCKS placement. */

/** The placement of a DSM allocation (NULL in mpidsm_dsm_alloc: MPIDSM_PLACE_BLOCK). */
typedef struct mpidsm_placement {
  int kind;                     /**< an mpidsm_placement_kind_t */
  size_t pages_per_block;       /**< CYCLIC */
  int rank;                     /**< CYCLIC: first block's home; ON_RANK: the home */
  const mpidsm_block_t* blocks; /**< BLOCKS, in address order (copied by alloc) */
  size_t block_count;           /**< BLOCKS: entries in `blocks` */
} mpidsm_placement_t;           /**< The placement of a DSM allocation. */

/** Per-rank DSM counters: the fields of mpidsm::DsmStats, documented there. */
typedef struct mpidsm_dsm_stats {
  /** @{ */
  /** As the field of the same name in mpidsm::DsmStats. */
  uint64_t read_faults, write_faults, pages_fetched, prefetched, prefetch_used, prefetch_unused,
      evictions, diffs, diff_runs, diff_bytes, diff_messages, invalidations, lock_acquires,
      lock_wait_ns, lock_log_overflows, barriers, barrier_ns, mapping_resets, copy_log_overflows,
      barrier_refetches, barrier_updates_sent, syncs, sync_ns, sync_refetches, homes_gained,
      homes_lost, updates_received, pages_adaptive, pages_invalidate, pages_update,
      pages_read_mostly, pages_single_writer;
  /** @} */
} mpidsm_dsm_stats_t; /**< Per-rank DSM counters. */

/** Collective; sized by MPIDSM_DSM_SIZE, MPIDSM_CACHE_PAGES, MPIDSM_LOCKS... */
mpidsm_status_t mpidsm_dsm_create(mpidsm_runtime_t runtime, mpidsm_dsm_t* dsm);
mpidsm_status_t mpidsm_dsm_destroy(mpidsm_dsm_t* dsm); /**< collective; NULL ignored */
/** Collective: bytes and placement must agree. NULL placement: BLOCK. The
 * memory reads as zero at first. */
mpidsm_status_t mpidsm_dsm_alloc(mpidsm_dsm_t dsm, size_t bytes,
                                 const mpidsm_placement_t* placement, void** address);
/** How the copies of a DSM allocation's pages stay coherent (mpidsm::Coherence,
 * docs/consistency.md "Coherence policies"). */
typedef enum mpidsm_coherence {
  MPIDSM_COHERENCE_ADAPTIVE = 0,     /**< invalidate, homes move, barrier updates (default) */
  MPIDSM_COHERENCE_INVALIDATE = 1,   /**< write-invalidate only (JIAJIA's protocol) */
  MPIDSM_COHERENCE_UPDATE = 2,       /**< acquires bring copies up to date in place */
  MPIDSM_COHERENCE_READ_MOSTLY = 3,  /**< UPDATE, and a miss copies the pages after it */
  MPIDSM_COHERENCE_SINGLE_WRITER = 4 /**< one writer per page at a time, whole pages home */
} mpidsm_coherence_t;
/** mpidsm_dsm_alloc with a coherence policy (an mpidsm_coherence_t, the same
 * on every rank); mpidsm_dsm_alloc uses MPIDSM_COHERENCE's.
 * MPIDSM_ERR_INVALID_ARGUMENT for a policy outside the enumeration. */
mpidsm_status_t mpidsm_dsm_alloc_policy(mpidsm_dsm_t dsm, size_t bytes,
                                        const mpidsm_placement_t* placement, int policy,
                                        void** address);
/** The coherence policy (an mpidsm_coherence_t) of the allocation holding `address`. */
mpidsm_status_t mpidsm_dsm_coherence_of(mpidsm_dsm_t dsm, const void* address, int* policy);
mpidsm_status_t mpidsm_dsm_free(mpidsm_dsm_t dsm, void* address); /**< collective */
/** Release, global barrier, acquire: every write before it is visible after. */
mpidsm_status_t mpidsm_dsm_barrier(mpidsm_dsm_t dsm);
/** Pairwise synchronisation with the `count` ranks at `peers`, each calling
 * it naming this rank: a release, then an acquire of each peer's writes
 * (mpidsm::Dsm::sync_with). */
mpidsm_status_t mpidsm_dsm_sync_with(mpidsm_dsm_t dsm, const int* peers, size_t count);
/** @{ */
/** Lock (an acquire) and unlock (a release) of lock `id`, 0 .. count-1
 * (MPIDSM_LOCKS); lock_count gives the count. Locks belong to the rank. */
mpidsm_status_t mpidsm_dsm_lock(mpidsm_dsm_t dsm, size_t id);
mpidsm_status_t mpidsm_dsm_unlock(mpidsm_dsm_t dsm, size_t id);
mpidsm_status_t mpidsm_dsm_lock_count(mpidsm_dsm_t dsm, size_t* count);
/** @} */
/** @{ */
/** Flags (condition variables): set releases, wait acquires once set,
 * reset lowers the flag. */
mpidsm_status_t mpidsm_dsm_set_flag(mpidsm_dsm_t dsm, size_t id);
mpidsm_status_t mpidsm_dsm_wait_flag(mpidsm_dsm_t dsm, size_t id);
mpidsm_status_t mpidsm_dsm_reset_flag(mpidsm_dsm_t dsm, size_t id);
/** @} */
/** Fetches the pages of [address, address+bytes) ahead of their use. */
mpidsm_status_t mpidsm_dsm_prefetch(mpidsm_dsm_t dsm, const void* address, size_t bytes);
/** The current home rank of the page holding `address` (barriers may move
 * it to the page's only writer: mpidsm_dsm_set_home_migration). */
mpidsm_status_t mpidsm_dsm_home_of(mpidsm_dsm_t dsm, const void* address, int* home);
/** Whether barriers move pages home to their only writer (mpidsm::HomeMigration). */
typedef enum mpidsm_home_migration {
  MPIDSM_HOME_MIGRATION_OFF = 0,      /**< pages keep the home their placement gave them */
  MPIDSM_HOME_MIGRATION_ADAPTIVE = 1, /**< after the same only writer in two intervals in a row */
  MPIDSM_HOME_MIGRATION_ON = 2        /**< after every interval one rank alone wrote it in */
} mpidsm_home_migration_t;
/** From the next barrier on (every rank should set the same mode; until
 * they do, barriers use the strictest one set). MPIDSM_ERR_INVALID_ARGUMENT
 * for a mode outside the enumeration. */
mpidsm_status_t mpidsm_dsm_set_home_migration(mpidsm_dsm_t dsm, int mode);
/** This rank's counters since creation or mpidsm_dsm_reset_stats. */
mpidsm_status_t mpidsm_dsm_stats(mpidsm_dsm_t dsm, mpidsm_dsm_stats_t* stats);
mpidsm_status_t mpidsm_dsm_reset_stats(mpidsm_dsm_t dsm); /**< collective */
/** Collective: every rank's counters as one table, printed by rank 0 on `out`. */
mpidsm_status_t mpidsm_dsm_print_stats(mpidsm_dsm_t dsm, FILE* out);

/* ---- Tagged messaging (UCX tag matching; rendezvous for large data) ----- */

#define MPIDSM_ANY_SOURCE (-1) /**< mpidsm_recv: a message from any rank */
#define MPIDSM_ANY_TAG (-1)    /**< mpidsm_recv: a message of any tag */

/** What mpidsm_recv received. */
typedef struct mpidsm_recv_info {
  int source;         /**< the sender */
  int tag;            /**< the message's tag */
  size_t bytes;       /**< the message's length */
} mpidsm_recv_info_t; /**< What mpidsm_recv received. */

/** Tags are 0 .. 2^24-1. */
mpidsm_status_t mpidsm_send(mpidsm_runtime_t runtime, int rank, int tag, const void* buffer,
                            size_t bytes);
/** A message larger than `capacity` is consumed and MPIDSM_ERR_TRUNCATED.
 * info may be NULL. */
mpidsm_status_t mpidsm_recv(mpidsm_runtime_t runtime, int source, int tag, void* buffer,
                            size_t capacity, mpidsm_recv_info_t* info);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* MPIDSM_H */
