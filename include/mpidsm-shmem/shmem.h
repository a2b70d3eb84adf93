/** \file
 * OpenSHMEM 1.5 on mpidsm (libmpidsm_shmem): programs written for `shmem.h`
 * build with `mpidsm-oshcc` (or pkg-config mpidsm-shmem, or
 * find_package(mpidsm) and mpidsm::shmem) and run under `mpirun -np N`.
 * PE numbers are MPI_COMM_WORLD ranks; the program may call MPI_Init before
 * shmem_init, or leave MPI to shmem_init and shmem_finalize.
 *
 * The typed routines come in families over the type tables of the
 * specification; each family's X-macro below lists its (TYPE, TYPENAME)
 * pairs, and docs/openshmem.md lists every routine with its status.
 * Errors (an address outside the symmetric memory, a PE outside the team, a
 * routine called before shmem_init) print a message naming the routine and
 * end the job as shmem_global_exit(1) does. */
#ifndef MPIDSM_SHMEM_H
#define MPIDSM_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants ------------------------------------------------------------ */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "mpidsm"
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 1
#define SHMEM_CMP_NE 2
#define SHMEM_CMP_GT 3
#define SHMEM_CMP_GE 4
#define SHMEM_CMP_LT 5
#define SHMEM_CMP_LE 6
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

#define SHMEM_CTX_SERIALIZED (1L << 0)
#define SHMEM_CTX_PRIVATE (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* The work arrays of the deprecated active-set collectives: mpidsm's
 * collectives keep their own state, so these are only as large as existing
 * programs expect to allocate. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_BARRIER_SYNC_SIZE 4
#define SHMEM_BCAST_SYNC_SIZE 4
#define SHMEM_COLLECT_SYNC_SIZE 4
#define SHMEM_REDUCE_SYNC_SIZE 4
#define SHMEM_ALLTOALL_SYNC_SIZE 4
#define SHMEM_ALLTOALLS_SYNC_SIZE 4
#define SHMEM_SYNC_SIZE 4
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_SYNC_SIZE SHMEM_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ---- handles ---------------------------------------------------------------- */
/** A team: SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED or one a split made. */
typedef struct mpidsm_shmem_team* shmem_team_t;
/** A context: the default one, or one shmem_ctx_create made. */
typedef struct mpidsm_shmem_ctx* shmem_ctx_t;
/** Options of a new team (accepted; mpidsm's contexts need no reservation). */
typedef struct {
  int num_contexts;
} shmem_team_config_t;

/* Address constants, so that they can initialise static handles. */
extern struct mpidsm_shmem_team mpidsm_shmem_team_world;
extern struct mpidsm_shmem_team mpidsm_shmem_team_shared;
extern struct mpidsm_shmem_ctx mpidsm_shmem_ctx_default;
#define SHMEM_TEAM_WORLD (&mpidsm_shmem_team_world)
#define SHMEM_TEAM_SHARED (&mpidsm_shmem_team_shared)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
#define SHMEM_CTX_DEFAULT (&mpidsm_shmem_ctx_default)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* ---- set-up and queries ---------------------------------------------------- */
void shmem_init(void);
int shmem_init_thread(int requested, int* provided);
void shmem_query_thread(int* provided);
int shmem_query_initialized(void);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void* addr, int pe);
void* shmem_ptr(const void* dest, int pe);
void shmem_info_get_version(int* major, int* minor);
void shmem_info_get_name(char* name);
/* OpenSHMEM 1.5's profiling control: levels 0 (off) to 2 are accepted and,
 * with no profiling library attached, change nothing. */
void shmem_pcontrol(const int level, ...);
/* Deprecated forms existing programs still call. */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);

/* ---- symmetric memory ------------------------------------------------------------ */
void* shmem_malloc(size_t size);
void* shmem_calloc(size_t count, size_t size);
void* shmem_align(size_t alignment, size_t size);
void* shmem_realloc(void* ptr, size_t size);
void shmem_free(void* ptr);
void* shmem_malloc_with_hints(size_t size, long hints);
void* shmalloc(size_t size);
void* shmemalign(size_t alignment, size_t size);
void* shrealloc(void* ptr, size_t size);
void shfree(void* ptr);

/* ---- type tables (X(TYPE, TYPENAME)) ------------------------------------------------ */
/* Left as laid out: clang-format 14 reflows these X-lists differently on each pass. */
/* clang-format off */
/** Every standard RMA type (table "Standard RMA Types and Names"). */
#define MPIDSM_SHMEM_RMA_TYPES(X)                                                           \
  X(float, float)                                                                           \
  X(double, double) X(long double, longdouble) X(char, char) X(signed char, schar)          \
      X(short, short) X(int, int) X(long, long) X(long long, longlong)                      \
          X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)           \
              X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8)      \
                  X(int16_t, int16) X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8)   \
                      X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64)           \
                          X(size_t, size) X(ptrdiff_t, ptrdiff)
/** Sized RMA: X(BITS, C type of that width). */
#define MPIDSM_SHMEM_SIZES(X) X(8, uint8_t) X(16, uint16_t) X(32, uint32_t) X(64, uint64_t)
/** Standard AMO types: inc, add, compare_swap and the extended operations. */
#define MPIDSM_SHMEM_AMO_TYPES(X)                                                            \
  X(int, int)                                                                                \
  X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong)          \
      X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32) \
          X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
/** Extended AMO types beyond the standard ones: fetch, set and swap only. */
#define MPIDSM_SHMEM_AMO_FLOAT_TYPES(X) X(float, float) X(double, double)
/** Bitwise AMO types: and, or, xor. */
#define MPIDSM_SHMEM_AMO_BITWISE_TYPES(X)                                                   \
  X(unsigned int, uint)                                                                     \
  X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) \
      X(uint32_t, uint32) X(uint64_t, uint64)
/** Point-to-point synchronisation types. */
#define MPIDSM_SHMEM_SYNC_TYPES(X)                                                          \
  X(short, short)                                                                           \
  X(int, int) X(long, long) X(long long, longlong) X(unsigned short, ushort)                \
      X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong)        \
          X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64)       \
              X(size_t, size) X(ptrdiff_t, ptrdiff)
/** Reductions and, or, xor. */
#define MPIDSM_SHMEM_BITWISE_REDUCE_TYPES(X)                                                \
  X(unsigned char, uchar)                                                                   \
  X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)                   \
      X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16) X(int32_t, int32)  \
          X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32)       \
              X(uint64_t, uint64) X(size_t, size)
/** Reductions max and min (sum and prod take these and the complex types). */
#define MPIDSM_SHMEM_MINMAX_REDUCE_TYPES(X)                                                 \
  X(char, char)                                                                             \
  X(signed char, schar) X(short, short) X(int, int) X(long, long) X(long long, longlong)    \
      X(ptrdiff_t, ptrdiff) X(unsigned char, uchar) X(unsigned short, ushort)               \
          X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong)    \
              X(int8_t, int8) X(int16_t, int16) X(int32_t, int32) X(int64_t, int64)         \
                  X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32)                 \
                      X(uint64_t, uint64) X(size_t, size) X(float, float) X(double, double) \
                          X(long double, longdouble)
#define MPIDSM_SHMEM_COMPLEX_REDUCE_TYPES(X) X(double _Complex, complexd) X(float _Complex, complexf)
/** The deprecated *_to_all reductions: X(TYPE, TYPENAME) per operation group. */
#define MPIDSM_SHMEM_TO_ALL_BITWISE_TYPES(X) \
  X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define MPIDSM_SHMEM_TO_ALL_MINMAX_TYPES(X) \
  MPIDSM_SHMEM_TO_ALL_BITWISE_TYPES(X) X(float, float) X(double, double) X(long double, longdouble)
#define MPIDSM_SHMEM_TO_ALL_ARITH_TYPES(X) \
  MPIDSM_SHMEM_TO_ALL_MINMAX_TYPES(X) X(double _Complex, complexd) X(float _Complex, complexf)

/* clang-format on */

/* ---- RMA ------------------------------------------------------------------------------ */
#define MPIDSM_SHMEM_DECLARE_RMA(TYPE, NAME)                                                      \
  void shmem_##NAME##_put(TYPE* dest, const TYPE* source, size_t nelems, int pe);                 \
  void shmem_ctx_##NAME##_put(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, size_t nelems,     \
                              int pe);                                                            \
  void shmem_##NAME##_get(TYPE* dest, const TYPE* source, size_t nelems, int pe);                 \
  void shmem_ctx_##NAME##_get(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, size_t nelems,     \
                              int pe);                                                            \
  void shmem_##NAME##_put_nbi(TYPE* dest, const TYPE* source, size_t nelems, int pe);             \
  void shmem_ctx_##NAME##_put_nbi(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, size_t nelems, \
                                  int pe);                                                        \
  void shmem_##NAME##_get_nbi(TYPE* dest, const TYPE* source, size_t nelems, int pe);             \
  void shmem_ctx_##NAME##_get_nbi(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, size_t nelems, \
                                  int pe);                                                        \
  void shmem_##NAME##_p(TYPE* dest, TYPE value, int pe);                                          \
  void shmem_ctx_##NAME##_p(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe);                     \
  TYPE shmem_##NAME##_g(const TYPE* source, int pe);                                              \
  TYPE shmem_ctx_##NAME##_g(shmem_ctx_t ctx, const TYPE* source, int pe);                         \
  void shmem_##NAME##_iput(TYPE* dest, const TYPE* source, ptrdiff_t dst, ptrdiff_t sst,          \
                           size_t nelems, int pe);                                                \
  void shmem_ctx_##NAME##_iput(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, ptrdiff_t dst,    \
                               ptrdiff_t sst, size_t nelems, int pe);                             \
  void shmem_##NAME##_iget(TYPE* dest, const TYPE* source, ptrdiff_t dst, ptrdiff_t sst,          \
                           size_t nelems, int pe);                                                \
  void shmem_ctx_##NAME##_iget(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, ptrdiff_t dst,    \
                               ptrdiff_t sst, size_t nelems, int pe);                             \
  void shmem_##NAME##_put_signal(TYPE* dest, const TYPE* source, size_t nelems,                   \
                                 uint64_t* sig_addr, uint64_t signal, int sig_op, int pe);        \
  void shmem_ctx_##NAME##_put_signal(shmem_ctx_t ctx, TYPE* dest, const TYPE* source,             \
                                     size_t nelems, uint64_t* sig_addr, uint64_t signal,          \
                                     int sig_op, int pe);                                         \
  void shmem_##NAME##_put_signal_nbi(TYPE* dest, const TYPE* source, size_t nelems,               \
                                     uint64_t* sig_addr, uint64_t signal, int sig_op, int pe);    \
  void shmem_ctx_##NAME##_put_signal_nbi(shmem_ctx_t ctx, TYPE* dest, const TYPE* source,         \
                                         size_t nelems, uint64_t* sig_addr, uint64_t signal,      \
                                         int sig_op, int pe);
MPIDSM_SHMEM_RMA_TYPES(MPIDSM_SHMEM_DECLARE_RMA)

/* Sized and untyped forms: shmem_put8 ... shmem_put128, shmem_putmem (SIZE mem). */
#define MPIDSM_SHMEM_DECLARE_SIZED_RMA(SIZE)                                                       \
  void shmem_put##SIZE(void* dest, const void* source, size_t nelems, int pe);                     \
  void shmem_ctx_put##SIZE(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,         \
                           int pe);                                                                \
  void shmem_get##SIZE(void* dest, const void* source, size_t nelems, int pe);                     \
  void shmem_ctx_get##SIZE(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,         \
                           int pe);                                                                \
  void shmem_put##SIZE##_nbi(void* dest, const void* source, size_t nelems, int pe);               \
  void shmem_ctx_put##SIZE##_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,   \
                                 int pe);                                                          \
  void shmem_get##SIZE##_nbi(void* dest, const void* source, size_t nelems, int pe);               \
  void shmem_ctx_get##SIZE##_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,   \
                                 int pe);                                                          \
  void shmem_put##SIZE##_signal(void* dest, const void* source, size_t nelems, uint64_t* sig_addr, \
                                uint64_t signal, int sig_op, int pe);                              \
  void shmem_ctx_put##SIZE##_signal(shmem_ctx_t ctx, void* dest, const void* source,               \
                                    size_t nelems, uint64_t* sig_addr, uint64_t signal,            \
                                    int sig_op, int pe);                                           \
  void shmem_put##SIZE##_signal_nbi(void* dest, const void* source, size_t nelems,                 \
                                    uint64_t* sig_addr, uint64_t signal, int sig_op, int pe);      \
  void shmem_ctx_put##SIZE##_signal_nbi(shmem_ctx_t ctx, void* dest, const void* source,           \
                                        size_t nelems, uint64_t* sig_addr, uint64_t signal,        \
                                        int sig_op, int pe);
#define MPIDSM_SHMEM_DECLARE_STRIDED(SIZE)                                                  \
  void shmem_iput##SIZE(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst,       \
                        size_t nelems, int pe);                                             \
  void shmem_ctx_iput##SIZE(shmem_ctx_t ctx, void* dest, const void* source, ptrdiff_t dst, \
                            ptrdiff_t sst, size_t nelems, int pe);                          \
  void shmem_iget##SIZE(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst,       \
                        size_t nelems, int pe);                                             \
  void shmem_ctx_iget##SIZE(shmem_ctx_t ctx, void* dest, const void* source, ptrdiff_t dst, \
                            ptrdiff_t sst, size_t nelems, int pe);
#define MPIDSM_SHMEM_DECLARE_SIZED_ALL(SIZE, TYPE) \
  MPIDSM_SHMEM_DECLARE_SIZED_RMA(SIZE) MPIDSM_SHMEM_DECLARE_STRIDED(SIZE)
MPIDSM_SHMEM_SIZES(MPIDSM_SHMEM_DECLARE_SIZED_ALL)
MPIDSM_SHMEM_DECLARE_SIZED_RMA(128)
MPIDSM_SHMEM_DECLARE_STRIDED(128)
MPIDSM_SHMEM_DECLARE_SIZED_RMA(mem)

uint64_t shmem_signal_fetch(const uint64_t* sig_addr);
uint64_t shmem_signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t cmp_value);

/* ---- atomics -------------------------------------------------------------------------- */
#define MPIDSM_SHMEM_DECLARE_AMO_EXTENDED(TYPE, NAME)                                           \
  TYPE shmem_##NAME##_atomic_fetch(const TYPE* source, int pe);                                 \
  TYPE shmem_ctx_##NAME##_atomic_fetch(shmem_ctx_t ctx, const TYPE* source, int pe);            \
  void shmem_##NAME##_atomic_set(TYPE* dest, TYPE value, int pe);                               \
  void shmem_ctx_##NAME##_atomic_set(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe);          \
  TYPE shmem_##NAME##_atomic_swap(TYPE* dest, TYPE value, int pe);                              \
  TYPE shmem_ctx_##NAME##_atomic_swap(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe);         \
  void shmem_##NAME##_atomic_fetch_nbi(TYPE* fetch, const TYPE* source, int pe);                \
  void shmem_ctx_##NAME##_atomic_fetch_nbi(shmem_ctx_t ctx, TYPE* fetch, const TYPE* source,    \
                                           int pe);                                             \
  void shmem_##NAME##_atomic_swap_nbi(TYPE* fetch, TYPE* dest, TYPE value, int pe);             \
  void shmem_ctx_##NAME##_atomic_swap_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest, TYPE value, \
                                          int pe);
#define MPIDSM_SHMEM_DECLARE_AMO_STANDARD(TYPE, NAME)                                             \
  MPIDSM_SHMEM_DECLARE_AMO_EXTENDED(TYPE, NAME)                                                   \
  TYPE shmem_##NAME##_atomic_fetch_inc(TYPE* dest, int pe);                                       \
  TYPE shmem_ctx_##NAME##_atomic_fetch_inc(shmem_ctx_t ctx, TYPE* dest, int pe);                  \
  void shmem_##NAME##_atomic_inc(TYPE* dest, int pe);                                             \
  void shmem_ctx_##NAME##_atomic_inc(shmem_ctx_t ctx, TYPE* dest, int pe);                        \
  TYPE shmem_##NAME##_atomic_fetch_add(TYPE* dest, TYPE value, int pe);                           \
  TYPE shmem_ctx_##NAME##_atomic_fetch_add(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe);      \
  void shmem_##NAME##_atomic_add(TYPE* dest, TYPE value, int pe);                                 \
  void shmem_ctx_##NAME##_atomic_add(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe);            \
  TYPE shmem_##NAME##_atomic_compare_swap(TYPE* dest, TYPE cond, TYPE value, int pe);             \
  TYPE shmem_ctx_##NAME##_atomic_compare_swap(shmem_ctx_t ctx, TYPE* dest, TYPE cond, TYPE value, \
                                              int pe);                                            \
  void shmem_##NAME##_atomic_fetch_inc_nbi(TYPE* fetch, TYPE* dest, int pe);                      \
  void shmem_ctx_##NAME##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest, int pe); \
  void shmem_##NAME##_atomic_fetch_add_nbi(TYPE* fetch, TYPE* dest, TYPE value, int pe);          \
  void shmem_ctx_##NAME##_atomic_fetch_add_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest,          \
                                               TYPE value, int pe);                               \
  void shmem_##NAME##_atomic_compare_swap_nbi(TYPE* fetch, TYPE* dest, TYPE cond, TYPE value,     \
                                              int pe);                                            \
  void shmem_ctx_##NAME##_atomic_compare_swap_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest,       \
                                                  TYPE cond, TYPE value, int pe);
#define MPIDSM_SHMEM_DECLARE_AMO_BITWISE_OP(TYPE, NAME, OP)                                   \
  TYPE shmem_##NAME##_atomic_fetch_##OP(TYPE* dest, TYPE value, int pe);                      \
  TYPE shmem_ctx_##NAME##_atomic_fetch_##OP(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe); \
  void shmem_##NAME##_atomic_##OP(TYPE* dest, TYPE value, int pe);                            \
  void shmem_ctx_##NAME##_atomic_##OP(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe);       \
  void shmem_##NAME##_atomic_fetch_##OP##_nbi(TYPE* fetch, TYPE* dest, TYPE value, int pe);   \
  void shmem_ctx_##NAME##_atomic_fetch_##OP##_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest,   \
                                                  TYPE value, int pe);
#define MPIDSM_SHMEM_DECLARE_AMO_BITWISE(TYPE, NAME)   \
  MPIDSM_SHMEM_DECLARE_AMO_BITWISE_OP(TYPE, NAME, and) \
  MPIDSM_SHMEM_DECLARE_AMO_BITWISE_OP(TYPE, NAME, or)  \
  MPIDSM_SHMEM_DECLARE_AMO_BITWISE_OP(TYPE, NAME, xor)
MPIDSM_SHMEM_AMO_TYPES(MPIDSM_SHMEM_DECLARE_AMO_STANDARD)
MPIDSM_SHMEM_AMO_FLOAT_TYPES(MPIDSM_SHMEM_DECLARE_AMO_EXTENDED)
MPIDSM_SHMEM_AMO_BITWISE_TYPES(MPIDSM_SHMEM_DECLARE_AMO_BITWISE)

/* Deprecated atomics (OpenSHMEM 1.3 names). */
#define MPIDSM_SHMEM_DEPRECATED_AMO_TYPES(X) X(int, int) X(long, long) X(long long, longlong)
#define MPIDSM_SHMEM_DECLARE_DEPRECATED_AMO(TYPE, NAME)     \
  TYPE shmem_##NAME##_finc(TYPE* dest, int pe);             \
  void shmem_##NAME##_inc(TYPE* dest, int pe);              \
  TYPE shmem_##NAME##_fadd(TYPE* dest, TYPE value, int pe); \
  void shmem_##NAME##_add(TYPE* dest, TYPE value, int pe);  \
  TYPE shmem_##NAME##_cswap(TYPE* dest, TYPE cond, TYPE value, int pe);
#define MPIDSM_SHMEM_DECLARE_DEPRECATED_EXTENDED(TYPE, NAME) \
  TYPE shmem_##NAME##_swap(TYPE* dest, TYPE value, int pe);  \
  TYPE shmem_##NAME##_fetch(const TYPE* source, int pe);     \
  void shmem_##NAME##_set(TYPE* dest, TYPE value, int pe);
MPIDSM_SHMEM_DEPRECATED_AMO_TYPES(MPIDSM_SHMEM_DECLARE_DEPRECATED_AMO)
MPIDSM_SHMEM_DEPRECATED_AMO_TYPES(MPIDSM_SHMEM_DECLARE_DEPRECATED_EXTENDED)
MPIDSM_SHMEM_AMO_FLOAT_TYPES(MPIDSM_SHMEM_DECLARE_DEPRECATED_EXTENDED)
long shmem_swap(long* dest, long value, int pe);

/* ---- point-to-point synchronisation --------------------------------------------------- */
#define MPIDSM_SHMEM_DECLARE_SYNC(TYPE, NAME)                                                     \
  void shmem_##NAME##_wait_until(TYPE* ivar, int cmp, TYPE cmp_value);                            \
  void shmem_##NAME##_wait_until_all(TYPE* ivars, size_t nelems, const int* status, int cmp,      \
                                     TYPE cmp_value);                                             \
  size_t shmem_##NAME##_wait_until_any(TYPE* ivars, size_t nelems, const int* status, int cmp,    \
                                       TYPE cmp_value);                                           \
  size_t shmem_##NAME##_wait_until_some(TYPE* ivars, size_t nelems, size_t* indices,              \
                                        const int* status, int cmp, TYPE cmp_value);              \
  void shmem_##NAME##_wait_until_all_vector(TYPE* ivars, size_t nelems, const int* status,        \
                                            int cmp, TYPE* cmp_values);                           \
  size_t shmem_##NAME##_wait_until_any_vector(TYPE* ivars, size_t nelems, const int* status,      \
                                              int cmp, TYPE* cmp_values);                         \
  size_t shmem_##NAME##_wait_until_some_vector(TYPE* ivars, size_t nelems, size_t* indices,       \
                                               const int* status, int cmp, TYPE* cmp_values);     \
  int shmem_##NAME##_test(TYPE* ivar, int cmp, TYPE cmp_value);                                   \
  int shmem_##NAME##_test_all(TYPE* ivars, size_t nelems, const int* status, int cmp,             \
                              TYPE cmp_value);                                                    \
  size_t shmem_##NAME##_test_any(TYPE* ivars, size_t nelems, const int* status, int cmp,          \
                                 TYPE cmp_value);                                                 \
  size_t shmem_##NAME##_test_some(TYPE* ivars, size_t nelems, size_t* indices, const int* status, \
                                  int cmp, TYPE cmp_value);                                       \
  int shmem_##NAME##_test_all_vector(TYPE* ivars, size_t nelems, const int* status, int cmp,      \
                                     TYPE* cmp_values);                                           \
  size_t shmem_##NAME##_test_any_vector(TYPE* ivars, size_t nelems, const int* status, int cmp,   \
                                        TYPE* cmp_values);                                        \
  size_t shmem_##NAME##_test_some_vector(TYPE* ivars, size_t nelems, size_t* indices,             \
                                         const int* status, int cmp, TYPE* cmp_values);
MPIDSM_SHMEM_SYNC_TYPES(MPIDSM_SHMEM_DECLARE_SYNC)
/* Deprecated waits. */
#define MPIDSM_SHMEM_DECLARE_DEPRECATED_WAIT(TYPE, NAME) \
  void shmem_##NAME##_wait(TYPE* ivar, TYPE cmp_value);
MPIDSM_SHMEM_TO_ALL_BITWISE_TYPES(MPIDSM_SHMEM_DECLARE_DEPRECATED_WAIT)
void shmem_wait(long* ivar, long cmp_value);
void shmem_wait_until(long* ivar, int cmp, long cmp_value);

/* ---- ordering, completion, locks -------------------------------------------------------- */
void shmem_fence(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_quiet(void);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_set_lock(long* lock);
int shmem_test_lock(long* lock);
void shmem_clear_lock(long* lock);

/* ---- teams and contexts ------------------------------------------------------------------ */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t* config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t* config, long config_mask,
                             shmem_team_t* new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t* xaxis_config, long xaxis_mask,
                        shmem_team_t* xaxis_team, const shmem_team_config_t* yaxis_config,
                        long yaxis_mask, shmem_team_t* yaxis_team);
void shmem_team_destroy(shmem_team_t team);
void* shmem_team_ptr(shmem_team_t team, const void* dest, int pe);
int shmem_ctx_create(long options, shmem_ctx_t* ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t* ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t* team);

/* ---- collectives -------------------------------------------------------------------------- */
void shmem_barrier_all(void);
void shmem_sync_all(void);
int shmem_team_sync(shmem_team_t team);
#define MPIDSM_SHMEM_DECLARE_COLLECTIVES(TYPE, NAME)                                             \
  int shmem_##NAME##_broadcast(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems, \
                               int PE_root);                                                     \
  int shmem_##NAME##_collect(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems);  \
  int shmem_##NAME##_fcollect(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems); \
  int shmem_##NAME##_alltoall(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems); \
  int shmem_##NAME##_alltoalls(shmem_team_t team, TYPE* dest, const TYPE* source, ptrdiff_t dst, \
                               ptrdiff_t sst, size_t nelems);
MPIDSM_SHMEM_RMA_TYPES(MPIDSM_SHMEM_DECLARE_COLLECTIVES)
int shmem_broadcastmem(shmem_team_t team, void* dest, const void* source, size_t nelems,
                       int PE_root);
int shmem_collectmem(shmem_team_t team, void* dest, const void* source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void* dest, const void* source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void* dest, const void* source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void* dest, const void* source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);

#define MPIDSM_SHMEM_DECLARE_REDUCE(TYPE, NAME, OP)                                   \
  int shmem_##NAME##_##OP##_reduce(shmem_team_t team, TYPE* dest, const TYPE* source, \
                                   size_t nreduce);
#define MPIDSM_SHMEM_DECLARE_BITWISE_REDUCE(TYPE, NAME) \
  MPIDSM_SHMEM_DECLARE_REDUCE(TYPE, NAME, and)          \
  MPIDSM_SHMEM_DECLARE_REDUCE(TYPE, NAME, or) MPIDSM_SHMEM_DECLARE_REDUCE(TYPE, NAME, xor)
#define MPIDSM_SHMEM_DECLARE_MINMAX_REDUCE(TYPE, NAME) \
  MPIDSM_SHMEM_DECLARE_REDUCE(TYPE, NAME, max) MPIDSM_SHMEM_DECLARE_REDUCE(TYPE, NAME, min)
#define MPIDSM_SHMEM_DECLARE_ARITH_REDUCE(TYPE, NAME) \
  MPIDSM_SHMEM_DECLARE_REDUCE(TYPE, NAME, sum) MPIDSM_SHMEM_DECLARE_REDUCE(TYPE, NAME, prod)
MPIDSM_SHMEM_BITWISE_REDUCE_TYPES(MPIDSM_SHMEM_DECLARE_BITWISE_REDUCE)
MPIDSM_SHMEM_MINMAX_REDUCE_TYPES(MPIDSM_SHMEM_DECLARE_MINMAX_REDUCE)
MPIDSM_SHMEM_MINMAX_REDUCE_TYPES(MPIDSM_SHMEM_DECLARE_ARITH_REDUCE)
MPIDSM_SHMEM_COMPLEX_REDUCE_TYPES(MPIDSM_SHMEM_DECLARE_ARITH_REDUCE)

/* Deprecated active-set collectives: PEs PE_start, PE_start + 2^logPE_stride,
 * ... (PE_size of them); pSync and pWrk are accepted and not used. */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long* pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long* pSync);
/* OpenSHMEM 1.5's shmem_sync(team) and the deprecated 4-argument form share
 * a name: the number of arguments picks one (shmem_team_sync, or the
 * function above, named in parentheses so that this macro does not expand
 * again). A program may still take the address of shmem_sync. */
#define MPIDSM_SHMEM_SYNC_PICK(_1, _2, _3, _4, NAME, ...) NAME
#define shmem_sync(...)                                                                  \
  MPIDSM_SHMEM_SYNC_PICK(__VA_ARGS__, (shmem_sync), MPIDSM_SHMEM_SYNC_WRONG_ARITY,       \
                         MPIDSM_SHMEM_SYNC_WRONG_ARITY, shmem_team_sync, )(__VA_ARGS__)
#define MPIDSM_SHMEM_DECLARE_ACTIVE_SET(BITS)                                              \
  void shmem_broadcast##BITS(void* dest, const void* source, size_t nelems, int PE_root,   \
                             int PE_start, int logPE_stride, int PE_size, long* pSync);    \
  void shmem_collect##BITS(void* dest, const void* source, size_t nelems, int PE_start,    \
                           int logPE_stride, int PE_size, long* pSync);                    \
  void shmem_fcollect##BITS(void* dest, const void* source, size_t nelems, int PE_start,   \
                            int logPE_stride, int PE_size, long* pSync);                   \
  void shmem_alltoall##BITS(void* dest, const void* source, size_t nelems, int PE_start,   \
                            int logPE_stride, int PE_size, long* pSync);                   \
  void shmem_alltoalls##BITS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, \
                             size_t nelems, int PE_start, int logPE_stride, int PE_size,   \
                             long* pSync);
MPIDSM_SHMEM_DECLARE_ACTIVE_SET(32)
MPIDSM_SHMEM_DECLARE_ACTIVE_SET(64)
#define MPIDSM_SHMEM_DECLARE_TO_ALL(TYPE, NAME, OP)                                            \
  void shmem_##NAME##_##OP##_to_all(TYPE* dest, const TYPE* source, int nreduce, int PE_start, \
                                    int logPE_stride, int PE_size, TYPE* pWrk, long* pSync);
#define MPIDSM_SHMEM_DECLARE_TO_ALL_BITWISE(TYPE, NAME) \
  MPIDSM_SHMEM_DECLARE_TO_ALL(TYPE, NAME, and)          \
  MPIDSM_SHMEM_DECLARE_TO_ALL(TYPE, NAME, or) MPIDSM_SHMEM_DECLARE_TO_ALL(TYPE, NAME, xor)
#define MPIDSM_SHMEM_DECLARE_TO_ALL_MINMAX(TYPE, NAME) \
  MPIDSM_SHMEM_DECLARE_TO_ALL(TYPE, NAME, max) MPIDSM_SHMEM_DECLARE_TO_ALL(TYPE, NAME, min)
#define MPIDSM_SHMEM_DECLARE_TO_ALL_ARITH(TYPE, NAME) \
  MPIDSM_SHMEM_DECLARE_TO_ALL(TYPE, NAME, sum) MPIDSM_SHMEM_DECLARE_TO_ALL(TYPE, NAME, prod)
MPIDSM_SHMEM_TO_ALL_BITWISE_TYPES(MPIDSM_SHMEM_DECLARE_TO_ALL_BITWISE)
MPIDSM_SHMEM_TO_ALL_MINMAX_TYPES(MPIDSM_SHMEM_DECLARE_TO_ALL_MINMAX)
MPIDSM_SHMEM_TO_ALL_ARITH_TYPES(MPIDSM_SHMEM_DECLARE_TO_ALL_ARITH)

#ifdef __cplusplus
}
#endif

#include "shmem_generic.h"

#endif /* MPIDSM_SHMEM_H */
