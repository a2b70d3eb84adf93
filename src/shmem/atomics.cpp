// Atomics of every standard, extended and bitwise type, fetching and not,
// blocking and _nbi, with and without a context, and the deprecated
// OpenSHMEM 1.3 names. Each type goes through the PGAS face's atomic_at on
// the unsigned word of its width (two's complement makes add and
// compare_swap the same operations on it; float and double travel as their
// bits).
#include <bit>
#include <cstdint>
#include <string>

#include "library.hpp"

namespace mpidsm::shmem {
namespace {

template <class T>
using Word = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
static_assert(sizeof(long) == 8 && sizeof(long long) == 8, "an LP64 target");

// Names a type of several words (unsigned long long) so that Type<TYPE>{} works.
template <class T>
using Type = T;
template <class T>
Word<T> bits(T value) {
  return std::bit_cast<Word<T>>(value);
}

// One atomic on the word of T's width at `dest` on `pe`: the old value when
// `fetch` (T{} otherwise). OpenSHMEM's fetch is an add of 0 and its set a
// swap (UCX has no plain atomic store); compare_swap compares with `cond`.
template <class T>
T atomic(const char* f, AtomicOp op, bool fetch, shmem_ctx_t ctx, const T* dest, T value, T cond,
         int pe) noexcept {
  return guarded(f, [&]() -> T {
    Pgas& p = pgas(f);
    return std::bit_cast<T>(static_cast<Word<T>>(
        p.atomic_at(op, dest, sizeof(T), world_pe(ctx, pe, f), bits(value), bits(cond), fetch)));
  });
}

// The _nbi forms: the old value lands in *fetch by the next quiet. The PGAS
// face completes them before returning, which that allows.
template <class T>
void atomic_nbi(const char* f, AtomicOp op, shmem_ctx_t ctx, T* fetch, const T* dest, T value,
                T cond, int pe) noexcept {
  guarded(f, [&] {
    if (!fetch)
      throw Error(Errc::invalid_argument, no_rank, std::string(f) + ": fetch is a null pointer");
  });
  *fetch = atomic(f, op, true, ctx, dest, value, cond, pe);
}

}  // namespace
}  // namespace mpidsm::shmem

using namespace mpidsm::shmem;
using mpidsm::AtomicOp;

#define MPIDSM_SHMEM_BOTH_AMO(RET, NAME, PARAMS, BODY)                     \
  RET shmem_##NAME PARAMS {                                                \
    const shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;                             \
    const char* f = "shmem_" #NAME;                                        \
    BODY;                                                                  \
  }                                                                        \
  RET shmem_ctx_##NAME(shmem_ctx_t ctx, MPIDSM_SHMEM_AMO_UNPAREN PARAMS) { \
    const char* f = "shmem_ctx_" #NAME;                                    \
    BODY;                                                                  \
  }
#define MPIDSM_SHMEM_AMO_UNPAREN(...) __VA_ARGS__

#define MPIDSM_SHMEM_DEFINE_EXTENDED(TYPE, NAME)                                                   \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      TYPE, NAME##_atomic_fetch, (const TYPE* source, int pe),                                     \
      return atomic<TYPE>(f, AtomicOp::add, true, ctx, source, Type<TYPE>{}, Type<TYPE>{}, pe))    \
  MPIDSM_SHMEM_BOTH_AMO(void, NAME##_atomic_set, (TYPE * dest, TYPE value, int pe),                \
                        atomic<TYPE>(f, AtomicOp::swap, true, ctx, dest, value, Type<TYPE>{}, pe)) \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      TYPE, NAME##_atomic_swap, (TYPE * dest, TYPE value, int pe),                                 \
      return atomic<TYPE>(f, AtomicOp::swap, true, ctx, dest, value, Type<TYPE>{}, pe))            \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      void, NAME##_atomic_fetch_nbi, (TYPE * fetch, const TYPE* source, int pe),                   \
      atomic_nbi<TYPE>(f, AtomicOp::add, ctx, fetch, source, Type<TYPE>{}, Type<TYPE>{}, pe))      \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      void, NAME##_atomic_swap_nbi, (TYPE * fetch, TYPE * dest, TYPE value, int pe),               \
      atomic_nbi<TYPE>(f, AtomicOp::swap, ctx, fetch, dest, value, Type<TYPE>{}, pe))
#define MPIDSM_SHMEM_DEFINE_STANDARD(TYPE, NAME)                                                   \
  MPIDSM_SHMEM_DEFINE_EXTENDED(TYPE, NAME)                                                         \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      TYPE, NAME##_atomic_fetch_inc, (TYPE * dest, int pe),                                        \
      return atomic<TYPE>(f, AtomicOp::add, true, ctx, dest, Type<TYPE>(1), Type<TYPE>{}, pe))     \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      void, NAME##_atomic_inc, (TYPE * dest, int pe),                                              \
      atomic<TYPE>(f, AtomicOp::add, false, ctx, dest, Type<TYPE>(1), Type<TYPE>{}, pe))           \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      TYPE, NAME##_atomic_fetch_add, (TYPE * dest, TYPE value, int pe),                            \
      return atomic<TYPE>(f, AtomicOp::add, true, ctx, dest, value, Type<TYPE>{}, pe))             \
  MPIDSM_SHMEM_BOTH_AMO(void, NAME##_atomic_add, (TYPE * dest, TYPE value, int pe),                \
                        atomic<TYPE>(f, AtomicOp::add, false, ctx, dest, value, Type<TYPE>{}, pe)) \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      TYPE, NAME##_atomic_compare_swap, (TYPE * dest, TYPE cond, TYPE value, int pe),              \
      return atomic<TYPE>(f, AtomicOp::compare_swap, true, ctx, dest, value, cond, pe))            \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      void, NAME##_atomic_fetch_inc_nbi, (TYPE * fetch, TYPE * dest, int pe),                      \
      atomic_nbi<TYPE>(f, AtomicOp::add, ctx, fetch, dest, Type<TYPE>(1), Type<TYPE>{}, pe))       \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      void, NAME##_atomic_fetch_add_nbi, (TYPE * fetch, TYPE * dest, TYPE value, int pe),          \
      atomic_nbi<TYPE>(f, AtomicOp::add, ctx, fetch, dest, value, Type<TYPE>{}, pe))               \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      void, NAME##_atomic_compare_swap_nbi,                                                        \
      (TYPE * fetch, TYPE * dest, TYPE cond, TYPE value, int pe),                                  \
      atomic_nbi<TYPE>(f, AtomicOp::compare_swap, ctx, fetch, dest, value, cond, pe))
#define MPIDSM_SHMEM_DEFINE_BITWISE_OP(TYPE, NAME, OP)                                       \
  MPIDSM_SHMEM_BOTH_AMO(                                                                     \
      TYPE, NAME##_atomic_fetch_##OP, (TYPE * dest, TYPE value, int pe),                     \
      return atomic<TYPE>(f, AtomicOp::bit_##OP, true, ctx, dest, value, Type<TYPE>{}, pe))  \
  MPIDSM_SHMEM_BOTH_AMO(                                                                     \
      void, NAME##_atomic_##OP, (TYPE * dest, TYPE value, int pe),                           \
      atomic<TYPE>(f, AtomicOp::bit_##OP, false, ctx, dest, value, Type<TYPE>{}, pe))        \
  MPIDSM_SHMEM_BOTH_AMO(                                                                     \
      void, NAME##_atomic_fetch_##OP##_nbi, (TYPE * fetch, TYPE * dest, TYPE value, int pe), \
      atomic_nbi<TYPE>(f, AtomicOp::bit_##OP, ctx, fetch, dest, value, Type<TYPE>{}, pe))
#define MPIDSM_SHMEM_DEFINE_BITWISE(TYPE, NAME)   \
  MPIDSM_SHMEM_DEFINE_BITWISE_OP(TYPE, NAME, and) \
  MPIDSM_SHMEM_DEFINE_BITWISE_OP(TYPE, NAME, or)  \
  MPIDSM_SHMEM_DEFINE_BITWISE_OP(TYPE, NAME, xor)

// OpenSHMEM 1.3's names, on the default context.
#define MPIDSM_SHMEM_DEFINE_DEPRECATED(TYPE, NAME)                                                \
  TYPE shmem_##NAME##_finc(TYPE* dest, int pe) {                                                  \
    return atomic<TYPE>("shmem_" #NAME "_finc", AtomicOp::add, true, SHMEM_CTX_DEFAULT, dest,     \
                        Type<TYPE>(1), Type<TYPE>{}, pe);                                         \
  }                                                                                               \
  void shmem_##NAME##_inc(TYPE* dest, int pe) {                                                   \
    atomic<TYPE>("shmem_" #NAME "_inc", AtomicOp::add, false, SHMEM_CTX_DEFAULT, dest,            \
                 Type<TYPE>(1), Type<TYPE>{}, pe);                                                \
  }                                                                                               \
  TYPE shmem_##NAME##_fadd(TYPE* dest, TYPE value, int pe) {                                      \
    return atomic<TYPE>("shmem_" #NAME "_fadd", AtomicOp::add, true, SHMEM_CTX_DEFAULT, dest,     \
                        value, Type<TYPE>{}, pe);                                                 \
  }                                                                                               \
  void shmem_##NAME##_add(TYPE* dest, TYPE value, int pe) {                                       \
    atomic<TYPE>("shmem_" #NAME "_add", AtomicOp::add, false, SHMEM_CTX_DEFAULT, dest, value,     \
                 Type<TYPE>{}, pe);                                                               \
  }                                                                                               \
  TYPE shmem_##NAME##_cswap(TYPE* dest, TYPE cond, TYPE value, int pe) {                          \
    return atomic<TYPE>("shmem_" #NAME "_cswap", AtomicOp::compare_swap, true, SHMEM_CTX_DEFAULT, \
                        dest, value, cond, pe);                                                   \
  }
#define MPIDSM_SHMEM_DEFINE_DEPRECATED_EXTENDED(TYPE, NAME)                                      \
  TYPE shmem_##NAME##_swap(TYPE* dest, TYPE value, int pe) {                                     \
    return atomic<TYPE>("shmem_" #NAME "_swap", AtomicOp::swap, true, SHMEM_CTX_DEFAULT, dest,   \
                        value, Type<TYPE>{}, pe);                                                \
  }                                                                                              \
  TYPE shmem_##NAME##_fetch(const TYPE* source, int pe) {                                        \
    return atomic<TYPE>("shmem_" #NAME "_fetch", AtomicOp::add, true, SHMEM_CTX_DEFAULT, source, \
                        Type<TYPE>{}, Type<TYPE>{}, pe);                                         \
  }                                                                                              \
  void shmem_##NAME##_set(TYPE* dest, TYPE value, int pe) {                                      \
    atomic<TYPE>("shmem_" #NAME "_set", AtomicOp::swap, true, SHMEM_CTX_DEFAULT, dest, value,    \
                 Type<TYPE>{}, pe);                                                              \
  }

extern "C" {
MPIDSM_SHMEM_AMO_TYPES(MPIDSM_SHMEM_DEFINE_STANDARD)
MPIDSM_SHMEM_AMO_FLOAT_TYPES(MPIDSM_SHMEM_DEFINE_EXTENDED)
MPIDSM_SHMEM_AMO_BITWISE_TYPES(MPIDSM_SHMEM_DEFINE_BITWISE)
MPIDSM_SHMEM_DEPRECATED_AMO_TYPES(MPIDSM_SHMEM_DEFINE_DEPRECATED)
MPIDSM_SHMEM_DEPRECATED_AMO_TYPES(MPIDSM_SHMEM_DEFINE_DEPRECATED_EXTENDED)
MPIDSM_SHMEM_AMO_FLOAT_TYPES(MPIDSM_SHMEM_DEFINE_DEPRECATED_EXTENDED)
long shmem_swap(long* dest, long value, int pe) {
  return atomic<long>("shmem_swap", AtomicOp::swap, true, SHMEM_CTX_DEFAULT, dest, value, 0L, pe);
}
}  // extern "C"
