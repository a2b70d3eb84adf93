// Atomics conformance: for every standard, extended and bitwise AMO type,
// each operation with and without a context and in its _nbi form, with all
// PEs hitting one PE's words at once; and the deprecated 1.3 names.
#include <vector>

#include "shmem_test_support.hpp"

namespace {

using namespace shmem_test;

template <class T>
struct Extended {
  T (*fetch)(const T*, int);
  void (*set)(T*, T, int);
  T (*swap)(T*, T, int);
  void (*fetch_nbi)(T*, const T*, int);
  void (*swap_nbi)(T*, T*, T, int);
  T (*ctx_fetch)(shmem_ctx_t, const T*, int);
  void (*ctx_set)(shmem_ctx_t, T*, T, int);
  T (*ctx_swap)(shmem_ctx_t, T*, T, int);
  void (*ctx_fetch_nbi)(shmem_ctx_t, T*, const T*, int);
  void (*ctx_swap_nbi)(shmem_ctx_t, T*, T*, T, int);
};

// set on the right, fetch back; swaps in a ring: every old value is seen once.
template <class T>
void extended(const Extended<T>& a) {
  Symmetric<T> word(4);
  shmem_barrier_all();
  a.set(word.get(), value<T>(me(), 0), right());
  a.ctx_set(SHMEM_CTX_DEFAULT, word.get() + 1, value<T>(me(), 1), right());
  shmem_barrier_all();
  EXPECT_EQ(a.fetch(word.get(), right()), value<T>(me(), 0));
  EXPECT_EQ(a.ctx_fetch(SHMEM_CTX_DEFAULT, word.get() + 1, right()), value<T>(me(), 1));
  T fetched{}, fetched_ctx{};
  a.fetch_nbi(&fetched, word.get(), me());
  a.ctx_fetch_nbi(SHMEM_CTX_DEFAULT, &fetched_ctx, word.get() + 1, me());
  shmem_quiet();
  EXPECT_EQ(fetched, value<T>(left(), 0));
  EXPECT_EQ(fetched_ctx, value<T>(left(), 1));
  shmem_barrier_all();
  // Each PE swaps its own value into the right's word 2 and gets back what the left put there.
  EXPECT_EQ(a.swap(word.get(), value<T>(me(), 5), right()), value<T>(me(), 0));
  EXPECT_EQ(a.ctx_swap(SHMEM_CTX_DEFAULT, word.get() + 1, value<T>(me(), 6), right()),
            value<T>(me(), 1));
  T old{}, old_ctx{};
  a.swap_nbi(&old, word.get(), value<T>(me(), 7), right());
  a.ctx_swap_nbi(SHMEM_CTX_DEFAULT, &old_ctx, word.get() + 1, value<T>(me(), 8), right());
  shmem_quiet();
  EXPECT_EQ(old, value<T>(me(), 5));
  EXPECT_EQ(old_ctx, value<T>(me(), 6));
  shmem_barrier_all();
  EXPECT_EQ(word[0], value<T>(left(), 7));
  EXPECT_EQ(word[1], value<T>(left(), 8));
  shmem_barrier_all();
}

template <class T>
struct Standard {
  T (*fetch_inc)(T*, int);
  void (*inc)(T*, int);
  T (*fetch_add)(T*, T, int);
  void (*add)(T*, T, int);
  T (*compare_swap)(T*, T, T, int);
  void (*fetch_inc_nbi)(T*, T*, int);
  void (*fetch_add_nbi)(T*, T*, T, int);
  void (*compare_swap_nbi)(T*, T*, T, T, int);
  T (*ctx_fetch_inc)(shmem_ctx_t, T*, int);
  void (*ctx_inc)(shmem_ctx_t, T*, int);
  T (*ctx_fetch_add)(shmem_ctx_t, T*, T, int);
  void (*ctx_add)(shmem_ctx_t, T*, T, int);
  T (*ctx_compare_swap)(shmem_ctx_t, T*, T, T, int);
  void (*ctx_fetch_inc_nbi)(shmem_ctx_t, T*, T*, int);
  void (*ctx_fetch_add_nbi)(shmem_ctx_t, T*, T*, T, int);
  void (*ctx_compare_swap_nbi)(shmem_ctx_t, T*, T*, T, T, int);
};

// Every PE adds to PE 0's counter through each form: the total is exact,
// and the fetched old values are below it. One compare_swap per word wins.
template <class T>
void standard(const Standard<T>& a) {
  Symmetric<T> word(4);
  shmem_barrier_all();
  std::vector<T> seen;
  T f{};
  seen.push_back(a.fetch_inc(word.get(), 0));        // +1
  a.inc(word.get(), 0);                              // +1
  seen.push_back(a.fetch_add(word.get(), T(2), 0));  // +2
  a.add(word.get(), T(3), 0);                        // +3
  a.fetch_inc_nbi(&f, word.get(), 0);                // +1
  shmem_quiet();
  seen.push_back(f);
  a.fetch_add_nbi(&f, word.get(), T(2), 0);  // +2
  shmem_quiet();
  seen.push_back(f);
  seen.push_back(a.ctx_fetch_inc(SHMEM_CTX_DEFAULT, word.get(), 0));        // +1
  a.ctx_inc(SHMEM_CTX_DEFAULT, word.get(), 0);                              // +1
  seen.push_back(a.ctx_fetch_add(SHMEM_CTX_DEFAULT, word.get(), T(2), 0));  // +2
  a.ctx_add(SHMEM_CTX_DEFAULT, word.get(), T(3), 0);                        // +3
  a.ctx_fetch_inc_nbi(SHMEM_CTX_DEFAULT, &f, word.get(), 0);                // +1
  shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
  seen.push_back(f);
  a.ctx_fetch_add_nbi(SHMEM_CTX_DEFAULT, &f, word.get(), T(2), 0);  // +2
  shmem_quiet();
  seen.push_back(f);
  const T total = static_cast<T>(20 * npes());  // 10 per PE, twice
  for (T old : seen) EXPECT_LT(old, total);
  // compare_swap from 0: exactly one PE's value lands on each word.
  const T mine_value = static_cast<T>(me() + 1);
  const int won =
      (a.compare_swap(word.get() + 1, T(0), mine_value, 0) == T(0)) +
      (a.ctx_compare_swap(SHMEM_CTX_DEFAULT, word.get() + 2, T(0), mine_value, 0) == T(0));
  T old1{}, old2{};
  a.compare_swap_nbi(&old1, word.get() + 3, T(0), mine_value, 0);
  shmem_quiet();
  shmem_barrier_all();
  a.ctx_compare_swap_nbi(SHMEM_CTX_DEFAULT, &old2, word.get() + 3, T(0), mine_value, 0);
  shmem_quiet();
  EXPECT_NE(old2, T(0)) << "word 3 was taken before the barrier";
  Symmetric<int> all(2), sum(2);
  all[0] = won;
  all[1] = old1 == T(0);
  shmem_barrier_all();
  shmem_int_sum_reduce(SHMEM_TEAM_WORLD, sum.get(), all.get(), 2);
  EXPECT_EQ(sum[0], 2);
  EXPECT_EQ(sum[1], 1);
  if (me() == 0) {
    EXPECT_EQ(word[0], total);
  }
  shmem_barrier_all();
}

template <class T>
struct Bitwise {
  T (*fetch_and)(T*, T, int);
  void (*and_)(T*, T, int);
  void (*fetch_and_nbi)(T*, T*, T, int);
  T (*fetch_or)(T*, T, int);
  void (*or_)(T*, T, int);
  void (*fetch_or_nbi)(T*, T*, T, int);
  T (*fetch_xor)(T*, T, int);
  void (*xor_)(T*, T, int);
  void (*fetch_xor_nbi)(T*, T*, T, int);
  T (*ctx_fetch_and)(shmem_ctx_t, T*, T, int);
  void (*ctx_and)(shmem_ctx_t, T*, T, int);
  void (*ctx_fetch_and_nbi)(shmem_ctx_t, T*, T*, T, int);
  T (*ctx_fetch_or)(shmem_ctx_t, T*, T, int);
  void (*ctx_or)(shmem_ctx_t, T*, T, int);
  void (*ctx_fetch_or_nbi)(shmem_ctx_t, T*, T*, T, int);
  T (*ctx_fetch_xor)(shmem_ctx_t, T*, T, int);
  void (*ctx_xor)(shmem_ctx_t, T*, T, int);
  void (*ctx_fetch_xor_nbi)(shmem_ctx_t, T*, T*, T, int);
};

// Bits per PE on PE 0's words: or sets them, xor flips them, and clears them.
template <class T>
void bitwise(const Bitwise<T>& a) {
  Symmetric<T> word(6);
  shmem_barrier_all();
  const T bit = static_cast<T>(T(1) << me()), high = static_cast<T>(T(1) << (me() + 8));
  T f{};
  a.fetch_or(word.get(), bit, 0);
  a.or_(word.get(), high, 0);
  a.fetch_or_nbi(&f, word.get() + 1, bit, 0);
  a.ctx_fetch_or(SHMEM_CTX_DEFAULT, word.get() + 2, bit, 0);
  a.ctx_or(SHMEM_CTX_DEFAULT, word.get() + 3, bit, 0);
  a.ctx_fetch_or_nbi(SHMEM_CTX_DEFAULT, &f, word.get() + 4, bit, 0);
  a.fetch_xor(word.get() + 5, bit, 0);
  a.xor_(word.get() + 5, high, 0);
  shmem_quiet();
  shmem_barrier_all();
  const T all_bits = static_cast<T>((T(1) << npes()) - 1);
  if (me() == 0) {
    EXPECT_EQ(word[0], static_cast<T>(all_bits | (all_bits << 8)));
    for (int i = 1; i < 5; ++i) EXPECT_EQ(word[i], all_bits) << "word " << i;
    EXPECT_EQ(word[5], static_cast<T>(all_bits | (all_bits << 8)));
  }
  shmem_barrier_all();
  // Each PE takes its bits back out.
  const T keep_all_but_mine = static_cast<T>(~bit);
  a.fetch_and(word.get(), keep_all_but_mine, 0);
  a.and_(word.get(), static_cast<T>(~high), 0);
  a.fetch_and_nbi(&f, word.get() + 1, keep_all_but_mine, 0);
  a.ctx_fetch_and(SHMEM_CTX_DEFAULT, word.get() + 2, keep_all_but_mine, 0);
  a.ctx_and(SHMEM_CTX_DEFAULT, word.get() + 3, keep_all_but_mine, 0);
  a.ctx_fetch_and_nbi(SHMEM_CTX_DEFAULT, &f, word.get() + 4, keep_all_but_mine, 0);
  a.ctx_fetch_xor(SHMEM_CTX_DEFAULT, word.get() + 5, bit, 0);
  a.ctx_xor(SHMEM_CTX_DEFAULT, word.get() + 5, high, 0);
  shmem_quiet();
  shmem_barrier_all();
  T x{};
  a.fetch_xor_nbi(&x, word.get() + 5, T(0), 0);
  a.ctx_fetch_xor_nbi(SHMEM_CTX_DEFAULT, &f, word.get() + 5, T(0), 0);
  shmem_quiet();
  EXPECT_EQ(x, T(0));
  if (me() == 0) {
    for (int i = 0; i < 6; ++i) EXPECT_EQ(word[i], T(0)) << "word " << i;
  }
  shmem_barrier_all();
}

#define EXTENDED_OF(NAME)                                                               \
  Extended<decltype(shmem_##NAME##_atomic_fetch(nullptr, 0))> {                         \
    shmem_##NAME##_atomic_fetch, shmem_##NAME##_atomic_set, shmem_##NAME##_atomic_swap, \
        shmem_##NAME##_atomic_fetch_nbi, shmem_##NAME##_atomic_swap_nbi,                \
        shmem_ctx_##NAME##_atomic_fetch, shmem_ctx_##NAME##_atomic_set,                 \
        shmem_ctx_##NAME##_atomic_swap, shmem_ctx_##NAME##_atomic_fetch_nbi,            \
        shmem_ctx_##NAME##_atomic_swap_nbi                                              \
  }
#define STANDARD_TEST(TYPE, NAME)                                                              \
  TEST(ShmemAtomics, NAME) {                                                                   \
    extended(EXTENDED_OF(NAME));                                                               \
    standard(Standard<TYPE>{                                                                   \
        shmem_##NAME##_atomic_fetch_inc, shmem_##NAME##_atomic_inc,                            \
        shmem_##NAME##_atomic_fetch_add, shmem_##NAME##_atomic_add,                            \
        shmem_##NAME##_atomic_compare_swap, shmem_##NAME##_atomic_fetch_inc_nbi,               \
        shmem_##NAME##_atomic_fetch_add_nbi, shmem_##NAME##_atomic_compare_swap_nbi,           \
        shmem_ctx_##NAME##_atomic_fetch_inc, shmem_ctx_##NAME##_atomic_inc,                    \
        shmem_ctx_##NAME##_atomic_fetch_add, shmem_ctx_##NAME##_atomic_add,                    \
        shmem_ctx_##NAME##_atomic_compare_swap, shmem_ctx_##NAME##_atomic_fetch_inc_nbi,       \
        shmem_ctx_##NAME##_atomic_fetch_add_nbi, shmem_ctx_##NAME##_atomic_compare_swap_nbi}); \
  }
MPIDSM_SHMEM_AMO_TYPES(STANDARD_TEST)
#define FLOAT_TEST(TYPE, NAME)   \
  TEST(ShmemAtomics, NAME) {     \
    extended(EXTENDED_OF(NAME)); \
  }
MPIDSM_SHMEM_AMO_FLOAT_TYPES(FLOAT_TEST)
#define BITWISE_OP(P, NAME, OP) \
  P##_##NAME##_atomic_fetch_##OP, P##_##NAME##_atomic_##OP, P##_##NAME##_atomic_fetch_##OP##_nbi
#define BITWISE_TEST(TYPE, NAME)                                                               \
  TEST(ShmemAtomicsBitwise, NAME) {                                                            \
    bitwise(Bitwise<TYPE>{BITWISE_OP(shmem, NAME, and), BITWISE_OP(shmem, NAME, or),           \
                          BITWISE_OP(shmem, NAME, xor), BITWISE_OP(shmem_ctx, NAME, and),      \
                          BITWISE_OP(shmem_ctx, NAME, or), BITWISE_OP(shmem_ctx, NAME, xor)}); \
  }
MPIDSM_SHMEM_AMO_BITWISE_TYPES(BITWISE_TEST)

// OpenSHMEM 1.3's names still count, swap and read.
#define DEPRECATED_TEST(TYPE, NAME)                                                       \
  TEST(ShmemAtomicsDeprecated, NAME) {                                                    \
    Symmetric<TYPE> word(3);                                                              \
    shmem_barrier_all();                                                                  \
    EXPECT_LT(shmem_##NAME##_finc(word.get(), 0), static_cast<TYPE>(4 * npes()));         \
    shmem_##NAME##_inc(word.get(), 0);                                                    \
    EXPECT_LT(shmem_##NAME##_fadd(word.get(), 1, 0), static_cast<TYPE>(4 * npes()));      \
    shmem_##NAME##_add(word.get(), 1, 0);                                                 \
    const bool won = shmem_##NAME##_cswap(word.get() + 1, 0, me() + 1, 0) == 0;           \
    shmem_##NAME##_set(word.get() + 2, static_cast<TYPE>(me() + 1), right());             \
    shmem_barrier_all();                                                                  \
    EXPECT_EQ(shmem_##NAME##_fetch(word.get() + 2, me()), static_cast<TYPE>(left() + 1)); \
    EXPECT_EQ(shmem_##NAME##_swap(word.get() + 2, static_cast<TYPE>(0), me()),            \
              static_cast<TYPE>(left() + 1));                                             \
    if (me() == 0) {                                                                      \
      EXPECT_EQ(word[0], static_cast<TYPE>(4 * npes()));                                  \
    }                                                                                     \
    if (me() == 0) {                                                                      \
      EXPECT_TRUE(word[1] >= 1 && word[1] <= npes());                                     \
    }                                                                                     \
    Symmetric<int> wins(2);                                                               \
    wins[0] = won;                                                                        \
    shmem_barrier_all();                                                                  \
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, wins.get() + 1, wins.get(), 1);                \
    EXPECT_EQ(wins[1], 1) << "compare_swap from 0 won on one PE";                         \
    shmem_barrier_all();                                                                  \
  }
MPIDSM_SHMEM_DEPRECATED_AMO_TYPES(DEPRECATED_TEST)

TEST(ShmemAtomicsDeprecated, FloatsAndShmemSwap) {
  Symmetric<double> d(1);
  Symmetric<float> f(1);
  Symmetric<long> l(1);
  shmem_barrier_all();
  shmem_double_set(d.get(), 1.5 * me(), right());
  shmem_float_set(f.get(), 2.5f * me(), right());
  shmem_barrier_all();
  EXPECT_EQ(shmem_double_fetch(d.get(), me()), 1.5 * left());
  EXPECT_EQ(shmem_float_fetch(f.get(), me()), 2.5f * left());
  EXPECT_EQ(shmem_double_swap(d.get(), 0.0, me()), 1.5 * left());
  EXPECT_EQ(shmem_float_swap(f.get(), 0.0f, me()), 2.5f * left());
  EXPECT_EQ(shmem_swap(l.get(), 7, me()), 0);
  EXPECT_EQ(*l.get(), 7);
  shmem_barrier_all();
}

}  // namespace
