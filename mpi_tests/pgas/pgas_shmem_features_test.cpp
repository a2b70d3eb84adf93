// OpenSHMEM's everyday features in the C++ PGAS face (issue 32): zeroed
// allocation, float and double atomics, non-blocking fetching atomics, a
// local pointer to a peer's data, waits and tests on arrays of words,
// signal_fetch and put_signal_nbi. Run at 1, 2 and 4 ranks, over UCX and
// tcp, and across simulated hosts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/pgas.hpp"
#include "pgas_fixture.hpp"

namespace mpidsm {
namespace {

using testing::fill_pattern;
using testing::first_mismatch;

using PgasFeatures = testing::WorldPgasTest;

// Addresses resolve to their allocation among many, as allocations come and
// go (the heap's index by offset), and each reaches the same object on a peer.
TEST_F(PgasFeatures, ManyAllocationsEachResolveByAddress) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
  constexpr int kArrays = 200;
  std::vector<SymmetricArray<long>> arrays;
  for (int a = 0; a < kArrays; ++a) arrays.push_back(p.allocate_zeroed<long>(8 + a % 5));
  for (int a = 0; a < kArrays; a += 3) p.free(arrays[static_cast<std::size_t>(a)]);
  for (int a = 0; a < kArrays; a += 3)
    arrays[static_cast<std::size_t>(a)] = p.allocate_zeroed<long>(6);
  p.barrier();
  for (int a = kArrays - 1; a >= 0; --a) {  // each array in turn: no lookup repeats the last
    const long value = 1000L * me + a;
    p.put(p.global(arrays[static_cast<std::size_t>(a)].local() + 5, next), &value, 1);
  }
  p.barrier();
  for (int a = 0; a < kArrays; ++a)
    EXPECT_EQ(arrays[static_cast<std::size_t>(a)][5], 1000L * prev + a) << "array " << a;
  for (auto& array : arrays) p.free_at(array.local());
  EXPECT_MPIDSM_ERROR(p.global(arrays[7].local(), me), Errc::unregistered, "no live allocation");
}

// A program's static data, made symmetric beside the heap.
std::uint64_t segment_words[64];

TEST_F(PgasFeatures, AnAddedSegmentIsReachedAtTheSameOffsets) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
  std::fill(std::begin(segment_words), std::end(segment_words), 0);
  p.add_symmetric_segment(segment_words, sizeof segment_words);
  const std::uint64_t mine[2] = {100u + me, 200u + me};
  p.put(p.global(segment_words + 2, next), mine, 2);
  p.atomic_add(p.global(segment_words + 10, 0), std::uint64_t{1});
  p.put_signal(p.global(segment_words + 20, next), mine, 2, p.global(segment_words + 30, next), 1,
               SignalOp::set);
  EXPECT_EQ(p.wait_until(segment_words + 30, Compare::eq, std::uint64_t{1}), 1u);
  p.barrier();
  EXPECT_EQ(segment_words[2], 100u + prev);
  EXPECT_EQ(segment_words[3], 200u + prev);
  EXPECT_EQ(segment_words[21], 200u + prev);
  EXPECT_EQ(p.atomic_fetch(p.global(segment_words + 10, 0)), static_cast<std::uint64_t>(n));
  std::uint64_t back[2] = {};
  p.get(back, p.global(segment_words + 2, next), 2);
  EXPECT_EQ(back[0], 100u + me);
  EXPECT_EQ(p.local_pointer(p.global(segment_words + 2, me)), segment_words + 2);
  if (n > 1) {
    EXPECT_EQ(p.local_pointer(p.global(segment_words + 2, next)), nullptr);
    EXPECT_MPIDSM_ERROR(p.add_symmetric_segment(segment_words, me == 0 ? 8 : 16),
                        Errc::collective_mismatch, "same executable");
  }
  EXPECT_MPIDSM_ERROR(p.get(back, p.global(segment_words + 63, next), 2), Errc::out_of_range,
                      "outside the 512-byte allocation");
  p.barrier();
}

// Memory a freed allocation dirtied comes back zeroed, on every rank, before
// any rank can reach it.
TEST_F(PgasFeatures, ZeroedAllocationReadsZeroEverywhere) {
  Pgas& p = *pgas_;
  const int n = p.size();
  constexpr std::size_t count = 4096;
  auto dirty = p.allocate<long>(count);
  std::fill(dirty.local(), dirty.local() + count, -1L);
  p.free(dirty);
  auto zeroed = p.allocate_zeroed<long>(count);
  EXPECT_EQ(std::count(zeroed.local(), zeroed.local() + count, 0L), static_cast<long>(count));
  std::vector<long> seen(count, -1);
  for (int r = 0; r < n; ++r) {
    p.get(seen.data(), zeroed.at(r), count);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 0L), static_cast<long>(count)) << "rank " << r;
  }
  p.barrier();
  p.free(zeroed);
}

// fetch, set and swap on float and double move the exact bit patterns.
TEST_F(PgasFeatures, FloatAndDoubleAtomics) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
  auto floats = p.allocate_zeroed<float>(2);
  auto doubles = p.allocate_zeroed<double>(2);
  p.atomic_set(floats.at(next), 1.5f + static_cast<float>(me));
  p.atomic_set(doubles.at(next), -0.25 * me);
  p.barrier();
  EXPECT_EQ(p.atomic_fetch(floats.at(me)), 1.5f + static_cast<float>(prev));
  EXPECT_EQ(p.atomic_fetch(doubles.at(me)), -0.25 * prev);
  p.barrier();
  EXPECT_EQ(p.atomic_swap(floats.at(next, 1), 3.0f), 0.0f);
  EXPECT_EQ(p.atomic_swap(doubles.at(next, 1), 1e300), 0.0);
  p.barrier();
  EXPECT_EQ(floats[1], 3.0f);
  EXPECT_EQ(doubles[1], 1e300);
  p.barrier();
  p.free(doubles);
  p.free(floats);
}

// Every rank adds to rank 0's counter with fetching non-blocking atomics: after
// quiet the fetched values are distinct and account for every addition; signed
// words wrap as two's complement.
TEST_F(PgasFeatures, NonBlockingFetchingAtomicsDeliverAtQuiet) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  auto counter = p.allocate_zeroed<std::int64_t>(1);
  auto small = p.allocate_zeroed<std::int32_t>(1);
  constexpr int adds = 50;
  std::vector<std::int64_t> fetched(adds);
  for (int i = 0; i < adds; ++i)
    p.atomic_fetch_add_nbi(&fetched[i], counter.at(0), std::int64_t{1});
  std::int32_t old = 0;
  p.atomic_fetch_add_nbi(&old, small.at(0), std::int32_t{-3});
  p.quiet();
  std::vector<std::int64_t> all(static_cast<std::size_t>(adds * n));
  MPI_Allgather(fetched.data(), adds, MPI_INT64_T, all.data(), adds, MPI_INT64_T, MPI_COMM_WORLD);
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<std::int64_t>(i));
  p.barrier();
  if (me == 0) {
    EXPECT_EQ(counter[0], std::int64_t{adds} * n);
    EXPECT_EQ(small[0], -3 * n);
  }
  std::int64_t before = -1;
  p.atomic_compare_swap_nbi(&before, counter.at(0), std::int64_t{-5}, std::int64_t{7});
  p.quiet();
  EXPECT_EQ(before, std::int64_t{adds} * n);  // no swap: the comparand did not match
  p.barrier();
  p.free(small);
  p.free(counter);
}

// local_pointer: this rank's data always, a same-node peer's when its heap is
// mapped here (then stores through it are the peer's data), nullptr
// otherwise; out of bounds is an error.
TEST_F(PgasFeatures, LocalPointerReachesMappedPeers) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  auto words = p.allocate_zeroed<std::uint64_t>(static_cast<std::size_t>(n));
  EXPECT_EQ(p.local_pointer(words.at(me)), words.local());
  for (int r = 0; r < n; ++r) {
    std::uint64_t* there = p.local_pointer(words.at(r, static_cast<std::size_t>(me)));
    EXPECT_EQ(there != nullptr, r == me || p.direct(r)) << "rank " << r;
    const std::uint64_t value = 100u + static_cast<std::uint64_t>(me);
    if (there)
      *there = value;
    else
      p.put(words.at(r, static_cast<std::size_t>(me)), &value, 1);
  }
  p.barrier();
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(words[static_cast<std::size_t>(r)], 100u + static_cast<std::uint64_t>(r));
  EXPECT_MPIDSM_ERROR(p.local_pointer(words.at(me, static_cast<std::size_t>(n))),
                      Errc::out_of_range, "outside");
  p.barrier();
  p.free(words);
}

// Every rank raises its word in rank 0's array, one rank at a time; rank 0
// waits for any, some and all of them, leaving its own word out.
TEST_F(PgasFeatures, WaitsAndTestsOnArraysOfWords) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  const auto count = static_cast<std::size_t>(n) + 1;  // the last word is never raised
  auto flags = p.allocate_zeroed<std::uint64_t>(count);
  std::vector<int> status(count, 0);
  status[0] = 1;          // rank 0's own word: left out
  status[count - 1] = 1;  // never raised: left out
  std::vector<std::size_t> indices(count);
  if (me == 0) {
    EXPECT_EQ(p.test_any(flags.local(), count, status.data(), Compare::ne, std::uint64_t{0}),
              Pgas::no_index);
    EXPECT_EQ(p.test_some(flags.local(), count, indices.data(), status.data(), Compare::ne,
                          std::uint64_t{0}),
              0u);
    EXPECT_EQ(n == 1,
              p.test_all(flags.local(), count, status.data(), Compare::ne, std::uint64_t{0}));
  }
  p.barrier();
  for (int r = 1; r < n; ++r) {
    if (me == r) p.atomic_set(flags.at(0, static_cast<std::size_t>(r)), std::uint64_t{1});
    if (me == 0) {
      // Only rank r's word left in: the wait ends when r's store lands.
      std::vector<int> only_r(count, 1);
      only_r[static_cast<std::size_t>(r)] = 0;
      EXPECT_EQ(
          p.wait_until_any(flags.local(), count, only_r.data(), Compare::eq, std::uint64_t{1}),
          static_cast<std::size_t>(r));
      const std::size_t some = p.wait_until_some(flags.local(), count, indices.data(),
                                                 status.data(), Compare::eq, std::uint64_t{1});
      EXPECT_EQ(some, static_cast<std::size_t>(r));  // ranks 1..r raised theirs
      for (std::size_t i = 0; i < some; ++i) EXPECT_EQ(indices[i], i + 1);
    }
    p.barrier();
  }
  if (me == 0) {
    p.wait_until_all(flags.local(), count, status.data(), Compare::eq, std::uint64_t{1});
    EXPECT_TRUE(p.test_all(flags.local(), count, status.data(), Compare::eq, std::uint64_t{1}));
    std::vector<int> every(count, 1);
    EXPECT_EQ(p.wait_until_any(flags.local(), count, every.data(), Compare::eq, std::uint64_t{1}),
              Pgas::no_index);
  }
  EXPECT_MPIDSM_ERROR(p.test_all(flags.local(), 0, nullptr, Compare::eq, std::uint64_t{1}),
                      Errc::invalid_argument, "count 0");
  EXPECT_MPIDSM_ERROR(
      p.wait_until_all(flags.local(), count + 1, nullptr, Compare::eq, std::uint64_t{1}),
      Errc::unregistered, "wait_until_all");
  p.barrier();
  p.free(flags);
}

// put_signal_nbi: the receiver that sees the signal sees the data; the sender
// may reuse its buffer after quiet; signal_fetch reads the word.
TEST_F(PgasFeatures, PutSignalNbiAndSignalFetch) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
  constexpr std::size_t bytes = 64 * 1024;
  auto data = p.allocate_zeroed<std::uint8_t>(bytes);
  auto signal = p.allocate_zeroed<std::uint64_t>(1);
  std::vector<std::uint8_t> out(bytes);
  for (std::uint64_t round = 1; round <= 10; ++round) {
    const std::size_t size = round % 2 ? 64 : bytes;  // a call over tcp, and UCX's put
    fill_pattern(out.data(), me, static_cast<int>(round), size);
    p.put_signal_nbi(data.at(next), out.data(), size, signal.at(next), std::uint64_t{1},
                     SignalOp::add);
    p.wait_until(signal.local(), Compare::ge, round);
    EXPECT_GE(p.signal_fetch(signal.local()), round);
    ASSERT_EQ(first_mismatch(data.local(), prev, static_cast<int>(round), size), size)
        << "round " << round;
    p.quiet();
    p.barrier();
  }
  p.put_signal_nbi(data.at(next), out.data(), 8, signal.at(next), std::uint64_t{77}, SignalOp::set);
  p.quiet();
  p.barrier();
  EXPECT_EQ(p.signal_fetch(signal.local()), 77u);
  std::uint64_t outside = 0;
  EXPECT_MPIDSM_ERROR(p.signal_fetch(&outside), Errc::unregistered, "symmetric heap");
  p.barrier();
  p.free(signal);
  p.free(data);
}

}  // namespace
}  // namespace mpidsm
