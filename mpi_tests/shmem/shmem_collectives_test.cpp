// Collectives conformance: broadcast, collect, fcollect, alltoall and
// alltoalls of every standard type and their mem forms, every reduction of
// every type it takes, on SHMEM_TEAM_WORLD and on a split team; the
// barriers and syncs; and the deprecated active-set forms.
#include <complex>
#include <vector>

#include "shmem_test_support.hpp"

namespace {

using namespace shmem_test;

constexpr std::size_t kCount = 3;

template <class T>
struct Collectives {
  int (*broadcast)(shmem_team_t, T*, const T*, size_t, int);
  int (*collect)(shmem_team_t, T*, const T*, size_t);
  int (*fcollect)(shmem_team_t, T*, const T*, size_t);
  int (*alltoall)(shmem_team_t, T*, const T*, size_t);
  int (*alltoalls)(shmem_team_t, T*, const T*, ptrdiff_t, ptrdiff_t, size_t);
};

template <class T>
void collectives(const Collectives<T>& c, shmem_team_t team) {
  const int rank = shmem_team_my_pe(team), size = shmem_team_n_pes(team);
  const auto n = static_cast<std::size_t>(size);
  std::vector<T> source(kCount * n), dest(kCount * n * 2);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = value<T>(rank, i);
  const int root = size - 1;
  ASSERT_EQ(c.broadcast(team, dest.data(), source.data(), kCount, root), 0);
  for (std::size_t i = 0; i < kCount; ++i)
    EXPECT_EQ(dest[i], value<T>(root, i)) << "broadcast " << i;
  ASSERT_EQ(c.fcollect(team, dest.data(), source.data(), kCount), 0);
  for (std::size_t m = 0; m < n; ++m)
    for (std::size_t i = 0; i < kCount; ++i)
      EXPECT_EQ(dest[m * kCount + i], value<T>(static_cast<int>(m), i)) << "fcollect " << m;
  // collect: member m gives m+1 elements.
  ASSERT_EQ(c.collect(team, dest.data(), source.data(), static_cast<size_t>(rank) + 1), 0);
  std::size_t at = 0;
  for (std::size_t m = 0; m < n; ++m)
    for (std::size_t i = 0; i <= m; ++i)
      EXPECT_EQ(dest[at++], value<T>(static_cast<int>(m), i)) << "collect " << m;
  // alltoall: block j of member m goes to member j's block m.
  ASSERT_EQ(c.alltoall(team, dest.data(), source.data(), kCount), 0);
  for (std::size_t m = 0; m < n; ++m)
    for (std::size_t i = 0; i < kCount; ++i)
      EXPECT_EQ(dest[m * kCount + i],
                value<T>(static_cast<int>(m), static_cast<std::size_t>(rank) * kCount + i))
          << "alltoall " << m;
  // alltoalls with strides 2 (dest) and 1 (source), one element per member.
  ASSERT_EQ(c.alltoalls(team, dest.data(), source.data(), 2, 1, 1), 0);
  for (std::size_t m = 0; m < n; ++m)
    EXPECT_EQ(dest[2 * m], value<T>(static_cast<int>(m), static_cast<std::size_t>(rank)))
        << "alltoalls " << m;
}

// Odd PEs form a team (PE 0 alone when there is one PE).
shmem_team_t odd_or_only() {
  shmem_team_t team = SHMEM_TEAM_INVALID;
  const int start = npes() > 1 ? 1 : 0, size = npes() > 1 ? npes() / 2 : 1;
  EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 2, size, nullptr, 0, &team), 0);
  return team;
}

#define COLLECTIVES_TEST(TYPE, NAME)                                            \
  TEST(ShmemCollectives, NAME) {                                                \
    const Collectives<TYPE> c{shmem_##NAME##_broadcast, shmem_##NAME##_collect, \
                              shmem_##NAME##_fcollect, shmem_##NAME##_alltoall, \
                              shmem_##NAME##_alltoalls};                        \
    collectives(c, SHMEM_TEAM_WORLD);                                           \
    shmem_team_t odd = odd_or_only();                                           \
    if (odd != SHMEM_TEAM_INVALID) collectives(c, odd);                         \
    shmem_team_destroy(odd);                                                    \
  }
MPIDSM_SHMEM_RMA_TYPES(COLLECTIVES_TEST)

TEST(ShmemCollectives, MemForms) {
  const Collectives<unsigned char> c{
      [](shmem_team_t t, unsigned char* d, const unsigned char* s, size_t n, int r) {
        return shmem_broadcastmem(t, d, s, n, r);
      },
      [](shmem_team_t t, unsigned char* d, const unsigned char* s, size_t n) {
        return shmem_collectmem(t, d, s, n);
      },
      [](shmem_team_t t, unsigned char* d, const unsigned char* s, size_t n) {
        return shmem_fcollectmem(t, d, s, n);
      },
      [](shmem_team_t t, unsigned char* d, const unsigned char* s, size_t n) {
        return shmem_alltoallmem(t, d, s, n);
      },
      [](shmem_team_t t, unsigned char* d, const unsigned char* s, ptrdiff_t dst, ptrdiff_t sst,
         size_t n) { return shmem_alltoallsmem(t, d, s, dst, sst, n); }};
  collectives(c, SHMEM_TEAM_WORLD);
  collectives(c, SHMEM_TEAM_SHARED);
}

// Reductions over the world: member m contributes m+1 (sum, prod, max,
// min) and bit m (and, or, xor), in each of kCount elements.
template <class T>
using Reduce = int (*)(shmem_team_t, T*, const T*, size_t);

template <class T>
void reduce(Reduce<T> op, T contribution, T expected, const char* what) {
  T source[kCount], dest[kCount];
  for (auto& s : source) s = contribution;
  ASSERT_EQ(op(SHMEM_TEAM_WORLD, dest, source, kCount), 0);
  for (std::size_t i = 0; i < kCount; ++i) EXPECT_EQ(dest[i], expected) << what << " " << i;
  // In place, as the specification allows.
  ASSERT_EQ(op(SHMEM_TEAM_WORLD, source, source, kCount), 0);
  EXPECT_EQ(source[0], expected) << what << " in place";
}

long long factorial(int n) {
  return n <= 1 ? 1 : n * factorial(n - 1);
}

#define BITWISE_REDUCE_TEST(TYPE, NAME)                                                          \
  TEST(ShmemReduceBitwise, NAME) {                                                               \
    const TYPE bit = static_cast<TYPE>(1u << me()), all = static_cast<TYPE>((1u << npes()) - 1); \
    reduce<TYPE>(shmem_##NAME##_or_reduce, bit, all, "or");                                      \
    reduce<TYPE>(shmem_##NAME##_xor_reduce, bit, all, "xor");                                    \
    reduce<TYPE>(shmem_##NAME##_and_reduce, static_cast<TYPE>(bit | 0x40),                       \
                 static_cast<TYPE>(npes() == 1 ? 0x41 : 0x40), "and");                           \
  }
MPIDSM_SHMEM_BITWISE_REDUCE_TYPES(BITWISE_REDUCE_TEST)
#define MINMAX_REDUCE_TEST(TYPE, NAME)                                                         \
  TEST(ShmemReduceMinMaxSumProd, NAME) {                                                       \
    const TYPE mine_value = static_cast<TYPE>(me() + 1);                                       \
    reduce<TYPE>(shmem_##NAME##_max_reduce, mine_value, static_cast<TYPE>(npes()), "max");     \
    reduce<TYPE>(shmem_##NAME##_min_reduce, mine_value, static_cast<TYPE>(1), "min");          \
    reduce<TYPE>(shmem_##NAME##_sum_reduce, mine_value,                                        \
                 static_cast<TYPE>(npes() * (npes() + 1) / 2), "sum");                         \
    reduce<TYPE>(shmem_##NAME##_prod_reduce, mine_value, static_cast<TYPE>(factorial(npes())), \
                 "prod");                                                                      \
  }
MPIDSM_SHMEM_MINMAX_REDUCE_TYPES(MINMAX_REDUCE_TEST)

// The complex types travel as C's _Complex; std::complex has their layout.
TEST(ShmemReduceComplex, SumAndProd) {
  std::complex<double> d, ds(me() + 1.0, 1.0);
  auto* d_c = reinterpret_cast<double _Complex*>(&d);
  auto* ds_c = reinterpret_cast<const double _Complex*>(&ds);
  ASSERT_EQ(shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, d_c, ds_c, 1), 0);
  EXPECT_EQ(d, std::complex<double>(npes() * (npes() + 1) / 2.0, npes()));
  ASSERT_EQ(shmem_complexd_prod_reduce(SHMEM_TEAM_WORLD, d_c, ds_c, 1), 0);
  std::complex<double> product = 1;
  for (int pe = 0; pe < npes(); ++pe) product *= std::complex<double>(pe + 1.0, 1.0);
  EXPECT_EQ(d, product);
  std::complex<float> f, fs(0, 1);  // i to the power npes
  auto* f_c = reinterpret_cast<float _Complex*>(&f);
  auto* fs_c = reinterpret_cast<const float _Complex*>(&fs);
  ASSERT_EQ(shmem_complexf_prod_reduce(SHMEM_TEAM_WORLD, f_c, fs_c, 1), 0);
  std::complex<float> power = 1;
  for (int pe = 0; pe < npes(); ++pe) power *= fs;
  EXPECT_EQ(f, power);
  ASSERT_EQ(shmem_complexf_sum_reduce(SHMEM_TEAM_WORLD, f_c, fs_c, 1), 0);
  EXPECT_EQ(f, std::complex<float>(0, static_cast<float>(npes())));
}

// Barriers complete puts; syncs order arrival only.
TEST(ShmemCollectives, BarriersCompletePutsAndSyncsMeetEveryPe) {
  Symmetric<int> word(2);
  shmem_barrier_all();
  shmem_int_p(word.get(), me() + 1, right());
  shmem_barrier_all();
  EXPECT_EQ(word[0], left() + 1);
  shmem_int_p(word.get() + 1, me() + 1, right());
  shmem_quiet();
  shmem_sync_all();
  EXPECT_EQ(word[1], left() + 1);
  EXPECT_EQ(shmem_team_sync(SHMEM_TEAM_WORLD), 0);
  EXPECT_EQ(shmem_team_sync(SHMEM_TEAM_SHARED), 0);
  shmem_barrier_all();
}

// The deprecated active-set forms over every PE and over the even PEs.
TEST(ShmemActiveSets, EveryDeprecatedCollective) {
  static long sync_work[SHMEM_COLLECT_SYNC_SIZE];
  const int n = npes(), evens = (n + 1) / 2;
  for (const auto& [log_stride, size] : {std::pair{0, n}, std::pair{1, evens}}) {
    const int stride = 1 << log_stride;
    if (me() % stride != 0) continue;
    const int rank = me() / stride;
    shmem_barrier(0, log_stride, size, sync_work);
    shmem_sync(0, log_stride, size, sync_work);
    std::vector<uint64_t> source(static_cast<std::size_t>(2 * size)), dest(source.size() * 2, 0);
    for (std::size_t i = 0; i < source.size(); ++i) source[i] = value<uint64_t>(rank, i);
    shmem_broadcast64(dest.data(), source.data(), 2, 0, 0, log_stride, size, sync_work);
    if (rank != 0) {
      EXPECT_EQ(dest[1], value<uint64_t>(0, 1));
    } else {
      EXPECT_EQ(dest[1], 0u) << "the root's dest is left as it was";
    }
    shmem_fcollect64(dest.data(), source.data(), 1, 0, log_stride, size, sync_work);
    EXPECT_EQ(dest[static_cast<std::size_t>(size - 1)], value<uint64_t>(size - 1, 0));
    shmem_collect64(dest.data(), source.data(), 1, 0, log_stride, size, sync_work);
    EXPECT_EQ(dest[0], value<uint64_t>(0, 0));
    shmem_alltoall64(dest.data(), source.data(), 1, 0, log_stride, size, sync_work);
    EXPECT_EQ(dest[0], value<uint64_t>(0, static_cast<std::size_t>(rank)));
    shmem_alltoalls64(dest.data(), source.data(), 1, 2, 1, 0, log_stride, size, sync_work);
    EXPECT_EQ(dest[0], value<uint64_t>(0, 2 * static_cast<std::size_t>(rank)));
    std::vector<uint32_t> s32(static_cast<std::size_t>(2 * size), static_cast<uint32_t>(rank + 1)),
        d32(s32.size() * 2, 0);
    shmem_broadcast32(d32.data(), s32.data(), 1, 0, 0, log_stride, size, sync_work);
    shmem_fcollect32(d32.data(), s32.data(), 1, 0, log_stride, size, sync_work);
    EXPECT_EQ(d32[static_cast<std::size_t>(size - 1)], static_cast<uint32_t>(size));
    shmem_collect32(d32.data(), s32.data(), 1, 0, log_stride, size, sync_work);
    shmem_alltoall32(d32.data(), s32.data(), 1, 0, log_stride, size, sync_work);
    shmem_alltoalls32(d32.data(), s32.data(), 1, 1, 1, 0, log_stride, size, sync_work);
    EXPECT_EQ(d32[0], 1u);
    long work[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
    int ai = rank + 1, ri = 0;
    shmem_int_sum_to_all(&ri, &ai, 1, 0, log_stride, size, reinterpret_cast<int*>(work), sync_work);
    EXPECT_EQ(ri, size * (size + 1) / 2);
    double ad = rank + 1.0, rd = 0;
    shmem_double_max_to_all(&rd, &ad, 1, 0, log_stride, size, reinterpret_cast<double*>(work),
                            sync_work);
    EXPECT_EQ(rd, static_cast<double>(size));
    short as = static_cast<short>(1 << rank), rs = 0;
    shmem_short_or_to_all(&rs, &as, 1, 0, log_stride, size, reinterpret_cast<short*>(work),
                          sync_work);
    EXPECT_EQ(rs, static_cast<short>((1 << size) - 1));
    long long al = rank + 1, rl = 0;
    shmem_longlong_prod_to_all(&rl, &al, 1, 0, log_stride, size, reinterpret_cast<long long*>(work),
                               sync_work);
    EXPECT_EQ(rl, factorial(size));
  }
  shmem_barrier_all();
}

}  // namespace
