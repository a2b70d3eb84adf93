// Point-to-point synchronisation conformance: for every sync type,
// wait_until and test with their _all, _any, _some and _vector forms, woken
// by the left-hand neighbour's puts; the deprecated waits; fence, quiet and
// the distributed locks.
#include <vector>

#include "shmem_test_support.hpp"

namespace {

using namespace shmem_test;

constexpr std::size_t kWords = 4;

template <class T>
struct Sync {
  void (*p)(T*, T, int);
  void (*wait_until)(T*, int, T);
  void (*wait_until_all)(T*, size_t, const int*, int, T);
  size_t (*wait_until_any)(T*, size_t, const int*, int, T);
  size_t (*wait_until_some)(T*, size_t, size_t*, const int*, int, T);
  void (*wait_until_all_vector)(T*, size_t, const int*, int, T*);
  size_t (*wait_until_any_vector)(T*, size_t, const int*, int, T*);
  size_t (*wait_until_some_vector)(T*, size_t, size_t*, const int*, int, T*);
  int (*test)(T*, int, T);
  int (*test_all)(T*, size_t, const int*, int, T);
  size_t (*test_any)(T*, size_t, const int*, int, T);
  size_t (*test_some)(T*, size_t, size_t*, const int*, int, T);
  int (*test_all_vector)(T*, size_t, const int*, int, T*);
  size_t (*test_any_vector)(T*, size_t, const int*, int, T*);
  size_t (*test_some_vector)(T*, size_t, size_t*, const int*, int, T*);
};

template <class T>
void waits(const Sync<T>& s) {
  Symmetric<T> words(kWords);
  const T one = 1, two = 2;
  const int skip_last[kWords] = {0, 0, 0, 1};
  std::size_t indices[kWords] = {};
  shmem_barrier_all();
  // Nothing has arrived: every test says so.
  EXPECT_EQ(s.test(words.get(), SHMEM_CMP_EQ, one), 0);
  EXPECT_EQ(s.test_all(words.get(), kWords, nullptr, SHMEM_CMP_EQ, one), 0);
  EXPECT_EQ(s.test_any(words.get(), kWords, nullptr, SHMEM_CMP_EQ, one), SIZE_MAX);
  EXPECT_EQ(s.test_some(words.get(), kWords, indices, nullptr, SHMEM_CMP_EQ, one), 0u);
  shmem_barrier_all();
  // Word 2 from the left: wait_until, _any and _some see it.
  s.p(words.get() + 2, one, right());
  s.wait_until(words.get() + 2, SHMEM_CMP_EQ, one);
  EXPECT_EQ(s.wait_until_any(words.get(), kWords, nullptr, SHMEM_CMP_GE, one), 2u);
  EXPECT_EQ(s.wait_until_some(words.get(), kWords, indices, nullptr, SHMEM_CMP_NE, T(0)), 1u);
  EXPECT_EQ(indices[0], 2u);
  EXPECT_EQ(s.test(words.get() + 2, SHMEM_CMP_GT, T(0)), 1);
  EXPECT_EQ(s.test_any(words.get(), kWords, nullptr, SHMEM_CMP_EQ, one), 2u);
  EXPECT_EQ(s.test_some(words.get(), kWords, indices, nullptr, SHMEM_CMP_EQ, one), 1u);
  shmem_barrier_all();
  // Words 0..2 from the left (word 3 left out by status): _all forms.
  s.p(words.get(), one, right());
  s.p(words.get() + 1, one, right());
  s.wait_until_all(words.get(), kWords, skip_last, SHMEM_CMP_EQ, one);
  EXPECT_EQ(s.test_all(words.get(), kWords, skip_last, SHMEM_CMP_LE, one), 1);
  EXPECT_EQ(s.test_all(words.get(), kWords, nullptr, SHMEM_CMP_EQ, one), 0);
  shmem_barrier_all();
  // _vector forms: word i against its own value.
  T expected[kWords] = {two, one, two, T(0)};
  s.p(words.get(), two, right());
  s.p(words.get() + 2, two, right());
  s.wait_until_all_vector(words.get(), kWords, nullptr, SHMEM_CMP_EQ, expected);
  EXPECT_EQ(s.test_all_vector(words.get(), kWords, nullptr, SHMEM_CMP_EQ, expected), 1);
  T only_first[kWords] = {two, T(9), T(9), T(9)};
  EXPECT_EQ(s.wait_until_any_vector(words.get(), kWords, nullptr, SHMEM_CMP_EQ, only_first), 0u);
  EXPECT_EQ(s.test_any_vector(words.get(), kWords, nullptr, SHMEM_CMP_EQ, only_first), 0u);
  EXPECT_EQ(s.wait_until_some_vector(words.get(), kWords, indices, nullptr, SHMEM_CMP_EQ, expected),
            kWords);
  EXPECT_EQ(s.test_some_vector(words.get(), kWords, indices, skip_last, SHMEM_CMP_EQ, expected),
            3u);
  // Every word left out: nothing to wait for.
  const int none[kWords] = {1, 1, 1, 1};
  EXPECT_EQ(s.wait_until_any(words.get(), kWords, none, SHMEM_CMP_EQ, one), SIZE_MAX);
  EXPECT_EQ(s.wait_until_some(words.get(), kWords, indices, none, SHMEM_CMP_EQ, one), 0u);
  shmem_barrier_all();
}

#define SYNC_TEST(TYPE, NAME)                                                                    \
  TEST(ShmemSync, NAME) {                                                                        \
    waits(Sync<TYPE>{shmem_##NAME##_p, shmem_##NAME##_wait_until, shmem_##NAME##_wait_until_all, \
                     shmem_##NAME##_wait_until_any, shmem_##NAME##_wait_until_some,              \
                     shmem_##NAME##_wait_until_all_vector, shmem_##NAME##_wait_until_any_vector, \
                     shmem_##NAME##_wait_until_some_vector, shmem_##NAME##_test,                 \
                     shmem_##NAME##_test_all, shmem_##NAME##_test_any, shmem_##NAME##_test_some, \
                     shmem_##NAME##_test_all_vector, shmem_##NAME##_test_any_vector,             \
                     shmem_##NAME##_test_some_vector});                                          \
  }
MPIDSM_SHMEM_SYNC_TYPES(SYNC_TEST)

TEST(ShmemSync, DeprecatedWaitsReturnOnceTheWordChanges) {
  Symmetric<long> l(2);
  Symmetric<int> i(1);
  Symmetric<short> s(1);
  Symmetric<long long> ll(1);
  shmem_barrier_all();
  shmem_long_p(l.get(), 5, right());
  shmem_long_p(l.get() + 1, 6, right());
  shmem_int_p(i.get(), 7, right());
  shmem_short_p(s.get(), 8, right());
  shmem_longlong_p(ll.get(), 9, right());
  shmem_wait(l.get(), 0);
  shmem_wait_until(l.get() + 1, SHMEM_CMP_EQ, 6);
  shmem_int_wait(i.get(), 0);
  shmem_short_wait(s.get(), 0);
  shmem_longlong_wait(ll.get(), 0);
  shmem_long_wait(l.get(), 0);
  EXPECT_EQ(l[0], 5);
  EXPECT_EQ(*i.get(), 7);
  EXPECT_EQ(*s.get(), 8);
  EXPECT_EQ(*ll.get(), 9);
  shmem_barrier_all();
}

// fence orders the puts to one PE: a flag put after the data never overtakes it.
TEST(ShmemSync, FencedFlagFollowsItsData) {
  constexpr std::size_t kRounds = 50, kBytes = 4096;
  Symmetric<unsigned char> data(kBytes);
  Symmetric<long> flag(1);
  std::vector<unsigned char> block(kBytes);
  shmem_barrier_all();
  for (std::size_t round = 1; round <= kRounds; ++round) {
    for (auto& b : block) b = static_cast<unsigned char>(round);
    shmem_putmem_nbi(data.get(), block.data(), kBytes, right());
    if (round % 2)
      shmem_fence();
    else
      shmem_ctx_fence(SHMEM_CTX_DEFAULT);
    shmem_long_p(flag.get(), static_cast<long>(round), right());
    shmem_long_wait_until(flag.get(), SHMEM_CMP_EQ, static_cast<long>(round));
    for (std::size_t i = 0; i < kBytes; i += 511)
      ASSERT_EQ(data[i], static_cast<unsigned char>(round)) << "round " << round << " byte " << i;
    shmem_quiet();
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
  }
}

// Increments under a lock, by get and put (not atomics): none is lost.
TEST(ShmemLocks, EveryIncrementUnderTheLockCounts) {
  constexpr int kRounds = 40;
  Symmetric<long> lock(1);
  Symmetric<long> counter(1);
  shmem_barrier_all();
  for (int i = 0; i < kRounds; ++i) {
    shmem_set_lock(lock.get());
    const long seen = shmem_long_g(counter.get(), 0);
    shmem_long_p(counter.get(), seen + 1, 0);
    shmem_clear_lock(lock.get());
  }
  shmem_barrier_all();
  EXPECT_EQ(shmem_long_g(counter.get(), 0), static_cast<long>(kRounds) * npes());
  shmem_barrier_all();
}

TEST(ShmemLocks, TestLockTakesAFreeLockOnly) {
  Symmetric<long> lock(2);
  shmem_barrier_all();
  if (me() == 0) {
    EXPECT_EQ(shmem_test_lock(lock.get()), 0);
  }
  shmem_barrier_all();
  if (me() != 0) {
    EXPECT_EQ(shmem_test_lock(lock.get()), 1);
  }
  shmem_barrier_all();
  if (me() == 0) shmem_clear_lock(lock.get());
  // Each PE in turn takes the second lock by polling test_lock.
  while (shmem_test_lock(lock.get() + 1) != 0) {
  }
  shmem_clear_lock(lock.get() + 1);
  shmem_barrier_all();
}

}  // namespace
