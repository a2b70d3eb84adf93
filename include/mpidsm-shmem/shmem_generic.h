/** \file
 * OpenSHMEM 1.5's type-generic interfaces (C11 generic selection), included
 * by shmem.h: shmem_put(dest, source, nelems, pe) calls shmem_int_put when
 * dest is an int*, and shmem_put(ctx, dest, source, nelems, pe) its context
 * form. Only C11 and later, not C++ (as the specification defines them).
 * Selection is over the distinct C types; int32_t, size_t and the other
 * typedefs select the routine of the type they name. */
#ifndef MPIDSM_SHMEM_GENERIC_H
#define MPIDSM_SHMEM_GENERIC_H

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

/* The sixth argument: picks the context form when a call passes one more argument. */
#define MPIDSM_SHMEM_ARG6(a, b, c, d, e, f, ...) f
#define MPIDSM_SHMEM_ARG7(a, b, c, d, e, f, g, ...) g
#define MPIDSM_SHMEM_ARG8(a, b, c, d, e, f, g, h, ...) h
#define MPIDSM_SHMEM_ARG9(a, b, c, d, e, f, g, h, i, ...) i

/* P: shmem or shmem_ctx; e: an lvalue of the element type. */
#define MPIDSM_SHMEM_SELECT_RMA(P, e, op)       \
  _Generic((e), float                           \
           : P##_float_##op, double             \
           : P##_double_##op, long double       \
           : P##_longdouble_##op, char          \
           : P##_char_##op, signed char         \
           : P##_schar_##op, short              \
           : P##_short_##op, int                \
           : P##_int_##op, long                 \
           : P##_long_##op, long long           \
           : P##_longlong_##op, unsigned char   \
           : P##_uchar_##op, unsigned short     \
           : P##_ushort_##op, unsigned int      \
           : P##_uint_##op, unsigned long       \
           : P##_ulong_##op, unsigned long long \
           : P##_ulonglong_##op)
#define MPIDSM_SHMEM_SELECT_AMO(P, e, op)       \
  _Generic((e), int                             \
           : P##_int_##op, long                 \
           : P##_long_##op, long long           \
           : P##_longlong_##op, unsigned int    \
           : P##_uint_##op, unsigned long       \
           : P##_ulong_##op, unsigned long long \
           : P##_ulonglong_##op)
#define MPIDSM_SHMEM_SELECT_AMO_EXTENDED(P, e, op) \
  _Generic((e), int                                \
           : P##_int_##op, long                    \
           : P##_long_##op, long long              \
           : P##_longlong_##op, unsigned int       \
           : P##_uint_##op, unsigned long          \
           : P##_ulong_##op, unsigned long long    \
           : P##_ulonglong_##op, float             \
           : P##_float_##op, double                \
           : P##_double_##op)
#define MPIDSM_SHMEM_SELECT_AMO_BITWISE(P, e, op) \
  _Generic((e), unsigned int                      \
           : P##_uint_##op, unsigned long         \
           : P##_ulong_##op, unsigned long long   \
           : P##_ulonglong_##op, int32_t          \
           : P##_int32_##op, int64_t              \
           : P##_int64_##op)
#define MPIDSM_SHMEM_SELECT_SYNC(e, op)           \
  _Generic((e), short                             \
           : shmem_short_##op, int                \
           : shmem_int_##op, long                 \
           : shmem_long_##op, long long           \
           : shmem_longlong_##op, unsigned short  \
           : shmem_ushort_##op, unsigned int      \
           : shmem_uint_##op, unsigned long       \
           : shmem_ulong_##op, unsigned long long \
           : shmem_ulonglong_##op)
#define MPIDSM_SHMEM_SELECT_BITWISE_REDUCE(e, op)          \
  _Generic((e), unsigned char                              \
           : shmem_uchar_##op##_reduce, unsigned short     \
           : shmem_ushort_##op##_reduce, unsigned int      \
           : shmem_uint_##op##_reduce, unsigned long       \
           : shmem_ulong_##op##_reduce, unsigned long long \
           : shmem_ulonglong_##op##_reduce, signed char    \
           : shmem_int8_##op##_reduce, short               \
           : shmem_int16_##op##_reduce, int                \
           : shmem_int32_##op##_reduce, long               \
           : shmem_int64_##op##_reduce)
#define MPIDSM_SHMEM_SELECT_MINMAX_REDUCE(e, op)           \
  _Generic((e), char                                       \
           : shmem_char_##op##_reduce, signed char         \
           : shmem_schar_##op##_reduce, short              \
           : shmem_short_##op##_reduce, int                \
           : shmem_int_##op##_reduce, long                 \
           : shmem_long_##op##_reduce, long long           \
           : shmem_longlong_##op##_reduce, unsigned char   \
           : shmem_uchar_##op##_reduce, unsigned short     \
           : shmem_ushort_##op##_reduce, unsigned int      \
           : shmem_uint_##op##_reduce, unsigned long       \
           : shmem_ulong_##op##_reduce, unsigned long long \
           : shmem_ulonglong_##op##_reduce, float          \
           : shmem_float_##op##_reduce, double             \
           : shmem_double_##op##_reduce, long double       \
           : shmem_longdouble_##op##_reduce)
#define MPIDSM_SHMEM_SELECT_ARITH_REDUCE(e, op)              \
  _Generic((e), char                                         \
           : shmem_char_##op##_reduce, signed char           \
           : shmem_schar_##op##_reduce, short                \
           : shmem_short_##op##_reduce, int                  \
           : shmem_int_##op##_reduce, long                   \
           : shmem_long_##op##_reduce, long long             \
           : shmem_longlong_##op##_reduce, unsigned char     \
           : shmem_uchar_##op##_reduce, unsigned short       \
           : shmem_ushort_##op##_reduce, unsigned int        \
           : shmem_uint_##op##_reduce, unsigned long         \
           : shmem_ulong_##op##_reduce, unsigned long long   \
           : shmem_ulonglong_##op##_reduce, float            \
           : shmem_float_##op##_reduce, double               \
           : shmem_double_##op##_reduce, long double         \
           : shmem_longdouble_##op##_reduce, double _Complex \
           : shmem_complexd_##op##_reduce, float _Complex    \
           : shmem_complexf_##op##_reduce)

/* RMA: the element type is that of the first pointer argument. */
#define mpidsm_shmem_rma_(op, dest, ...) \
  MPIDSM_SHMEM_SELECT_RMA(shmem, *(dest), op)(dest, __VA_ARGS__)
#define mpidsm_shmem_ctx_rma_(op, ctx, dest, ...) \
  MPIDSM_SHMEM_SELECT_RMA(shmem_ctx, *(dest), op)(ctx, dest, __VA_ARGS__)
#define mpidsm_shmem_rma4_(op, ...)                                           \
  MPIDSM_SHMEM_ARG6(__VA_ARGS__, mpidsm_shmem_ctx_rma_, mpidsm_shmem_rma_, ~) \
  (op, __VA_ARGS__)
#define shmem_put(...) mpidsm_shmem_rma4_(put, __VA_ARGS__)
#define shmem_get(...) mpidsm_shmem_rma4_(get, __VA_ARGS__)
#define shmem_put_nbi(...) mpidsm_shmem_rma4_(put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) mpidsm_shmem_rma4_(get_nbi, __VA_ARGS__)
#define shmem_p(...) \
  MPIDSM_SHMEM_ARG6(__VA_ARGS__, ~, mpidsm_shmem_ctx_rma_, mpidsm_shmem_rma_, ~)(p, __VA_ARGS__)
#define shmem_g(...)                                                                \
  MPIDSM_SHMEM_ARG6(__VA_ARGS__, ~, ~, mpidsm_shmem_ctx_rma_, mpidsm_shmem_rma_, ~) \
  (g, __VA_ARGS__)
#define shmem_iput(...)                                                                   \
  MPIDSM_SHMEM_ARG8(__VA_ARGS__, mpidsm_shmem_ctx_rma_, mpidsm_shmem_rma_, ~, ~, ~, ~, ~) \
  (iput, __VA_ARGS__)
#define shmem_iget(...)                                                                   \
  MPIDSM_SHMEM_ARG8(__VA_ARGS__, mpidsm_shmem_ctx_rma_, mpidsm_shmem_rma_, ~, ~, ~, ~, ~) \
  (iget, __VA_ARGS__)
#define shmem_put_signal(...)                                                                \
  MPIDSM_SHMEM_ARG9(__VA_ARGS__, mpidsm_shmem_ctx_rma_, mpidsm_shmem_rma_, ~, ~, ~, ~, ~, ~) \
  (put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...)                                                            \
  MPIDSM_SHMEM_ARG9(__VA_ARGS__, mpidsm_shmem_ctx_rma_, mpidsm_shmem_rma_, ~, ~, ~, ~, ~, ~) \
  (put_signal_nbi, __VA_ARGS__)

/* Atomics: `n` is the argument count without a context. */
#define mpidsm_shmem_amo_(select, op, dest, ...) select(shmem, *(dest), op)(dest, __VA_ARGS__)
#define mpidsm_shmem_ctx_amo_(select, op, ctx, dest, ...) \
  select(shmem_ctx, *(dest), op)(ctx, dest, __VA_ARGS__)
/* Fetching _nbi forms: the element type is that of `fetch`, the first pointer. */
#define mpidsm_shmem_amo2_(s, op, ...)                                              \
  MPIDSM_SHMEM_ARG6(__VA_ARGS__, ~, ~, mpidsm_shmem_ctx_amo_, mpidsm_shmem_amo_, ~) \
  (s, op, __VA_ARGS__)
#define mpidsm_shmem_amo3_(s, op, ...) \
  MPIDSM_SHMEM_ARG6(__VA_ARGS__, ~, mpidsm_shmem_ctx_amo_, mpidsm_shmem_amo_, ~)(s, op, __VA_ARGS__)
#define mpidsm_shmem_amo4_(s, op, ...) \
  MPIDSM_SHMEM_ARG6(__VA_ARGS__, mpidsm_shmem_ctx_amo_, mpidsm_shmem_amo_, ~)(s, op, __VA_ARGS__)
#define mpidsm_shmem_amo5_(s, op, ...) \
  MPIDSM_SHMEM_ARG7(__VA_ARGS__, mpidsm_shmem_ctx_amo_, mpidsm_shmem_amo_, ~)(s, op, __VA_ARGS__)
#define shmem_atomic_fetch(...) \
  mpidsm_shmem_amo2_(MPIDSM_SHMEM_SELECT_AMO_EXTENDED, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO_EXTENDED, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO_EXTENDED, atomic_swap, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO_EXTENDED, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) \
  mpidsm_shmem_amo4_(MPIDSM_SHMEM_SELECT_AMO_EXTENDED, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) \
  mpidsm_shmem_amo2_(MPIDSM_SHMEM_SELECT_AMO, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...) mpidsm_shmem_amo2_(MPIDSM_SHMEM_SELECT_AMO, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...) mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO, atomic_add, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) \
  mpidsm_shmem_amo4_(MPIDSM_SHMEM_SELECT_AMO, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) \
  mpidsm_shmem_amo4_(MPIDSM_SHMEM_SELECT_AMO, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
  mpidsm_shmem_amo5_(MPIDSM_SHMEM_SELECT_AMO, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO_BITWISE, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO_BITWISE, atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO_BITWISE, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO_BITWISE, atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO_BITWISE, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...) \
  mpidsm_shmem_amo3_(MPIDSM_SHMEM_SELECT_AMO_BITWISE, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) \
  mpidsm_shmem_amo4_(MPIDSM_SHMEM_SELECT_AMO_BITWISE, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) \
  mpidsm_shmem_amo4_(MPIDSM_SHMEM_SELECT_AMO_BITWISE, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) \
  mpidsm_shmem_amo4_(MPIDSM_SHMEM_SELECT_AMO_BITWISE, atomic_fetch_xor_nbi, __VA_ARGS__)

/* Point-to-point synchronisation: the type of the first argument. */
#define shmem_wait_until(ivar, ...) MPIDSM_SHMEM_SELECT_SYNC(*(ivar), wait_until)(ivar, __VA_ARGS__)
#define shmem_wait_until_all(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), wait_until_all)(ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), wait_until_any)(ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), wait_until_some)(ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), wait_until_all_vector)(ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), wait_until_any_vector)(ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), wait_until_some_vector)(ivars, __VA_ARGS__)
#define shmem_test(ivar, ...) MPIDSM_SHMEM_SELECT_SYNC(*(ivar), test)(ivar, __VA_ARGS__)
#define shmem_test_all(ivars, ...) MPIDSM_SHMEM_SELECT_SYNC(*(ivars), test_all)(ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...) MPIDSM_SHMEM_SELECT_SYNC(*(ivars), test_any)(ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), test_some)(ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), test_all_vector)(ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), test_any_vector)(ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...) \
  MPIDSM_SHMEM_SELECT_SYNC(*(ivars), test_some_vector)(ivars, __VA_ARGS__)

/* Collectives: the element type is that of dest (after the team). */
#define shmem_broadcast(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_RMA(shmem, *(dest), broadcast)(team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_RMA(shmem, *(dest), collect)(team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_RMA(shmem, *(dest), fcollect)(team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_RMA(shmem, *(dest), alltoall)(team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_RMA(shmem, *(dest), alltoalls)(team, dest, __VA_ARGS__)
#define shmem_and_reduce(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_BITWISE_REDUCE(*(dest), and)(team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_BITWISE_REDUCE(*(dest), or)(team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_BITWISE_REDUCE(*(dest), xor)(team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_MINMAX_REDUCE(*(dest), max)(team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_MINMAX_REDUCE(*(dest), min)(team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_ARITH_REDUCE(*(dest), sum)(team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...) \
  MPIDSM_SHMEM_SELECT_ARITH_REDUCE(*(dest), prod)(team, dest, __VA_ARGS__)

#endif /* C11 and not C++ */

#endif /* MPIDSM_SHMEM_GENERIC_H */
