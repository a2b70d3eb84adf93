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

/** Comparisons of mpidsm_pgas_wait_until_* and _test_*: word `cmp` value. */
typedef enum mpidsm_cmp {
  MPIDSM_CMP_EQ,
  MPIDSM_CMP_NE,
  MPIDSM_CMP_GT,
  MPIDSM_CMP_GE,
  MPIDSM_CMP_LT,
  MPIDSM_CMP_LE
} mpidsm_cmp_t; /**< Comparisons of wait_until and test. */

/** What mpidsm_pgas_put_signal does to the signal word: store or add the value. */
typedef enum mpidsm_signal_op {
  MPIDSM_SIGNAL_SET, /**< store the value */
  MPIDSM_SIGNAL_ADD  /**< add the value */
} mpidsm_signal_op_t;

/** Collective: the PGAS face of a runtime, with its symmetric heap (MPIDSM_HEAP_SIZE). */
mpidsm_status_t mpidsm_pgas_create(mpidsm_runtime_t runtime, mpidsm_pgas_t* pgas);
mpidsm_status_t mpidsm_pgas_destroy(mpidsm_pgas_t* pgas); /**< collective; NULL ignored */
/** Collective: `bytes` must agree on every rank. 64-byte aligned; not zeroed
 * (a block freed earlier may be reused), as OpenSHMEM's shmem_malloc. */
mpidsm_status_t mpidsm_pgas_alloc(mpidsm_pgas_t pgas, size_t bytes, void** local);
mpidsm_status_t mpidsm_pgas_free(mpidsm_pgas_t pgas, void* local); /**< collective */
/** Collective: as mpidsm_pgas_alloc, with every byte zero on every rank
 * before any rank can reach it (OpenSHMEM's shmem_calloc). */
mpidsm_status_t mpidsm_pgas_alloc_zeroed(mpidsm_pgas_t pgas, size_t bytes, void** local);
/** Where this rank reaches `rank`'s copy of the symmetric object `dest`
 * with loads and stores (its own copy, or a same-node peer's mapped here),
 * or NULL in *pointer when only puts and gets reach it (OpenSHMEM's shmem_ptr). */
mpidsm_status_t mpidsm_pgas_local_pointer(mpidsm_pgas_t pgas, const void* dest, int rank,
                                          void** pointer);

/* Transfers take one argument order, OpenSHMEM's: the face, the
 * destination, the source, the size, the rank where the remote side lives,
 * then what the call hands back. */

#define MPIDSM_ANY_SOURCE (-1) /**< mpidsm_msg_recv: a message from any rank */
#define MPIDSM_ANY_TAG (-1)    /**< mpidsm_msg_recv: a message of any tag */

/** What a receive received. */
typedef struct mpidsm_recv_info {
  int source;         /**< the sender */
  int tag;            /**< the message's tag */
  size_t bytes;       /**< the message's length */
} mpidsm_recv_info_t; /**< What a receive received. */

/** A non-blocking operation in flight (mpidsm_pgas_put_nb, _get_nb,
 * mpidsm_msg_isend, _irecv): the caller's storage, which must stay put
 * until mpidsm_request_test says done or mpidsm_request_wait returns.
 * `active` is nonzero while the operation is in flight. */
typedef struct mpidsm_request {
  union {
    unsigned char bytes[192];
    uint64_t words[24];
    void* pointer;
    double number;
  } opaque;   /**< mpidsm's; not to be touched */
  int active; /**< nonzero until completed by test or wait */
} mpidsm_request_t;

/** @{ */
/** Blocking: complete (remotely visible, or the data arrived) on return.
 * `dest` (put) or `src` (get) is the address of the object in this rank's
 * copy of a symmetric allocation; the object used is `rank`'s copy. */
mpidsm_status_t mpidsm_pgas_put(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                int rank);
mpidsm_status_t mpidsm_pgas_get(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                int rank);
/** @} */
/** @{ */
/** Non-blocking, completed by the next mpidsm_pgas_quiet (or barrier);
 * buffers must not be touched until then. */
mpidsm_status_t mpidsm_pgas_put_nbi(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                    int rank);
mpidsm_status_t mpidsm_pgas_get_nbi(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                    int rank);
/** @} */
/** @{ */
/** Non-blocking with a request of its own: complete when
 * mpidsm_request_test says done or mpidsm_request_wait returns (a put's
 * source may then be reused; it is visible at `rank` after a quiet). */
mpidsm_status_t mpidsm_pgas_put_nb(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                   int rank, mpidsm_request_t* request);
mpidsm_status_t mpidsm_pgas_get_nb(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                   int rank, mpidsm_request_t* request);
/** @} */
/** @{ */
/** Strided, blocking: `blocks` blocks of `block` elements of
 * `element_bytes` each; the k-th block starts k*dest_stride elements after
 * dest and k*src_stride after src (OpenSHMEM's iput/iget with a block). */
mpidsm_status_t mpidsm_pgas_iput(mpidsm_pgas_t pgas, void* dest, const void* src,
                                 ptrdiff_t dest_stride, ptrdiff_t src_stride, size_t element_bytes,
                                 size_t block, size_t blocks, int rank);
mpidsm_status_t mpidsm_pgas_iget(mpidsm_pgas_t pgas, void* dest, const void* src,
                                 ptrdiff_t dest_stride, ptrdiff_t src_stride, size_t element_bytes,
                                 size_t block, size_t blocks, int rank);
/** @} */
/** dest's data, then the signal word on the same rank (set to, or added,
 * `value`; op: an mpidsm_signal_op_t), in that order. Enumerations travel
 * as int through this API: a value outside the enumeration is an error. */
mpidsm_status_t mpidsm_pgas_put_signal(mpidsm_pgas_t pgas, void* dest, const void* src,
                                       size_t bytes, uint64_t* signal, uint64_t value, int op,
                                       int rank);
/** mpidsm_pgas_put_signal without waiting for the data to leave: `src`
 * may be reused after mpidsm_pgas_quiet; the signal still changes only
 * after the data landed. */
mpidsm_status_t mpidsm_pgas_put_signal_nbi(mpidsm_pgas_t pgas, void* dest, const void* src,
                                           size_t bytes, uint64_t* signal, uint64_t value, int op,
                                           int rank);
/** The value of this rank's signal word (OpenSHMEM's shmem_signal_fetch). */
mpidsm_status_t mpidsm_pgas_signal_fetch(mpidsm_pgas_t pgas, const uint64_t* signal,
                                         uint64_t* value);
mpidsm_status_t mpidsm_pgas_fence(mpidsm_pgas_t pgas); /**< orders puts to each rank */
mpidsm_status_t mpidsm_pgas_quiet(mpidsm_pgas_t pgas); /**< completes every operation */
/** quiet, then a barrier of the runtime's ranks. Covers PGAS operations
 * only: DSM stores need mpidsm_dsm_barrier. */
mpidsm_status_t mpidsm_pgas_barrier(mpidsm_pgas_t pgas);

/** @{ */
/** Whether a request's operation is complete (*done 1, and the request is
 * spent) or not yet (*done 0). A spent or never-started request is done.
 * A receive's `info` (may be NULL) is filled once done. */
mpidsm_status_t mpidsm_request_test(mpidsm_request_t* request, int* done, mpidsm_recv_info_t* info);
/** Waits until the request's operation is complete. */
mpidsm_status_t mpidsm_request_wait(mpidsm_request_t* request, mpidsm_recv_info_t* info);
/** @} */

/** Declares the atomics on symmetric words of one type `T`, named by suffix
 * `S` (i32 int32_t, u32 uint32_t, i64 int64_t, u64 uint64_t; the word
 * aligned to its size). Fetching forms store the previous value in *old
 * (which may be NULL); the others complete at the next quiet. The _nbi
 * fetching forms store it in *fetch by the next quiet (this version: before
 * they return). wait_until blocks until this rank's word compares true
 * (cmp: an mpidsm_cmp_t) and stores what it saw in *seen (may be NULL);
 * test says whether it does now. The _all, _any and _some forms take
 * `count` words of this rank, leaving out those whose `status` entry is
 * nonzero (status may be NULL): _any gives the index of one word that
 * compares true (SIZE_MAX when all are left out, or for test_any when none
 * does), _some the indices of all that do and how many. */
#define MPIDSM_PGAS_ATOMICS(T, S)                                                                  \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_##S(mpidsm_pgas_t pgas, const T* source, int rank,      \
                                               T* value);                                          \
  mpidsm_status_t mpidsm_pgas_atomic_set_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank);      \
  mpidsm_status_t mpidsm_pgas_atomic_swap_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank,      \
                                              T* old);                                             \
  mpidsm_status_t mpidsm_pgas_atomic_compare_swap_##S(mpidsm_pgas_t pgas, T* dest, T expected,     \
                                                      T desired, int rank, T* old);                \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_add_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank, \
                                                   T* old);                                        \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_and_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank, \
                                                   T* old);                                        \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_or_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank,  \
                                                  T* old);                                         \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_xor_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank, \
                                                   T* old);                                        \
  mpidsm_status_t mpidsm_pgas_atomic_add_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank);      \
  mpidsm_status_t mpidsm_pgas_atomic_and_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank);      \
  mpidsm_status_t mpidsm_pgas_atomic_or_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank);       \
  mpidsm_status_t mpidsm_pgas_atomic_xor_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank);      \
  mpidsm_status_t mpidsm_pgas_wait_until_##S(mpidsm_pgas_t pgas, const T* word, int cmp, T value,  \
                                             T* seen);                                             \
  mpidsm_status_t mpidsm_pgas_test_##S(mpidsm_pgas_t pgas, const T* word, int cmp, T value,        \
                                       int* true_now);                                             \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_nbi_##S(mpidsm_pgas_t pgas, T* fetch, const T* source,  \
                                                   int rank);                                      \
  mpidsm_status_t mpidsm_pgas_atomic_swap_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest, T value,  \
                                                  int rank);                                       \
  mpidsm_status_t mpidsm_pgas_atomic_compare_swap_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,   \
                                                          T expected, T desired, int rank);        \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_add_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,      \
                                                       T value, int rank);                         \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_and_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,      \
                                                       T value, int rank);                         \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_or_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,       \
                                                      T value, int rank);                          \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_xor_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,      \
                                                       T value, int rank);                         \
  mpidsm_status_t mpidsm_pgas_wait_until_all_##S(mpidsm_pgas_t pgas, const T* words, size_t count, \
                                                 const int* status, int cmp, T value);             \
  mpidsm_status_t mpidsm_pgas_wait_until_any_##S(mpidsm_pgas_t pgas, const T* words, size_t count, \
                                                 const int* status, int cmp, T value,              \
                                                 size_t* index);                                   \
  mpidsm_status_t mpidsm_pgas_wait_until_some_##S(                                                 \
      mpidsm_pgas_t pgas, const T* words, size_t count, size_t* indices, const int* status,        \
      int cmp, T value, size_t* found);                                                            \
  mpidsm_status_t mpidsm_pgas_test_all_##S(mpidsm_pgas_t pgas, const T* words, size_t count,       \
                                           const int* status, int cmp, T value, int* true_now);    \
  mpidsm_status_t mpidsm_pgas_test_any_##S(mpidsm_pgas_t pgas, const T* words, size_t count,       \
                                           const int* status, int cmp, T value, size_t* index);    \
  mpidsm_status_t mpidsm_pgas_test_some_##S(mpidsm_pgas_t pgas, const T* words, size_t count,      \
                                            size_t* indices, const int* status, int cmp, T value,  \
                                            size_t* found);
/** @{ */
/** The atomics, waits and tests of MPIDSM_PGAS_ATOMICS for int32_t (_i32),
 * uint32_t (_u32), int64_t (_i64) and uint64_t (_u64) words. */
MPIDSM_PGAS_ATOMICS(int32_t, i32)
MPIDSM_PGAS_ATOMICS(uint32_t, u32)
MPIDSM_PGAS_ATOMICS(int64_t, i64)
MPIDSM_PGAS_ATOMICS(uint64_t, u64)
/** @} */

/** @{ */
/** OpenSHMEM's extended atomics on float (_f32) and double (_f64) words:
 * fetch, set and swap, and their non-blocking fetching forms, as for the
 * integer words. */
#define MPIDSM_PGAS_FLOAT_ATOMICS(T, S)                                                           \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_##S(mpidsm_pgas_t pgas, const T* source, int rank,     \
                                               T* value);                                         \
  mpidsm_status_t mpidsm_pgas_atomic_set_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank);     \
  mpidsm_status_t mpidsm_pgas_atomic_swap_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank,     \
                                              T* old);                                            \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_nbi_##S(mpidsm_pgas_t pgas, T* fetch, const T* source, \
                                                   int rank);                                     \
  mpidsm_status_t mpidsm_pgas_atomic_swap_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest, T value, \
                                                  int rank);
MPIDSM_PGAS_FLOAT_ATOMICS(float, f32)
MPIDSM_PGAS_FLOAT_ATOMICS(double, f64)
/** @} */

/* ---- Teams: collectives over a set of a PGAS's ranks --------------------- */

/** A team (mpidsm::Team): a duplicate of an MPI communicator whose ranks
 * all belong to the PGAS's runtime. Creation, splitting and every
 * collective are collective calls over the team. */
typedef struct mpidsm_team* mpidsm_team_t;

/** Reductions of mpidsm_team_reduce_<t>. */
typedef enum mpidsm_reduce_op {
  MPIDSM_REDUCE_AND = 0,  /**< bitwise and (integer words) */
  MPIDSM_REDUCE_OR = 1,   /**< bitwise or (integer words) */
  MPIDSM_REDUCE_XOR = 2,  /**< bitwise xor (integer words) */
  MPIDSM_REDUCE_MAX = 3,  /**< largest */
  MPIDSM_REDUCE_MIN = 4,  /**< smallest */
  MPIDSM_REDUCE_SUM = 5,  /**< sum */
  MPIDSM_REDUCE_PROD = 6, /**< product */
} mpidsm_reduce_op_t;

/** @{ */
/** Every rank of the PGAS; this node's ranks; the ranks of `comm`. */
mpidsm_status_t mpidsm_team_world(mpidsm_pgas_t pgas, mpidsm_team_t* team);
mpidsm_status_t mpidsm_team_shared(mpidsm_pgas_t pgas, mpidsm_team_t* team);
mpidsm_status_t mpidsm_team_create(mpidsm_pgas_t pgas, MPI_Comm comm, mpidsm_team_t* team);
/** @} */
/** The members start, start+stride, ... (`size` of them, in that order; a
 * negative stride counts down, stride 0 names one member) of `parent`; *team
 * is NULL on the other members. */
mpidsm_status_t mpidsm_team_split_strided(mpidsm_team_t parent, int start, int stride, int size,
                                          mpidsm_team_t* team);
mpidsm_status_t mpidsm_team_destroy(mpidsm_team_t* team);        /**< NULL ignored */
mpidsm_status_t mpidsm_team_rank(mpidsm_team_t team, int* rank); /**< this rank's number */
mpidsm_status_t mpidsm_team_size(mpidsm_team_t team, int* size); /**< members */
/** Member `team_rank` as a member of `other`, or -1 in *other_rank. */
mpidsm_status_t mpidsm_team_translate(mpidsm_team_t team, int team_rank, mpidsm_team_t other,
                                      int* other_rank);
/** Every member has reached it (puts are completed by mpidsm_pgas_quiet). */
mpidsm_status_t mpidsm_team_sync(mpidsm_team_t team);
/** `bytes` of root's `src` into every member's `dest`. */
mpidsm_status_t mpidsm_team_broadcast(mpidsm_team_t team, void* dest, const void* src, size_t bytes,
                                      int root);
/** Every member's `bytes`, in member order, into every `dest`. */
mpidsm_status_t mpidsm_team_fcollect(mpidsm_team_t team, void* dest, const void* src, size_t bytes);
/** As fcollect, with sizes that may differ per member; *total: bytes gathered. */
mpidsm_status_t mpidsm_team_collect(mpidsm_team_t team, void* dest, const void* src, size_t bytes,
                                    size_t* total);
/** Block j (`bytes`) of `src` to member j, into its block i from member i. */
mpidsm_status_t mpidsm_team_alltoall(mpidsm_team_t team, void* dest, const void* src, size_t bytes);
/** As alltoall, in elements of `element_bytes` (1, 2, 4 or 8) taken every
 * `src_stride` elements and placed every `dest_stride` elements. */
mpidsm_status_t mpidsm_team_alltoalls(mpidsm_team_t team, void* dest, const void* src,
                                      ptrdiff_t dest_stride, ptrdiff_t src_stride,
                                      size_t element_bytes, size_t count);

/** Declares mpidsm_team_reduce_S (S: the suffix below): dest[i] = op (an mpidsm_reduce_op_t) over
 * the members of src[i], on every member (dest may equal src). */
#define MPIDSM_TEAM_REDUCE(T, S)                                                            \
  mpidsm_status_t mpidsm_team_reduce_##S(mpidsm_team_t team, int op, T* dest, const T* src, \
                                         size_t count);
/** @{ */
/** Reductions on int32_t, uint32_t, int64_t, uint64_t, float and double. */
MPIDSM_TEAM_REDUCE(int32_t, i32)
MPIDSM_TEAM_REDUCE(uint32_t, u32)
MPIDSM_TEAM_REDUCE(int64_t, i64)
MPIDSM_TEAM_REDUCE(uint64_t, u64)
MPIDSM_TEAM_REDUCE(float, f32)
MPIDSM_TEAM_REDUCE(double, f64)
/** @} */

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
  uint64_t read_faults, write_faults, pages_fetched, prefetched, fetch_waits, fetch_wait_ns,
      prefetch_used, prefetch_unused, evictions, diffs, diff_runs, diff_bytes, diff_messages,
      invalidations, lock_acquires, lock_wait_ns, lock_log_overflows, barriers, barrier_ns,
      mapping_resets, copy_log_overflows, barrier_refetches, barrier_updates_sent, syncs, sync_ns,
      sync_refetches, homes_gained, homes_lost, updates_received, lock_grant_pages, updates_adopted,
      updates_dropped, updates_watched, view_protections, pages_adaptive, pages_invalidate,
      pages_update, pages_read_mostly, pages_single_writer;
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
/** What mpidsm_dsm_make_accessible guarantees for a range. */
typedef enum mpidsm_access {
  MPIDSM_ACCESS_READ = 0,      /**< readable without faults */
  MPIDSM_ACCESS_READ_WRITE = 1 /**< readable and writable without faults */
} mpidsm_access_t;
/** A range made accessible (mpidsm_dsm_make_accessible), until released. */
typedef struct mpidsm_dsm_access* mpidsm_dsm_access_t;
/** Makes [address, address+bytes) of the DSM accessible without faults
 * (access: an mpidsm_access_t) for MPI, the kernel and other libraries,
 * coherently, until mpidsm_dsm_access_release (mpidsm::Dsm::make_accessible).
 * Not collective. Release every handle before freeing its allocation. */
mpidsm_status_t mpidsm_dsm_make_accessible(mpidsm_dsm_t dsm, const void* address, size_t bytes,
                                           int access, mpidsm_dsm_access_t* handle);
/** Ends what mpidsm_dsm_make_accessible began; sets *handle to NULL (NULL ignored). */
mpidsm_status_t mpidsm_dsm_access_release(mpidsm_dsm_access_t* handle);
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

/** @{ */
/** Blocking tagged send and receive (tags 0 .. 2^24-1): the send returns
 * when `buffer` may be reused; a receive of a message larger than
 * `capacity` consumes it and fails with MPIDSM_ERR_TRUNCATED. `info` may be
 * NULL. Large messages go by rendezvous. */
mpidsm_status_t mpidsm_msg_send(mpidsm_runtime_t runtime, const void* buffer, size_t bytes,
                                int rank, int tag);
mpidsm_status_t mpidsm_msg_recv(mpidsm_runtime_t runtime, void* buffer, size_t capacity, int source,
                                int tag, mpidsm_recv_info_t* info);
/** @} */
/** @{ */
/** Non-blocking forms: complete with mpidsm_request_test or _wait, which
 * fill a receive's info. */
mpidsm_status_t mpidsm_msg_isend(mpidsm_runtime_t runtime, const void* buffer, size_t bytes,
                                 int rank, int tag, mpidsm_request_t* request);
mpidsm_status_t mpidsm_msg_irecv(mpidsm_runtime_t runtime, void* buffer, size_t capacity,
                                 int source, int tag, mpidsm_request_t* request);
/** @} */

/* ---- Deprecated names (mpidsm 0.x), kept so existing programs build ----- */

/** Marks a deprecated name, whose warning names its successor `use`
 * (define MPIDSM_NO_DEPRECATION to silence it). */
#if defined(__GNUC__) && !defined(MPIDSM_NO_DEPRECATION)
#define MPIDSM_DEPRECATED(use) __attribute__((deprecated("use " use)))
#else
#define MPIDSM_DEPRECATED(use)
#endif

/** @{ */
/** Deprecated: the arguments of the name in MPIDSM_DEPRECATED's message,
 * in this older order (rank before the addresses). */
MPIDSM_DEPRECATED("mpidsm_pgas_put")
mpidsm_status_t mpidsm_put(mpidsm_pgas_t pgas, int rank, void* dest, const void* src, size_t bytes);
MPIDSM_DEPRECATED("mpidsm_pgas_get")
mpidsm_status_t mpidsm_get(mpidsm_pgas_t pgas, void* dest, int rank, const void* src, size_t bytes);
MPIDSM_DEPRECATED("mpidsm_pgas_put_nbi")
mpidsm_status_t mpidsm_put_nbi(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                               size_t bytes);
MPIDSM_DEPRECATED("mpidsm_pgas_get_nbi")
mpidsm_status_t mpidsm_get_nbi(mpidsm_pgas_t pgas, void* dest, int rank, const void* src,
                               size_t bytes);
MPIDSM_DEPRECATED("mpidsm_pgas_put_signal")
mpidsm_status_t mpidsm_put_signal(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                                  size_t bytes, uint64_t* signal, uint64_t value, int op);
MPIDSM_DEPRECATED("mpidsm_pgas_fence") mpidsm_status_t mpidsm_fence(mpidsm_pgas_t pgas);
MPIDSM_DEPRECATED("mpidsm_pgas_quiet") mpidsm_status_t mpidsm_quiet(mpidsm_pgas_t pgas);
MPIDSM_DEPRECATED("mpidsm_pgas_barrier") mpidsm_status_t mpidsm_barrier(mpidsm_pgas_t pgas);
MPIDSM_DEPRECATED("mpidsm_pgas_atomic_fetch_u64")
mpidsm_status_t mpidsm_atomic_fetch_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                        uint64_t* value);
MPIDSM_DEPRECATED("mpidsm_pgas_atomic_set_u64")
mpidsm_status_t mpidsm_atomic_set_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word, uint64_t value);
MPIDSM_DEPRECATED("mpidsm_pgas_atomic_swap_u64")
mpidsm_status_t mpidsm_atomic_swap_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word, uint64_t value,
                                       uint64_t* old);
MPIDSM_DEPRECATED("mpidsm_pgas_atomic_compare_swap_u64")
mpidsm_status_t mpidsm_atomic_compare_swap_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                               uint64_t expected, uint64_t desired, uint64_t* old);
MPIDSM_DEPRECATED("mpidsm_pgas_atomic_fetch_add_u64")
mpidsm_status_t mpidsm_atomic_fetch_add_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                            uint64_t value, uint64_t* old);
MPIDSM_DEPRECATED("mpidsm_pgas_atomic_add_u64")
mpidsm_status_t mpidsm_atomic_add_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word, uint64_t value);
MPIDSM_DEPRECATED("mpidsm_pgas_wait_until_u64")
mpidsm_status_t mpidsm_wait_until_u64(mpidsm_pgas_t pgas, uint64_t* word, int cmp, uint64_t value,
                                      uint64_t* seen);
MPIDSM_DEPRECATED("mpidsm_msg_send")
mpidsm_status_t mpidsm_send(mpidsm_runtime_t runtime, int rank, int tag, const void* buffer,
                            size_t bytes);
MPIDSM_DEPRECATED("mpidsm_msg_recv")
mpidsm_status_t mpidsm_recv(mpidsm_runtime_t runtime, int source, int tag, void* buffer,
                            size_t capacity, mpidsm_recv_info_t* info);
/** @} */

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* MPIDSM_H */
