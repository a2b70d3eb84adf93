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

enum class Op {
  fetch,
  set,
  swap,
  fetch_add,
  add,
  compare_swap,
  fetch_and,
  bit_and,
  fetch_or,
  bit_or,
  fetch_xor,
  bit_xor
};

// One atomic on the word of T's width at `dest` on `pe`: the old value for
// the fetching ones (T{} for the others).
template <class T>
T atomic(const char* f, Op op, shmem_ctx_t ctx, const T* dest, T value, T cond, int pe) noexcept {
  return guarded(f, [&]() -> T {
    Pgas& p = pgas(f);
    const int rank = world_pe(ctx, pe, f);
    auto run = [&](AtomicOp code, Word<T> operand, Word<T> expected, bool fetch) {
      return static_cast<Word<T>>(
          p.atomic_at(code, dest, sizeof(T), rank, operand, expected, fetch));
    };
    const Word<T> v = bits(value);
    switch (op) {
      case Op::fetch:
        return std::bit_cast<T>(run(AtomicOp::add, 0, 0, true));
      case Op::set:  // a swap: UCX has no plain atomic store
        run(AtomicOp::swap, v, 0, true);
        return T{};
      case Op::swap:
        return std::bit_cast<T>(run(AtomicOp::swap, v, 0, true));
      case Op::fetch_add:
        return std::bit_cast<T>(run(AtomicOp::add, v, 0, true));
      case Op::add:
        run(AtomicOp::add, v, 0, false);
        return T{};
      case Op::compare_swap:
        return std::bit_cast<T>(run(AtomicOp::compare_swap, v, bits(cond), true));
      case Op::fetch_and:
        return std::bit_cast<T>(run(AtomicOp::bit_and, v, 0, true));
      case Op::bit_and:
        run(AtomicOp::bit_and, v, 0, false);
        return T{};
      case Op::fetch_or:
        return std::bit_cast<T>(run(AtomicOp::bit_or, v, 0, true));
      case Op::bit_or:
        run(AtomicOp::bit_or, v, 0, false);
        return T{};
      case Op::fetch_xor:
        return std::bit_cast<T>(run(AtomicOp::bit_xor, v, 0, true));
      case Op::bit_xor:
        run(AtomicOp::bit_xor, v, 0, false);
        return T{};
    }
    return T{};
  });
}

// The _nbi forms: the old value lands in *fetch by the next quiet. The PGAS
// face completes them before returning, which that allows.
template <class T>
void atomic_nbi(const char* f, Op op, shmem_ctx_t ctx, T* fetch, const T* dest, T value, T cond,
                int pe) noexcept {
  guarded(f, [&] {
    if (!fetch)
      throw Error(Errc::invalid_argument, no_rank, std::string(f) + ": fetch is a null pointer");
  });
  *fetch = atomic(f, op, ctx, dest, value, cond, pe);
}

}  // namespace
}  // namespace mpidsm::shmem

using namespace mpidsm::shmem;

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

#define MPIDSM_SHMEM_DEFINE_EXTENDED(TYPE, NAME)                                              \
  MPIDSM_SHMEM_BOTH_AMO(                                                                      \
      TYPE, NAME##_atomic_fetch, (const TYPE* source, int pe),                                \
      return atomic<TYPE>(f, Op::fetch, ctx, source, Type<TYPE>{}, Type<TYPE>{}, pe))         \
  MPIDSM_SHMEM_BOTH_AMO(void, NAME##_atomic_set, (TYPE * dest, TYPE value, int pe),           \
                        atomic<TYPE>(f, Op::set, ctx, dest, value, Type<TYPE>{}, pe))         \
  MPIDSM_SHMEM_BOTH_AMO(TYPE, NAME##_atomic_swap, (TYPE * dest, TYPE value, int pe),          \
                        return atomic<TYPE>(f, Op::swap, ctx, dest, value, Type<TYPE>{}, pe)) \
  MPIDSM_SHMEM_BOTH_AMO(                                                                      \
      void, NAME##_atomic_fetch_nbi, (TYPE * fetch, const TYPE* source, int pe),              \
      atomic_nbi<TYPE>(f, Op::fetch, ctx, fetch, source, Type<TYPE>{}, Type<TYPE>{}, pe))     \
  MPIDSM_SHMEM_BOTH_AMO(void, NAME##_atomic_swap_nbi,                                         \
                        (TYPE * fetch, TYPE * dest, TYPE value, int pe),                      \
                        atomic_nbi<TYPE>(f, Op::swap, ctx, fetch, dest, value, Type<TYPE>{}, pe))
#define MPIDSM_SHMEM_DEFINE_STANDARD(TYPE, NAME)                                                   \
  MPIDSM_SHMEM_DEFINE_EXTENDED(TYPE, NAME)                                                         \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      TYPE, NAME##_atomic_fetch_inc, (TYPE * dest, int pe),                                        \
      return atomic<TYPE>(f, Op::fetch_add, ctx, dest, Type<TYPE>(1), Type<TYPE>{}, pe))           \
  MPIDSM_SHMEM_BOTH_AMO(void, NAME##_atomic_inc, (TYPE * dest, int pe),                            \
                        atomic<TYPE>(f, Op::add, ctx, dest, Type<TYPE>(1), Type<TYPE>{}, pe))      \
  MPIDSM_SHMEM_BOTH_AMO(TYPE, NAME##_atomic_fetch_add, (TYPE * dest, TYPE value, int pe),          \
                        return atomic<TYPE>(f, Op::fetch_add, ctx, dest, value, Type<TYPE>{}, pe)) \
  MPIDSM_SHMEM_BOTH_AMO(void, NAME##_atomic_add, (TYPE * dest, TYPE value, int pe),                \
                        atomic<TYPE>(f, Op::add, ctx, dest, value, Type<TYPE>{}, pe))              \
  MPIDSM_SHMEM_BOTH_AMO(TYPE, NAME##_atomic_compare_swap,                                          \
                        (TYPE * dest, TYPE cond, TYPE value, int pe),                              \
                        return atomic<TYPE>(f, Op::compare_swap, ctx, dest, value, cond, pe))      \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      void, NAME##_atomic_fetch_inc_nbi, (TYPE * fetch, TYPE * dest, int pe),                      \
      atomic_nbi<TYPE>(f, Op::fetch_add, ctx, fetch, dest, Type<TYPE>(1), Type<TYPE>{}, pe))       \
  MPIDSM_SHMEM_BOTH_AMO(                                                                           \
      void, NAME##_atomic_fetch_add_nbi, (TYPE * fetch, TYPE * dest, TYPE value, int pe),          \
      atomic_nbi<TYPE>(f, Op::fetch_add, ctx, fetch, dest, value, Type<TYPE>{}, pe))               \
  MPIDSM_SHMEM_BOTH_AMO(void, NAME##_atomic_compare_swap_nbi,                                      \
                        (TYPE * fetch, TYPE * dest, TYPE cond, TYPE value, int pe),                \
                        atomic_nbi<TYPE>(f, Op::compare_swap, ctx, fetch, dest, value, cond, pe))
#define MPIDSM_SHMEM_DEFINE_BITWISE_OP(TYPE, NAME, OP)                                       \
  MPIDSM_SHMEM_BOTH_AMO(                                                                     \
      TYPE, NAME##_atomic_fetch_##OP, (TYPE * dest, TYPE value, int pe),                     \
      return atomic<TYPE>(f, Op::fetch_##OP, ctx, dest, value, Type<TYPE>{}, pe))            \
  MPIDSM_SHMEM_BOTH_AMO(void, NAME##_atomic_##OP, (TYPE * dest, TYPE value, int pe),         \
                        atomic<TYPE>(f, Op::bit_##OP, ctx, dest, value, Type<TYPE>{}, pe))   \
  MPIDSM_SHMEM_BOTH_AMO(                                                                     \
      void, NAME##_atomic_fetch_##OP##_nbi, (TYPE * fetch, TYPE * dest, TYPE value, int pe), \
      atomic_nbi<TYPE>(f, Op::fetch_##OP, ctx, fetch, dest, value, Type<TYPE>{}, pe))
#define MPIDSM_SHMEM_DEFINE_BITWISE(TYPE, NAME)   \
  MPIDSM_SHMEM_DEFINE_BITWISE_OP(TYPE, NAME, and) \
  MPIDSM_SHMEM_DEFINE_BITWISE_OP(TYPE, NAME, or)  \
  MPIDSM_SHMEM_DEFINE_BITWISE_OP(TYPE, NAME, xor)

// OpenSHMEM 1.3's names, on the default context.
#define MPIDSM_SHMEM_DEFINE_DEPRECATED(TYPE, NAME)                                                 \
  TYPE shmem_##NAME##_finc(TYPE* dest, int pe) {                                                   \
    return atomic<TYPE>("shmem_" #NAME "_finc", Op::fetch_add, SHMEM_CTX_DEFAULT, dest,            \
                        Type<TYPE>(1), Type<TYPE>{}, pe);                                          \
  }                                                                                                \
  void shmem_##NAME##_inc(TYPE* dest, int pe) {                                                    \
    atomic<TYPE>("shmem_" #NAME "_inc", Op::add, SHMEM_CTX_DEFAULT, dest, Type<TYPE>(1),           \
                 Type<TYPE>{}, pe);                                                                \
  }                                                                                                \
  TYPE shmem_##NAME##_fadd(TYPE* dest, TYPE value, int pe) {                                       \
    return atomic<TYPE>("shmem_" #NAME "_fadd", Op::fetch_add, SHMEM_CTX_DEFAULT, dest, value,     \
                        Type<TYPE>{}, pe);                                                         \
  }                                                                                                \
  void shmem_##NAME##_add(TYPE* dest, TYPE value, int pe) {                                        \
    atomic<TYPE>("shmem_" #NAME "_add", Op::add, SHMEM_CTX_DEFAULT, dest, value, Type<TYPE>{},     \
                 pe);                                                                              \
  }                                                                                                \
  TYPE shmem_##NAME##_cswap(TYPE* dest, TYPE cond, TYPE value, int pe) {                           \
    return atomic<TYPE>("shmem_" #NAME "_cswap", Op::compare_swap, SHMEM_CTX_DEFAULT, dest, value, \
                        cond, pe);                                                                 \
  }
#define MPIDSM_SHMEM_DEFINE_DEPRECATED_EXTENDED(TYPE, NAME)                                    \
  TYPE shmem_##NAME##_swap(TYPE* dest, TYPE value, int pe) {                                   \
    return atomic<TYPE>("shmem_" #NAME "_swap", Op::swap, SHMEM_CTX_DEFAULT, dest, value,      \
                        Type<TYPE>{}, pe);                                                     \
  }                                                                                            \
  TYPE shmem_##NAME##_fetch(const TYPE* source, int pe) {                                      \
    return atomic<TYPE>("shmem_" #NAME "_fetch", Op::fetch, SHMEM_CTX_DEFAULT, source,         \
                        Type<TYPE>{}, Type<TYPE>{}, pe);                                       \
  }                                                                                            \
  void shmem_##NAME##_set(TYPE* dest, TYPE value, int pe) {                                    \
    atomic<TYPE>("shmem_" #NAME "_set", Op::set, SHMEM_CTX_DEFAULT, dest, value, Type<TYPE>{}, \
                 pe);                                                                          \
  }

extern "C" {
MPIDSM_SHMEM_AMO_TYPES(MPIDSM_SHMEM_DEFINE_STANDARD)
MPIDSM_SHMEM_AMO_FLOAT_TYPES(MPIDSM_SHMEM_DEFINE_EXTENDED)
MPIDSM_SHMEM_AMO_BITWISE_TYPES(MPIDSM_SHMEM_DEFINE_BITWISE)
MPIDSM_SHMEM_DEPRECATED_AMO_TYPES(MPIDSM_SHMEM_DEFINE_DEPRECATED)
MPIDSM_SHMEM_DEPRECATED_AMO_TYPES(MPIDSM_SHMEM_DEFINE_DEPRECATED_EXTENDED)
MPIDSM_SHMEM_AMO_FLOAT_TYPES(MPIDSM_SHMEM_DEFINE_DEPRECATED_EXTENDED)
long shmem_swap(long* dest, long value, int pe) {
  return atomic<long>("shmem_swap", Op::swap, SHMEM_CTX_DEFAULT, dest, value, 0L, pe);
}
}  // extern "C"
