// RMA conformance: every standard type's put, get, p, g, iput, iget, _nbi
// and put_signal forms, with and without a context, and the sized and mem
// forms; each moves distinct values to the right-hand neighbour and checks
// them where they land. The library starts here for the whole suite.
#include <cstring>
#include <vector>

#include "shmem_test_support.hpp"

namespace {

using namespace shmem_test;

// shmem_init after the program's MPI_Init; shmem_finalize before its MPI_Finalize.
class ShmemEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { shmem_init(); }
  void TearDown() override { shmem_finalize(); }
};
[[maybe_unused]] auto* const environment =
    ::testing::AddGlobalTestEnvironment(new ShmemEnvironment);

constexpr std::size_t kCount = 8;

// One element type's routines, named by the X-macro below.
template <class T>
struct Rma {
  void (*put)(T*, const T*, size_t, int);
  void (*get)(T*, const T*, size_t, int);
  void (*put_nbi)(T*, const T*, size_t, int);
  void (*get_nbi)(T*, const T*, size_t, int);
  void (*p)(T*, T, int);
  T (*g)(const T*, int);
  void (*iput)(T*, const T*, ptrdiff_t, ptrdiff_t, size_t, int);
  void (*iget)(T*, const T*, ptrdiff_t, ptrdiff_t, size_t, int);
  void (*put_signal)(T*, const T*, size_t, uint64_t*, uint64_t, int, int);
  void (*put_signal_nbi)(T*, const T*, size_t, uint64_t*, uint64_t, int, int);
  void (*ctx_put)(shmem_ctx_t, T*, const T*, size_t, int);
  void (*ctx_get)(shmem_ctx_t, T*, const T*, size_t, int);
  void (*ctx_put_nbi)(shmem_ctx_t, T*, const T*, size_t, int);
  void (*ctx_get_nbi)(shmem_ctx_t, T*, const T*, size_t, int);
  void (*ctx_p)(shmem_ctx_t, T*, T, int);
  T (*ctx_g)(shmem_ctx_t, const T*, int);
  void (*ctx_iput)(shmem_ctx_t, T*, const T*, ptrdiff_t, ptrdiff_t, size_t, int);
  void (*ctx_iget)(shmem_ctx_t, T*, const T*, ptrdiff_t, ptrdiff_t, size_t, int);
  void (*ctx_put_signal)(shmem_ctx_t, T*, const T*, size_t, uint64_t*, uint64_t, int, int);
  void (*ctx_put_signal_nbi)(shmem_ctx_t, T*, const T*, size_t, uint64_t*, uint64_t, int, int);
};

template <class T>
std::vector<T> mine(std::size_t count, int pe) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = value<T>(pe, i);
  return v;
}

template <class T>
void expect_from(const T* got, std::size_t count, int pe, std::size_t stride = 1) {
  for (std::size_t i = 0; i < count; ++i)
    EXPECT_EQ(got[i * stride], value<T>(pe, i)) << "element " << i << " from PE " << pe;
}

// Puts (blocking, _nbi, p) to the right; gets (blocking, _nbi, g) back from it.
template <class T>
void contiguous(const Rma<T>& r, shmem_ctx_t ctx) {
  Symmetric<T> dest(3 * kCount);
  const std::vector<T> source = mine<T>(kCount, me());
  shmem_barrier_all();
  if (ctx) {
    r.ctx_put(ctx, dest.get(), source.data(), kCount, right());
    r.ctx_put_nbi(ctx, dest.get() + kCount, source.data(), kCount, right());
    r.ctx_p(ctx, dest.get() + 2 * kCount, value<T>(me(), 0), right());
    shmem_ctx_quiet(ctx);
  } else {
    r.put(dest.get(), source.data(), kCount, right());
    r.put_nbi(dest.get() + kCount, source.data(), kCount, right());
    r.p(dest.get() + 2 * kCount, value<T>(me(), 0), right());
  }
  shmem_barrier_all();
  expect_from(dest.get(), kCount, left());
  expect_from(dest.get() + kCount, kCount, left());
  EXPECT_EQ(dest[2 * kCount], value<T>(left(), 0));
  // The right-hand neighbour's dest holds this PE's values.
  std::vector<T> back(2 * kCount);
  if (ctx) {
    r.ctx_get(ctx, back.data(), dest.get(), kCount, right());
    r.ctx_get_nbi(ctx, back.data() + kCount, dest.get() + kCount, kCount, right());
    shmem_ctx_quiet(ctx);
    EXPECT_EQ(r.ctx_g(ctx, dest.get() + 3, right()), value<T>(me(), 3));
  } else {
    r.get(back.data(), dest.get(), kCount, right());
    r.get_nbi(back.data() + kCount, dest.get() + kCount, kCount, right());
    shmem_quiet();
    EXPECT_EQ(r.g(dest.get() + 3, right()), value<T>(me(), 3));
  }
  expect_from(back.data(), kCount, me());
  expect_from(back.data() + kCount, kCount, me());
  shmem_barrier_all();
}

// iput: this PE's contiguous values to every other element on the right;
// iget: every other element back into every third.
template <class T>
void strided(const Rma<T>& r, shmem_ctx_t ctx) {
  Symmetric<T> dest(2 * kCount);
  const std::vector<T> source = mine<T>(kCount, me());
  shmem_barrier_all();
  if (ctx)
    r.ctx_iput(ctx, dest.get(), source.data(), 2, 1, kCount, right());
  else
    r.iput(dest.get(), source.data(), 2, 1, kCount, right());
  shmem_barrier_all();
  expect_from(dest.get(), kCount, left(), 2);
  for (std::size_t i = 0; i < kCount; ++i) EXPECT_EQ(dest[2 * i + 1], T{}) << "gap " << i;
  std::vector<T> back(3 * kCount);
  if (ctx)
    r.ctx_iget(ctx, back.data(), dest.get(), 3, 2, kCount, right());
  else
    r.iget(back.data(), dest.get(), 3, 2, kCount, right());
  expect_from(back.data(), kCount, me(), 3);
  shmem_barrier_all();
}

// put_signal and its _nbi form: the data is there once the signal is.
template <class T>
void signalled(const Rma<T>& r, shmem_ctx_t ctx) {
  Symmetric<T> dest(2 * kCount);
  Symmetric<uint64_t> signal(2);
  const std::vector<T> source = mine<T>(kCount, me());
  shmem_barrier_all();
  if (ctx) {
    r.ctx_put_signal(ctx, dest.get(), source.data(), kCount, signal.get(), 7, SHMEM_SIGNAL_SET,
                     right());
    r.ctx_put_signal_nbi(ctx, dest.get() + kCount, source.data(), kCount, signal.get() + 1, 5,
                         SHMEM_SIGNAL_ADD, right());
    shmem_ctx_quiet(ctx);
  } else {
    r.put_signal(dest.get(), source.data(), kCount, signal.get(), 7, SHMEM_SIGNAL_SET, right());
    r.put_signal_nbi(dest.get() + kCount, source.data(), kCount, signal.get() + 1, 5,
                     SHMEM_SIGNAL_ADD, right());
    shmem_quiet();
  }
  EXPECT_EQ(shmem_signal_wait_until(signal.get(), SHMEM_CMP_EQ, 7), 7u);
  shmem_uint64_wait_until(signal.get() + 1, SHMEM_CMP_EQ, 5);
  expect_from(dest.get(), kCount, left());
  expect_from(dest.get() + kCount, kCount, left());
  EXPECT_EQ(shmem_signal_fetch(signal.get() + 1), 5u);
  shmem_barrier_all();
}

template <class T>
void every_form(const Rma<T>& r) {
  shmem_ctx_t ctx = SHMEM_CTX_INVALID;
  ASSERT_EQ(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx), 0);
  for (shmem_ctx_t c : {shmem_ctx_t{}, SHMEM_CTX_DEFAULT, ctx}) {
    contiguous(r, c);
    strided(r, c);
    signalled(r, c);
  }
  shmem_ctx_destroy(ctx);
}

#define RMA_TEST(TYPE, NAME)                                        \
  TEST(ShmemRma, NAME) {                                            \
    every_form<TYPE>(Rma<TYPE>{shmem_##NAME##_put,                  \
                               shmem_##NAME##_get,                  \
                               shmem_##NAME##_put_nbi,              \
                               shmem_##NAME##_get_nbi,              \
                               shmem_##NAME##_p,                    \
                               shmem_##NAME##_g,                    \
                               shmem_##NAME##_iput,                 \
                               shmem_##NAME##_iget,                 \
                               shmem_##NAME##_put_signal,           \
                               shmem_##NAME##_put_signal_nbi,       \
                               shmem_ctx_##NAME##_put,              \
                               shmem_ctx_##NAME##_get,              \
                               shmem_ctx_##NAME##_put_nbi,          \
                               shmem_ctx_##NAME##_get_nbi,          \
                               shmem_ctx_##NAME##_p,                \
                               shmem_ctx_##NAME##_g,                \
                               shmem_ctx_##NAME##_iput,             \
                               shmem_ctx_##NAME##_iget,             \
                               shmem_ctx_##NAME##_put_signal,       \
                               shmem_ctx_##NAME##_put_signal_nbi}); \
  }
MPIDSM_SHMEM_RMA_TYPES(RMA_TEST)

// The sized forms move elements of their width, whatever they hold.
struct Sized {
  std::size_t width;
  void (*put)(void*, const void*, size_t, int);
  void (*get)(void*, const void*, size_t, int);
  void (*put_nbi)(void*, const void*, size_t, int);
  void (*get_nbi)(void*, const void*, size_t, int);
  void (*put_signal)(void*, const void*, size_t, uint64_t*, uint64_t, int, int);
  void (*put_signal_nbi)(void*, const void*, size_t, uint64_t*, uint64_t, int, int);
  void (*ctx_put)(shmem_ctx_t, void*, const void*, size_t, int);
  void (*ctx_get)(shmem_ctx_t, void*, const void*, size_t, int);
  void (*ctx_put_nbi)(shmem_ctx_t, void*, const void*, size_t, int);
  void (*ctx_get_nbi)(shmem_ctx_t, void*, const void*, size_t, int);
  void (*ctx_put_signal)(shmem_ctx_t, void*, const void*, size_t, uint64_t*, uint64_t, int, int);
  void (*ctx_put_signal_nbi)(shmem_ctx_t, void*, const void*, size_t, uint64_t*, uint64_t, int,
                             int);
  void (*iput)(void*, const void*, ptrdiff_t, ptrdiff_t, size_t, int);
  void (*iget)(void*, const void*, ptrdiff_t, ptrdiff_t, size_t, int);
  void (*ctx_iput)(shmem_ctx_t, void*, const void*, ptrdiff_t, ptrdiff_t, size_t, int);
  void (*ctx_iget)(shmem_ctx_t, void*, const void*, ptrdiff_t, ptrdiff_t, size_t, int);
};

std::vector<unsigned char> pattern(std::size_t bytes, int pe) {
  std::vector<unsigned char> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = value<unsigned char>(pe, i);
  return v;
}

void sized(const Sized& s) {
  const std::size_t bytes = kCount * s.width;
  Symmetric<unsigned char> dest(8 * bytes);
  Symmetric<uint64_t> signal(2);
  const std::vector<unsigned char> source = pattern(bytes, me()), expected = pattern(bytes, left());
  unsigned char* d = dest.get();
  shmem_barrier_all();
  s.put(d, source.data(), kCount, right());
  s.put_nbi(d + bytes, source.data(), kCount, right());
  s.ctx_put(SHMEM_CTX_DEFAULT, d + 2 * bytes, source.data(), kCount, right());
  s.ctx_put_nbi(SHMEM_CTX_DEFAULT, d + 3 * bytes, source.data(), kCount, right());
  s.put_signal(d + 4 * bytes, source.data(), kCount, signal.get(), 1, SHMEM_SIGNAL_ADD, right());
  s.put_signal_nbi(d + 5 * bytes, source.data(), kCount, signal.get(), 1, SHMEM_SIGNAL_ADD,
                   right());
  s.ctx_put_signal(SHMEM_CTX_DEFAULT, d + 6 * bytes, source.data(), kCount, signal.get(), 1,
                   SHMEM_SIGNAL_ADD, right());
  s.ctx_put_signal_nbi(SHMEM_CTX_DEFAULT, d + 7 * bytes, source.data(), kCount, signal.get(), 1,
                       SHMEM_SIGNAL_ADD, right());
  shmem_quiet();
  shmem_uint64_wait_until(signal.get(), SHMEM_CMP_EQ, 4);
  shmem_barrier_all();
  for (int block = 0; block < 8; ++block)
    EXPECT_EQ(std::memcmp(d + block * bytes, expected.data(), bytes), 0) << "block " << block;
  std::vector<unsigned char> back(4 * bytes);
  s.get(back.data(), d, kCount, right());
  s.get_nbi(back.data() + bytes, d, kCount, right());
  s.ctx_get(SHMEM_CTX_DEFAULT, back.data() + 2 * bytes, d, kCount, right());
  s.ctx_get_nbi(SHMEM_CTX_DEFAULT, back.data() + 3 * bytes, d, kCount, right());
  shmem_quiet();
  for (int block = 0; block < 4; ++block)
    EXPECT_EQ(std::memcmp(back.data() + block * bytes, source.data(), bytes), 0)
        << "block " << block;
  shmem_barrier_all();
  if (s.iput) {  // every other element on the right, then back
    std::memset(d, 0, 2 * bytes);
    shmem_barrier_all();
    s.iput(d, source.data(), 2, 1, kCount / 2, right());
    s.ctx_iput(SHMEM_CTX_DEFAULT, d + s.width, source.data() + bytes / 2, 2, 1, kCount / 2,
               right());
    shmem_barrier_all();
    EXPECT_EQ(std::memcmp(d, expected.data(), s.width), 0);
    EXPECT_EQ(std::memcmp(d + s.width, expected.data() + bytes / 2, s.width), 0);
    std::vector<unsigned char> even(bytes), odd(bytes);
    s.iget(even.data(), d, 1, 2, kCount / 2, right());
    s.ctx_iget(SHMEM_CTX_DEFAULT, odd.data(), d + s.width, 1, 2, kCount / 2, right());
    EXPECT_EQ(std::memcmp(even.data(), source.data(), bytes / 2), 0);
    EXPECT_EQ(std::memcmp(odd.data(), source.data() + bytes / 2, bytes / 2), 0);
    shmem_barrier_all();
  }
}

#define SIZED(SIZE)                                                                \
  shmem_put##SIZE, shmem_get##SIZE, shmem_put##SIZE##_nbi, shmem_get##SIZE##_nbi,  \
      shmem_put##SIZE##_signal, shmem_put##SIZE##_signal_nbi, shmem_ctx_put##SIZE, \
      shmem_ctx_get##SIZE, shmem_ctx_put##SIZE##_nbi, shmem_ctx_get##SIZE##_nbi,   \
      shmem_ctx_put##SIZE##_signal, shmem_ctx_put##SIZE##_signal_nbi
#define STRIDED(SIZE) shmem_iput##SIZE, shmem_iget##SIZE, shmem_ctx_iput##SIZE, shmem_ctx_iget##SIZE

TEST(ShmemRma, Sized8) {
  sized({1, SIZED(8), STRIDED(8)});
}
TEST(ShmemRma, Sized16) {
  sized({2, SIZED(16), STRIDED(16)});
}
TEST(ShmemRma, Sized32) {
  sized({4, SIZED(32), STRIDED(32)});
}
TEST(ShmemRma, Sized64) {
  sized({8, SIZED(64), STRIDED(64)});
}
TEST(ShmemRma, Sized128) {
  sized({16, SIZED(128), STRIDED(128)});
}
TEST(ShmemRma, Mem) {
  sized({1, SIZED(mem), nullptr, nullptr, nullptr, nullptr});
}

// A transfer larger than any eager path, through put and get.
TEST(ShmemRma, LargeTransfersArriveWhole) {
  const std::size_t bytes = 1 << 20;
  Symmetric<unsigned char> dest(bytes);
  const std::vector<unsigned char> source = pattern(bytes, me());
  shmem_barrier_all();
  shmem_putmem(dest.get(), source.data(), bytes, right());
  shmem_barrier_all();
  EXPECT_EQ(std::memcmp(dest.get(), pattern(bytes, left()).data(), bytes), 0);
  std::vector<unsigned char> back(bytes);
  shmem_getmem(back.data(), dest.get(), bytes, right());
  EXPECT_EQ(back, source);
  shmem_barrier_all();
}

}  // namespace
