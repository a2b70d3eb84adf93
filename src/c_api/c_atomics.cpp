// The C API's atomics and point-to-point waits on symmetric words of
// int32_t, uint32_t, int64_t and uint64_t (MPIDSM_PGAS_ATOMICS in
// mpidsm.h), and fetch, set and swap of float and double
// (MPIDSM_PGAS_FLOAT_ATOMICS): one template per operation, instantiated
// per type below.
#include <cstdint>
#include <string>

#include "c_boundary.hpp"

using mpidsm::c_api::guarded;
using mpidsm::c_api::pgas_of;
using mpidsm::c_api::require;

namespace {

mpidsm::Compare compare_of(int cmp, const char* function) {
  switch (cmp) {
    case MPIDSM_CMP_EQ:
      return mpidsm::Compare::eq;
    case MPIDSM_CMP_NE:
      return mpidsm::Compare::ne;
    case MPIDSM_CMP_GT:
      return mpidsm::Compare::gt;
    case MPIDSM_CMP_GE:
      return mpidsm::Compare::ge;
    case MPIDSM_CMP_LT:
      return mpidsm::Compare::lt;
    case MPIDSM_CMP_LE:
      return mpidsm::Compare::le;
  }
  throw mpidsm::Error(
      mpidsm::Errc::invalid_argument, mpidsm::no_rank,
      std::string(function) + ": cmp " + std::to_string(cmp) + " is not an mpidsm_cmp_t");
}

// A fetching operation: `op(pgas, remote word)` returns the old value.
template <class T, class Op>
mpidsm_status_t fetching(const char* function, mpidsm_pgas_t pgas, const T* word, int rank, T* old,
                         Op&& op) {
  return guarded(function, [&] {
    mpidsm::Pgas& p = require(pgas, function, "pgas").pgas;
    const T was = op(p, p.global(word, rank));
    if (old) *old = was;
  });
}

// A non-fetching operation: `op(pgas, remote word)`.
template <class T, class Op>
mpidsm_status_t posted(const char* function, mpidsm_pgas_t pgas, T* word, int rank, Op&& op) {
  return guarded(function, [&] {
    mpidsm::Pgas& p = require(pgas, function, "pgas").pgas;
    op(p, p.global(word, rank));
  });
}

template <class T>
mpidsm_status_t wait_until(const char* function, mpidsm_pgas_t pgas, const T* word, int cmp,
                           T value, T* seen) {
  return guarded(function, [&] {
    mpidsm::Pgas& p = require(pgas, function, "pgas").pgas;
    const T got = p.wait_until<T>(word, compare_of(cmp, function), value);
    if (seen) *seen = got;
  });
}

template <class T>
mpidsm_status_t test(const char* function, mpidsm_pgas_t pgas, const T* word, int cmp, T value,
                     int* true_now) {
  return guarded(function, [&] {
    mpidsm::Pgas& p = require(pgas, function, "pgas").pgas;
    int& out = require(true_now, function, "true_now");
    out = p.test<T>(word, compare_of(cmp, function), value) ? 1 : 0;
  });
}

// A non-blocking fetching operation: the old value into *fetch (not NULL).
template <class T, class Op>
mpidsm_status_t fetching_nbi(const char* function, mpidsm_pgas_t pgas, T* fetch, const T* word,
                             int rank, Op&& op) {
  return guarded(function, [&] {
    mpidsm::Pgas& p = require(pgas, function, "pgas").pgas;
    op(p, &require(fetch, function, "fetch"), p.global(word, rank));
  });
}

// The _all, _any and _some waits and tests: `f(pgas, compare)`.
template <class F>
mpidsm_status_t on_words(const char* function, mpidsm_pgas_t pgas, int cmp, F&& f) {
  return guarded(function, [&] {
    mpidsm::Pgas& p = require(pgas, function, "pgas").pgas;
    f(p, compare_of(cmp, function));
  });
}

}  // namespace

// The nbi forms of fetch and swap, which integer and float words share.
#define MPIDSM_DEFINE_EXTENDED_ATOMICS(T, S)                                                      \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_nbi_##S(mpidsm_pgas_t pgas, T* fetch, const T* source, \
                                                   int rank) {                                    \
    return fetching_nbi<T>(                                                                       \
        "mpidsm_pgas_atomic_fetch_nbi_" #S, pgas, fetch, source, rank,                            \
        [&](mpidsm::Pgas& p, T* out, auto at) { p.atomic_fetch_nbi(out, at); });                  \
  }                                                                                               \
  mpidsm_status_t mpidsm_pgas_atomic_swap_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest, T value, \
                                                  int rank) {                                     \
    return fetching_nbi<T>(                                                                       \
        "mpidsm_pgas_atomic_swap_nbi_" #S, pgas, fetch, dest, rank,                               \
        [&](mpidsm::Pgas& p, T* out, auto at) { p.atomic_swap_nbi(out, at, value); });            \
  }

// fetch, set and swap, which every word type has (OpenSHMEM's extended atomics).
#define MPIDSM_DEFINE_FETCH_SET_SWAP(T, S)                                                     \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_##S(mpidsm_pgas_t pgas, const T* source, int rank,  \
                                               T* value) {                                     \
    return guarded("mpidsm_pgas_atomic_fetch_" #S, [&] {                                       \
      mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_atomic_fetch_" #S ": pgas");                \
      require(value, "mpidsm_pgas_atomic_fetch_" #S ": value") =                               \
          p.atomic_fetch(p.global(source, rank));                                              \
    });                                                                                        \
  }                                                                                            \
  mpidsm_status_t mpidsm_pgas_atomic_set_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank) { \
    return posted("mpidsm_pgas_atomic_set_" #S, pgas, dest, rank,                              \
                  [&](mpidsm::Pgas& p, auto at) { p.atomic_set(at, value); });                 \
  }                                                                                            \
  mpidsm_status_t mpidsm_pgas_atomic_swap_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank,  \
                                              T* old) {                                        \
    return fetching<T>("mpidsm_pgas_atomic_swap_" #S, pgas, dest, rank, old,                   \
                       [&](mpidsm::Pgas& p, auto at) { return p.atomic_swap(at, value); });    \
  }

// fetch, set and swap of float and double words (MPIDSM_PGAS_FLOAT_ATOMICS).
#define MPIDSM_DEFINE_FLOAT_ATOMICS(T, S) \
  MPIDSM_DEFINE_FETCH_SET_SWAP(T, S)      \
  MPIDSM_DEFINE_EXTENDED_ATOMICS(T, S)

// The definitions MPIDSM_PGAS_ATOMICS(T, S) declares.
#define MPIDSM_DEFINE_ATOMICS(T, S)                                                                \
  MPIDSM_DEFINE_FETCH_SET_SWAP(T, S)                                                               \
  mpidsm_status_t mpidsm_pgas_atomic_compare_swap_##S(mpidsm_pgas_t pgas, T* dest, T expected,     \
                                                      T desired, int rank, T* old) {               \
    return fetching<T>(                                                                            \
        "mpidsm_pgas_atomic_compare_swap_" #S, pgas, dest, rank, old,                              \
        [&](mpidsm::Pgas& p, auto at) { return p.atomic_compare_swap(at, expected, desired); });   \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_add_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank, \
                                                   T* old) {                                       \
    return fetching<T>("mpidsm_pgas_atomic_fetch_add_" #S, pgas, dest, rank, old,                  \
                       [&](mpidsm::Pgas& p, auto at) { return p.atomic_fetch_add(at, value); });   \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_and_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank, \
                                                   T* old) {                                       \
    return fetching<T>("mpidsm_pgas_atomic_fetch_and_" #S, pgas, dest, rank, old,                  \
                       [&](mpidsm::Pgas& p, auto at) { return p.atomic_fetch_and(at, value); });   \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_or_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank,  \
                                                  T* old) {                                        \
    return fetching<T>("mpidsm_pgas_atomic_fetch_or_" #S, pgas, dest, rank, old,                   \
                       [&](mpidsm::Pgas& p, auto at) { return p.atomic_fetch_or(at, value); });    \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_xor_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank, \
                                                   T* old) {                                       \
    return fetching<T>("mpidsm_pgas_atomic_fetch_xor_" #S, pgas, dest, rank, old,                  \
                       [&](mpidsm::Pgas& p, auto at) { return p.atomic_fetch_xor(at, value); });   \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_add_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank) {     \
    return posted("mpidsm_pgas_atomic_add_" #S, pgas, dest, rank,                                  \
                  [&](mpidsm::Pgas& p, auto at) { p.atomic_add(at, value); });                     \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_and_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank) {     \
    return posted("mpidsm_pgas_atomic_and_" #S, pgas, dest, rank,                                  \
                  [&](mpidsm::Pgas& p, auto at) { p.atomic_and(at, value); });                     \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_or_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank) {      \
    return posted("mpidsm_pgas_atomic_or_" #S, pgas, dest, rank,                                   \
                  [&](mpidsm::Pgas& p, auto at) { p.atomic_or(at, value); });                      \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_xor_##S(mpidsm_pgas_t pgas, T* dest, T value, int rank) {     \
    return posted("mpidsm_pgas_atomic_xor_" #S, pgas, dest, rank,                                  \
                  [&](mpidsm::Pgas& p, auto at) { p.atomic_xor(at, value); });                     \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_wait_until_##S(mpidsm_pgas_t pgas, const T* word, int cmp, T value,  \
                                             T* seen) {                                            \
    return wait_until<T>("mpidsm_pgas_wait_until_" #S, pgas, word, cmp, value, seen);              \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_test_##S(mpidsm_pgas_t pgas, const T* word, int cmp, T value,        \
                                       int* true_now) {                                            \
    return test<T>("mpidsm_pgas_test_" #S, pgas, word, cmp, value, true_now);                      \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_compare_swap_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,   \
                                                          T expected, T desired, int rank) {       \
    return fetching_nbi<T>("mpidsm_pgas_atomic_compare_swap_nbi_" #S, pgas, fetch, dest, rank,     \
                           [&](mpidsm::Pgas& p, T* out, auto at) {                                 \
                             p.atomic_compare_swap_nbi(out, at, expected, desired);                \
                           });                                                                     \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_add_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,      \
                                                       T value, int rank) {                        \
    return fetching_nbi<T>(                                                                        \
        "mpidsm_pgas_atomic_fetch_add_nbi_" #S, pgas, fetch, dest, rank,                           \
        [&](mpidsm::Pgas& p, T* out, auto at) { p.atomic_fetch_add_nbi(out, at, value); });        \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_and_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,      \
                                                       T value, int rank) {                        \
    return fetching_nbi<T>(                                                                        \
        "mpidsm_pgas_atomic_fetch_and_nbi_" #S, pgas, fetch, dest, rank,                           \
        [&](mpidsm::Pgas& p, T* out, auto at) { p.atomic_fetch_and_nbi(out, at, value); });        \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_or_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,       \
                                                      T value, int rank) {                         \
    return fetching_nbi<T>(                                                                        \
        "mpidsm_pgas_atomic_fetch_or_nbi_" #S, pgas, fetch, dest, rank,                            \
        [&](mpidsm::Pgas& p, T* out, auto at) { p.atomic_fetch_or_nbi(out, at, value); });         \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_atomic_fetch_xor_nbi_##S(mpidsm_pgas_t pgas, T* fetch, T* dest,      \
                                                       T value, int rank) {                        \
    return fetching_nbi<T>(                                                                        \
        "mpidsm_pgas_atomic_fetch_xor_nbi_" #S, pgas, fetch, dest, rank,                           \
        [&](mpidsm::Pgas& p, T* out, auto at) { p.atomic_fetch_xor_nbi(out, at, value); });        \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_wait_until_all_##S(mpidsm_pgas_t pgas, const T* words, size_t count, \
                                                 const int* status, int cmp, T value) {            \
    return on_words("mpidsm_pgas_wait_until_all_" #S, pgas, cmp, [&](mpidsm::Pgas& p, auto c) {    \
      p.wait_until_all(words, count, status, c, value);                                            \
    });                                                                                            \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_wait_until_any_##S(mpidsm_pgas_t pgas, const T* words, size_t count, \
                                                 const int* status, int cmp, T value,              \
                                                 size_t* index) {                                  \
    return on_words("mpidsm_pgas_wait_until_any_" #S, pgas, cmp, [&](mpidsm::Pgas& p, auto c) {    \
      require(index, "mpidsm_pgas_wait_until_any_" #S, "index") =                                  \
          p.wait_until_any(words, count, status, c, value);                                        \
    });                                                                                            \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_wait_until_some_##S(                                                 \
      mpidsm_pgas_t pgas, const T* words, size_t count, size_t* indices, const int* status,        \
      int cmp, T value, size_t* found) {                                                           \
    return on_words("mpidsm_pgas_wait_until_some_" #S, pgas, cmp, [&](mpidsm::Pgas& p, auto c) {   \
      size_t& out = require(found, "mpidsm_pgas_wait_until_some_" #S, "found");                    \
      out = p.wait_until_some(words, count,                                                        \
                              &require(indices, "mpidsm_pgas_wait_until_some_" #S, "indices"),     \
                              status, c, value);                                                   \
    });                                                                                            \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_test_all_##S(mpidsm_pgas_t pgas, const T* words, size_t count,       \
                                           const int* status, int cmp, T value, int* true_now) {   \
    return on_words("mpidsm_pgas_test_all_" #S, pgas, cmp, [&](mpidsm::Pgas& p, auto c) {          \
      require(true_now, "mpidsm_pgas_test_all_" #S, "true_now") =                                  \
          p.test_all(words, count, status, c, value) ? 1 : 0;                                      \
    });                                                                                            \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_test_any_##S(mpidsm_pgas_t pgas, const T* words, size_t count,       \
                                           const int* status, int cmp, T value, size_t* index) {   \
    return on_words("mpidsm_pgas_test_any_" #S, pgas, cmp, [&](mpidsm::Pgas& p, auto c) {          \
      require(index, "mpidsm_pgas_test_any_" #S, "index") =                                        \
          p.test_any(words, count, status, c, value);                                              \
    });                                                                                            \
  }                                                                                                \
  mpidsm_status_t mpidsm_pgas_test_some_##S(mpidsm_pgas_t pgas, const T* words, size_t count,      \
                                            size_t* indices, const int* status, int cmp, T value,  \
                                            size_t* found) {                                       \
    return on_words("mpidsm_pgas_test_some_" #S, pgas, cmp, [&](mpidsm::Pgas& p, auto c) {         \
      size_t& out = require(found, "mpidsm_pgas_test_some_" #S, "found");                          \
      out = p.test_some(words, count, &require(indices, "mpidsm_pgas_test_some_" #S, "indices"),   \
                        status, c, value);                                                         \
    });                                                                                            \
  }                                                                                                \
  MPIDSM_DEFINE_EXTENDED_ATOMICS(T, S)

extern "C" {
MPIDSM_DEFINE_ATOMICS(int32_t, i32)
MPIDSM_DEFINE_ATOMICS(uint32_t, u32)
MPIDSM_DEFINE_ATOMICS(int64_t, i64)
MPIDSM_DEFINE_ATOMICS(uint64_t, u64)
MPIDSM_DEFINE_FLOAT_ATOMICS(float, f32)
MPIDSM_DEFINE_FLOAT_ATOMICS(double, f64)
}  // extern "C"
