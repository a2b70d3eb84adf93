// Point-to-point synchronisation (wait_until, test and their _all, _any,
// _some and _vector forms), signals, fence and quiet, each over the PGAS
// face: a wait polls this PE's symmetric word while driving progress, and
// gives up the CPU when PEs outnumber cores.
#include <cstdint>

#include "library.hpp"

namespace mpidsm::shmem {
namespace {

// The waits over the PGAS face, for one element type.
template <class T>
struct Waits {
  static void until(const char* f, T* ivar, int cmp, T value) noexcept {
    guarded(f, [&] { pgas(f).wait_until(ivar, compare_of(cmp, f), value); });
  }
  static void all(const char* f, T* ivars, std::size_t n, const int* status, int cmp,
                  const T* values, bool vector) noexcept {
    guarded(f, [&] {
      Pgas& p = pgas(f);
      if (vector)
        p.wait_until_all_vector(ivars, n, status, compare_of(cmp, f), values);
      else
        p.wait_until_all(ivars, n, status, compare_of(cmp, f), *values);
    });
  }
  static std::size_t any(const char* f, T* ivars, std::size_t n, const int* status, int cmp,
                         const T* values, bool vector) noexcept {
    return guarded(f, [&] {
      Pgas& p = pgas(f);
      return vector ? p.wait_until_any_vector(ivars, n, status, compare_of(cmp, f), values)
                    : p.wait_until_any(ivars, n, status, compare_of(cmp, f), *values);
    });
  }
  static std::size_t some(const char* f, T* ivars, std::size_t n, std::size_t* indices,
                          const int* status, int cmp, const T* values, bool vector) noexcept {
    return guarded(f, [&] {
      Pgas& p = pgas(f);
      return vector
                 ? p.wait_until_some_vector(ivars, n, indices, status, compare_of(cmp, f), values)
                 : p.wait_until_some(ivars, n, indices, status, compare_of(cmp, f), *values);
    });
  }
  static int test(const char* f, T* ivar, int cmp, T value) noexcept {
    return guarded(f, [&] { return pgas(f).test(ivar, compare_of(cmp, f), value) ? 1 : 0; });
  }
  static int test_all(const char* f, T* ivars, std::size_t n, const int* status, int cmp,
                      const T* values, bool vector) noexcept {
    return guarded(f, [&] {
      Pgas& p = pgas(f);
      return (vector ? p.test_all_vector(ivars, n, status, compare_of(cmp, f), values)
                     : p.test_all(ivars, n, status, compare_of(cmp, f), *values))
                 ? 1
                 : 0;
    });
  }
  static std::size_t test_any(const char* f, T* ivars, std::size_t n, const int* status, int cmp,
                              const T* values, bool vector) noexcept {
    return guarded(f, [&] {
      Pgas& p = pgas(f);
      return vector ? p.test_any_vector(ivars, n, status, compare_of(cmp, f), values)
                    : p.test_any(ivars, n, status, compare_of(cmp, f), *values);
    });
  }
  static std::size_t test_some(const char* f, T* ivars, std::size_t n, std::size_t* indices,
                               const int* status, int cmp, const T* values, bool vector) noexcept {
    return guarded(f, [&] {
      Pgas& p = pgas(f);
      return vector ? p.test_some_vector(ivars, n, indices, status, compare_of(cmp, f), values)
                    : p.test_some(ivars, n, indices, status, compare_of(cmp, f), *values);
    });
  }
};

void check_ctx(shmem_ctx_t ctx, const char* f) {
  world_pe(ctx, 0, f);  // SHMEM_CTX_INVALID is an error; team contexts complete as the default
}

}  // namespace
}  // namespace mpidsm::shmem

using namespace mpidsm::shmem;

#define MPIDSM_SHMEM_DEFINE_SYNC(TYPE, NAME)                                                      \
  void shmem_##NAME##_wait_until(TYPE* ivar, int cmp, TYPE cmp_value) {                           \
    Waits<TYPE>::until("shmem_" #NAME "_wait_until", ivar, cmp, cmp_value);                       \
  }                                                                                               \
  void shmem_##NAME##_wait_until_all(TYPE* ivars, size_t nelems, const int* status, int cmp,      \
                                     TYPE cmp_value) {                                            \
    Waits<TYPE>::all("shmem_" #NAME "_wait_until_all", ivars, nelems, status, cmp, &cmp_value,    \
                     false);                                                                      \
  }                                                                                               \
  size_t shmem_##NAME##_wait_until_any(TYPE* ivars, size_t nelems, const int* status, int cmp,    \
                                       TYPE cmp_value) {                                          \
    return Waits<TYPE>::any("shmem_" #NAME "_wait_until_any", ivars, nelems, status, cmp,         \
                            &cmp_value, false);                                                   \
  }                                                                                               \
  size_t shmem_##NAME##_wait_until_some(TYPE* ivars, size_t nelems, size_t* indices,              \
                                        const int* status, int cmp, TYPE cmp_value) {             \
    return Waits<TYPE>::some("shmem_" #NAME "_wait_until_some", ivars, nelems, indices, status,   \
                             cmp, &cmp_value, false);                                             \
  }                                                                                               \
  void shmem_##NAME##_wait_until_all_vector(TYPE* ivars, size_t nelems, const int* status,        \
                                            int cmp, TYPE* cmp_values) {                          \
    Waits<TYPE>::all("shmem_" #NAME "_wait_until_all_vector", ivars, nelems, status, cmp,         \
                     cmp_values, true);                                                           \
  }                                                                                               \
  size_t shmem_##NAME##_wait_until_any_vector(TYPE* ivars, size_t nelems, const int* status,      \
                                              int cmp, TYPE* cmp_values) {                        \
    return Waits<TYPE>::any("shmem_" #NAME "_wait_until_any_vector", ivars, nelems, status, cmp,  \
                            cmp_values, true);                                                    \
  }                                                                                               \
  size_t shmem_##NAME##_wait_until_some_vector(TYPE* ivars, size_t nelems, size_t* indices,       \
                                               const int* status, int cmp, TYPE* cmp_values) {    \
    return Waits<TYPE>::some("shmem_" #NAME "_wait_until_some_vector", ivars, nelems, indices,    \
                             status, cmp, cmp_values, true);                                      \
  }                                                                                               \
  int shmem_##NAME##_test(TYPE* ivar, int cmp, TYPE cmp_value) {                                  \
    return Waits<TYPE>::test("shmem_" #NAME "_test", ivar, cmp, cmp_value);                       \
  }                                                                                               \
  int shmem_##NAME##_test_all(TYPE* ivars, size_t nelems, const int* status, int cmp,             \
                              TYPE cmp_value) {                                                   \
    return Waits<TYPE>::test_all("shmem_" #NAME "_test_all", ivars, nelems, status, cmp,          \
                                 &cmp_value, false);                                              \
  }                                                                                               \
  size_t shmem_##NAME##_test_any(TYPE* ivars, size_t nelems, const int* status, int cmp,          \
                                 TYPE cmp_value) {                                                \
    return Waits<TYPE>::test_any("shmem_" #NAME "_test_any", ivars, nelems, status, cmp,          \
                                 &cmp_value, false);                                              \
  }                                                                                               \
  size_t shmem_##NAME##_test_some(TYPE* ivars, size_t nelems, size_t* indices, const int* status, \
                                  int cmp, TYPE cmp_value) {                                      \
    return Waits<TYPE>::test_some("shmem_" #NAME "_test_some", ivars, nelems, indices, status,    \
                                  cmp, &cmp_value, false);                                        \
  }                                                                                               \
  int shmem_##NAME##_test_all_vector(TYPE* ivars, size_t nelems, const int* status, int cmp,      \
                                     TYPE* cmp_values) {                                          \
    return Waits<TYPE>::test_all("shmem_" #NAME "_test_all_vector", ivars, nelems, status, cmp,   \
                                 cmp_values, true);                                               \
  }                                                                                               \
  size_t shmem_##NAME##_test_any_vector(TYPE* ivars, size_t nelems, const int* status, int cmp,   \
                                        TYPE* cmp_values) {                                       \
    return Waits<TYPE>::test_any("shmem_" #NAME "_test_any_vector", ivars, nelems, status, cmp,   \
                                 cmp_values, true);                                               \
  }                                                                                               \
  size_t shmem_##NAME##_test_some_vector(TYPE* ivars, size_t nelems, size_t* indices,             \
                                         const int* status, int cmp, TYPE* cmp_values) {          \
    return Waits<TYPE>::test_some("shmem_" #NAME "_test_some_vector", ivars, nelems, indices,     \
                                  status, cmp, cmp_values, true);                                 \
  }
#define MPIDSM_SHMEM_DEFINE_DEPRECATED_WAIT(TYPE, NAME)                        \
  void shmem_##NAME##_wait(TYPE* ivar, TYPE cmp_value) {                       \
    Waits<TYPE>::until("shmem_" #NAME "_wait", ivar, SHMEM_CMP_NE, cmp_value); \
  }

extern "C" {
MPIDSM_SHMEM_SYNC_TYPES(MPIDSM_SHMEM_DEFINE_SYNC)
MPIDSM_SHMEM_TO_ALL_BITWISE_TYPES(MPIDSM_SHMEM_DEFINE_DEPRECATED_WAIT)

void shmem_wait(long* ivar, long cmp_value) {
  Waits<long>::until("shmem_wait", ivar, SHMEM_CMP_NE, cmp_value);
}
void shmem_wait_until(long* ivar, int cmp, long cmp_value) {
  Waits<long>::until("shmem_wait_until", ivar, cmp, cmp_value);
}

uint64_t shmem_signal_fetch(const uint64_t* sig_addr) {
  return guarded("shmem_signal_fetch",
                 [&] { return pgas("shmem_signal_fetch").signal_fetch(sig_addr); });
}
uint64_t shmem_signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t cmp_value) {
  const char* f = "shmem_signal_wait_until";
  return guarded(f, [&] { return pgas(f).wait_until(sig_addr, compare_of(cmp, f), cmp_value); });
}

void shmem_fence(void) {
  guarded("shmem_fence", [] { pgas("shmem_fence").fence(); });
}
void shmem_ctx_fence(shmem_ctx_t ctx) {
  guarded("shmem_ctx_fence", [&] {
    check_ctx(ctx, "shmem_ctx_fence");
    pgas("shmem_ctx_fence").fence();
  });
}
void shmem_quiet(void) {
  guarded("shmem_quiet", [] { pgas("shmem_quiet").quiet(); });
}
void shmem_ctx_quiet(shmem_ctx_t ctx) {
  guarded("shmem_ctx_quiet", [&] {
    check_ctx(ctx, "shmem_ctx_quiet");
    pgas("shmem_ctx_quiet").quiet();
  });
}
}  // extern "C"
