// The PGAS face: symmetric allocation, put/get in every form and size class
// to every peer, strided transfers, atomics, signals, and its error cases.
// Registered three times: shared memory with the load/store path, shared
// memory through UCX (MPIDSM_DIRECT_ACCESS=off), and tcp.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

constexpr std::size_t kMaxSize = 4u << 20;

// Rounds first..last of put_signal (set) to the next rank: once its own
// signal shows the round, each rank checks the data the previous rank sent.
void put_signal_rounds(Pgas& p, const SymmetricArray<std::uint8_t>& data,
                       const SymmetricArray<std::uint64_t>& signal, std::size_t size,
                       std::uint64_t first, std::uint64_t last) {
  const int me = p.rank(), n = p.size();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  std::vector<std::uint8_t> out(size);
  for (std::uint64_t round = first; round <= last; ++round) {
    fill_pattern(out.data(), me, static_cast<int>(round), size);
    p.put_signal(data.at(next), out.data(), size, signal.at(next), round, SignalOp::set);
    p.wait_until(signal.local(), Compare::ge, round);
    ASSERT_EQ(first_mismatch(data.local(), prev, static_cast<int>(round), size), size)
        << "round " << round << " after the signal";
    p.barrier();  // the next round's put must not overwrite data still being checked
  }
}

// Rounds 1..last of `chunks` non-blocking puts of `chunk` bytes to the next
// rank, a fence, and the round put to its flag: once its own flag shows the
// round, each rank checks the data the previous rank sent.
void fenced_flag_rounds(Pgas& p, const SymmetricArray<std::uint8_t>& data,
                        const SymmetricArray<std::uint64_t>& flag, std::size_t chunk,
                        std::size_t chunks, std::uint64_t last) {
  const int me = p.rank(), n = p.size();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const std::size_t bytes = chunk * chunks;
  std::vector<std::uint8_t> out(bytes);
  for (std::uint64_t round = 1; round <= last; ++round) {
    fill_pattern(out.data(), me, static_cast<int>(round), bytes);
    for (std::size_t c = 0; c < chunks; ++c)
      p.put_nbi(data.at(next, c * chunk), out.data() + c * chunk, chunk);
    p.fence();
    p.put(flag.at(next), &round, 1);
    p.wait_until(flag.local(), Compare::ge, round);
    ASSERT_EQ(first_mismatch(data.local(), prev, static_cast<int>(round), bytes), bytes)
        << "round " << round << " after the flag";
    p.barrier();
  }
}

using PgasTest = testing::WorldPgasTest;

TEST_F(PgasTest, PathMatchesConfiguration) {
  Pgas& p = *pgas_;
  const bool expect_direct = runtime_->config().direct_access && !testing::tcp_only();
  for (int r = 0; r < p.size(); ++r) {
    EXPECT_EQ(p.direct(r), (expect_direct && testing::same_node(r)) ||
                               (r == p.rank() && runtime_->config().direct_access))
        << "rank " << r;
  }
}

TEST_F(PgasTest, AllocationIsSymmetricAndAccounted) {
  Pgas& p = *pgas_;
  const std::size_t before = p.heap_used();
  auto a = p.allocate<double>(1000);
  auto b = p.allocate<char>(1);
  EXPECT_EQ(a.size(), 1000u);
  EXPECT_GE(p.heap_used(), before + 1000 * sizeof(double) + 1);
  EXPECT_EQ(p.heap_capacity(), runtime_->config().heap_size);
  // Same offset everywhere: rank r's pointer to element i is element i on r.
  long offset = reinterpret_cast<char*>(b.local()) - reinterpret_cast<char*>(a.local());
  long low = 0, high = 0;
  MPI_Allreduce(&offset, &low, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&offset, &high, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(low, high);
  p.free(b);
  p.free(a);
  EXPECT_EQ(p.heap_used(), before);
}

TEST_F(PgasTest, BlockingPutAndGetEverySizeEveryPeer) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  auto heap = p.allocate<std::uint8_t>(kMaxSize * n);
  std::vector<std::uint8_t> buffer(kMaxSize);
  for (std::size_t size : testing::size_classes(kMaxSize)) {
    for (int peer = 0; peer < n; ++peer) {
      fill_pattern(buffer.data(), me, peer, size);
      p.put(heap.at(peer, kMaxSize * me), buffer.data(), size);  // source reusable at return
    }
    p.barrier();
    for (int writer = 0; writer < n; ++writer)
      ASSERT_EQ(first_mismatch(heap.local() + kMaxSize * writer, writer, me, size), size)
          << "put of " << size << " bytes from rank " << writer;
    for (int peer = 0; peer < n; ++peer) {
      std::fill_n(buffer.begin(), size, 0);
      p.get(buffer.data(), heap.at(peer, kMaxSize * me), size);
      ASSERT_EQ(first_mismatch(buffer.data(), me, peer, size), size)
          << "get of " << size << " bytes from rank " << peer;
    }
    p.barrier();
  }
  p.free(heap);
}

TEST_F(PgasTest, ImplicitAndHandleNonBlocking) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  constexpr std::size_t size = 100000;
  auto heap = p.allocate<std::uint8_t>(size * n);
  std::vector<std::vector<std::uint8_t>> out(n, std::vector<std::uint8_t>(size));
  for (int peer = 0; peer < n; ++peer) {
    fill_pattern(out[peer].data(), me, peer, size);
    if (peer % 2)
      p.put_nbi(heap.at(peer, size * me), out[peer].data(), size);
    else
      p.put_nb(heap.at(peer, size * me), out[peer].data(), size).wait();
  }
  p.quiet();
  p.barrier();
  for (int writer = 0; writer < n; ++writer)
    EXPECT_EQ(first_mismatch(heap.local() + size * writer, writer, me, size), size);
  std::vector<std::vector<std::uint8_t>> in(n, std::vector<std::uint8_t>(size));
  std::vector<Request> requests;
  for (int peer = 0; peer < n; ++peer) {
    if (peer % 2)
      p.get_nbi(in[peer].data(), heap.at(peer, size * me), size);
    else
      requests.push_back(p.get_nb(in[peer].data(), heap.at(peer, size * me), size));
  }
  for (auto& r : requests) r.wait();
  p.quiet();
  for (int peer = 0; peer < n; ++peer)
    EXPECT_EQ(first_mismatch(in[peer].data(), me, peer, size), size) << "rank " << peer;
  p.barrier();
  p.free(heap);
}

TEST_F(PgasTest, StridedPutAndGet) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  const int next = (me + 1) % n;
  auto matrix = p.allocate<std::int64_t>(64 * 64);
  std::fill_n(matrix.local(), 64 * 64, -1);
  p.barrier();
  // Column `me` of a 64x64 row-major matrix on the next rank, in blocks of 2
  // rows: 32 blocks of 2 elements, remote stride 128 (two rows).
  std::vector<std::int64_t> column(64);
  std::iota(column.begin(), column.end(), 1000 * me);
  p.iput(matrix.at(next, me), column.data(), 64, 1, 1, 64);
  p.barrier();
  const int prev = (me + n - 1) % n;
  for (int row = 0; row < 64; ++row)
    ASSERT_EQ(matrix[row * 64 + prev], 1000 * prev + row) << "row " << row;
  // Read every other element of that column back, packed two per block.
  std::vector<std::int64_t> back(64, 0);
  p.iget(back.data(), matrix.at(next, me), 2, 128, 1, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(back[2 * i], 1000 * me + 2 * i) << "block " << i;
  p.barrier();
  p.free(matrix);
}

TEST_F(PgasTest, AtomicsAreExactUnderContention) {
  Pgas& p = *pgas_;
  const int n = p.size();
  auto counters = p.allocate<std::uint64_t>(2);
  counters[0] = counters[1] = 0;
  p.barrier();
  constexpr std::uint64_t kOps = 20000;
  for (std::uint64_t i = 0; i < kOps; ++i) {
    p.atomic_fetch_add(counters.at(0, 0), std::uint64_t(1));
    p.atomic_inc(counters.at(n - 1, 1));
  }
  p.barrier();
  EXPECT_EQ(p.atomic_fetch(counters.at(0, 0)), kOps * n);
  EXPECT_EQ(p.atomic_fetch(counters.at(n - 1, 1)), kOps * n);
  p.barrier();
  p.free(counters);
}

TEST_F(PgasTest, EveryAtomicOperation) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  auto w64 = p.allocate<std::uint64_t>(n);
  auto w32 = p.allocate<std::int32_t>(n);
  const int peer = (me + 1) % n;
  auto a = w64.at(peer, me);
  auto b = w32.at(peer, me);
  p.atomic_set(a, std::uint64_t(10));
  p.atomic_set(b, -10);
  EXPECT_EQ(p.atomic_fetch(a), 10u);
  EXPECT_EQ(p.atomic_fetch_inc(a), 10u);
  EXPECT_EQ(p.atomic_fetch_add(b, -5), -10);
  EXPECT_EQ(p.atomic_swap(a, std::uint64_t(0xf0)), 11u);
  EXPECT_EQ(p.atomic_compare_swap(a, std::uint64_t(1), std::uint64_t(2)), 0xf0u);  // no swap
  EXPECT_EQ(p.atomic_compare_swap(a, std::uint64_t(0xf0), std::uint64_t(0xff)), 0xf0u);
  EXPECT_EQ(p.atomic_fetch_and(a, std::uint64_t(0x3c)), 0xffu);
  EXPECT_EQ(p.atomic_fetch_or(a, std::uint64_t(0x03)), 0x3cu);
  EXPECT_EQ(p.atomic_fetch_xor(a, std::uint64_t(0x0f)), 0x3fu);
  p.atomic_add(a, std::uint64_t(0x100));
  p.atomic_and(a, std::uint64_t(0x1f0));
  p.atomic_or(a, std::uint64_t(0x1));
  p.atomic_xor(a, std::uint64_t(0x200));
  p.atomic_inc(b);
  p.quiet();
  EXPECT_EQ(p.atomic_fetch(a), ((0x30u + 0x100) & 0x1f0) | 0x1 | 0x200);
  EXPECT_EQ(p.atomic_fetch(b), -14);
  p.barrier();
  p.free(w32);
  p.free(w64);
}

TEST_F(PgasTest, PutWithSignalDeliversDataBeforeSignal) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  constexpr std::size_t size = 1 << 20;
  auto data = p.allocate<std::uint8_t>(size);
  auto signal = p.allocate<std::uint64_t>(1);
  signal[0] = 0;
  p.barrier();
  put_signal_rounds(p, data, signal, size, 1, 5);
  if (HasFatalFailure()) return;
  // Signal add: every rank adds 1 to rank 0's counter.
  signal[0] = 0;
  p.barrier();
  std::uint8_t byte = 7;
  p.put_signal(data.at(0, me), &byte, 1, signal.at(0), 1, SignalOp::add);
  if (me == 0) {
    EXPECT_EQ(p.wait_until(signal.local(), Compare::eq, std::uint64_t(n)), std::uint64_t(n));
    for (int r = 0; r < n; ++r) EXPECT_EQ(data[r], 7);
  }
  EXPECT_TRUE(p.test(signal.local(), Compare::le, std::uint64_t(n)));
  p.barrier();
  p.free(signal);
  p.free(data);
}

// The message pattern with small puts: data, fence, flag; and small puts
// with signal. Whoever sees the flag or the signal sees the data. (Over tcp
// small puts travel as remote calls: fence and put_signal must order them.)
TEST_F(PgasTest, SmallPutsLandBeforeTheFlagAfterAFenceAndBeforeTheirSignal) {
  Pgas& p = *pgas_;
  constexpr std::size_t chunk = 64, chunks = 32, bytes = chunk * chunks;
  auto data = p.allocate<std::uint8_t>(bytes);
  auto flag = p.allocate<std::uint64_t>(1);
  flag[0] = 0;
  p.barrier();
  fenced_flag_rounds(p, data, flag, chunk, chunks, 20);
  if (HasFatalFailure()) return;
  put_signal_rounds(p, data, flag, bytes, 21, 40);
  if (HasFatalFailure()) return;
  p.free(flag);
  p.free(data);
}

// Small non-blocking puts over tcp are gathered per peer (put_calls.hpp):
// a later get or atomic to that peer sees them, a later put of the same
// bytes wins, batches that fill up or outnumber the buffers still land, and
// iput's blocking return means its blocks have landed.
TEST_F(PgasTest, GatheredPutsLandInOrderBeforeLaterOperations) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  constexpr std::size_t bytes = 64 * 1024;
  auto data = p.allocate<std::uint8_t>(bytes);
  auto words = p.allocate<std::uint64_t>(8);
  std::fill(data.local(), data.local() + bytes, std::uint8_t{0});
  std::fill(words.local(), words.local() + 8, std::uint64_t{0});
  p.barrier();
  // Sizes 1 to 2 KiB, 100 KiB in all: several full batches per peer.
  std::vector<std::uint8_t> out(bytes);
  fill_pattern(out.data(), me, 1, bytes);
  std::vector<std::uint8_t> seen(bytes);
  for (std::size_t at = 0, size = 1; at < bytes; at += size, size = size % 2048 + 37)
    p.put_nbi(data.at(next, at), out.data() + at, std::min(size, bytes - at));
  p.get(seen.data(), data.at(next), bytes);  // after the puts to the same peer
  EXPECT_EQ(first_mismatch(seen.data(), me, 1, bytes), bytes) << "a get after gathered puts";
  // The same word put twice: the later put wins.
  for (std::uint64_t v = 1; v <= 100; ++v) p.put_nbi(words.at(next, 0), &v, 1);
  EXPECT_EQ(p.atomic_fetch_add(words.at(next, 0), std::uint64_t{1000}), 100u);
  // Puts to every peer, more batches than buffers when n is large, then quiet.
  for (int round = 0; round < 40; ++round)
    for (int r = 0; r < n; ++r) {
      const std::uint64_t v = static_cast<std::uint64_t>(round * n + me);
      p.put_nbi(words.at(r, 1 + static_cast<std::size_t>(me % 7)), &v, 1);
    }
  p.quiet();
  // iput of small blocks: complete at the target when it returns.
  auto strided = p.allocate<std::uint64_t>(8);
  std::fill(strided.local(), strided.local() + 8, std::uint64_t{0});
  p.barrier();
  const std::vector<std::uint64_t> stride_out(4, static_cast<std::uint64_t>(me + 7));
  p.iput(strided.at(next), stride_out.data(), 2, 1, 1, 4);  // elements 0, 2, 4, 6
  p.barrier();
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(strided[i], i % 2 == 0 ? static_cast<std::uint64_t>(prev + 7) : 0u)
        << "element " << i;
  EXPECT_EQ(words[0], 1100u);  // 100 put, then 1000 added
  EXPECT_EQ(first_mismatch(data.local(), prev, 1, bytes), bytes);
  if (n <= 7) {  // each rank alone writes its slot: the last round's value stays
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(words[1 + static_cast<std::size_t>(r)], static_cast<std::uint64_t>(39 * n + r))
          << "slot of rank " << r;
  }
  p.barrier();
  p.free(strided);
  p.free(words);
  p.free(data);
}

// Large puts over tcp land by rendezvous (put_calls.hpp), unordered among
// themselves but before anything issued after a fence, and before any
// other operation to their peer: the flag after a fence, a get of the same
// bytes, a later put of them after a fence. A blocking put's and put_nb's
// source is the caller's again once they complete.
TEST_F(PgasTest, LargePutsLandBeforeTheFlagAfterAFenceAndBeforeLaterOperations) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  constexpr std::size_t chunk = 256 * 1024 + 8, chunks = 3, bytes = chunk * chunks;
  auto data = p.allocate<std::uint8_t>(bytes);
  auto flag = p.allocate<std::uint64_t>(1);
  flag[0] = 0;
  p.barrier();
  fenced_flag_rounds(p, data, flag, chunk, chunks, 6);
  if (HasFatalFailure()) return;
  std::vector<std::uint8_t> out(bytes), seen(bytes);
  // A get after large puts to the same peer sees them.
  fill_pattern(out.data(), me, 7, bytes);
  p.put_nbi(data.at(next), out.data(), bytes);
  p.get(seen.data(), data.at(next), bytes);
  EXPECT_EQ(first_mismatch(seen.data(), me, 7, bytes), bytes) << "a get after a large put";
  // Of two large puts of the same bytes with a fence between, the later wins.
  fill_pattern(seen.data(), me, 9, bytes);
  p.put_nbi(data.at(next), out.data(), bytes);
  p.fence();
  p.put_nbi(data.at(next), seen.data(), bytes);
  p.quiet();
  p.barrier();
  EXPECT_EQ(first_mismatch(data.local(), prev, 9, bytes), bytes) << "the put after the fence";
  p.barrier();
  // Sources reused as soon as put and put_nb's request complete.
  fill_pattern(out.data(), me, 11, bytes);
  p.put(data.at(next), out.data(), chunk);
  std::fill_n(out.data(), chunk, std::uint8_t{0});
  Request sending = p.put_nb(data.at(next, chunk), out.data() + chunk, bytes - chunk);
  sending.wait();
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  p.quiet();
  p.barrier();
  EXPECT_EQ(first_mismatch(data.local(), prev, 11, bytes), bytes) << "after put and put_nb";
  p.barrier();
  p.free(flag);
  p.free(data);
}

TEST_F(PgasTest, ErrorsNameWhatWasWrongAndLeaveThePgasUsable) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  auto array = p.allocate<std::uint64_t>(10);
  std::uint64_t value = 1;
  // Out-of-bounds global pointer.
  EXPECT_MPIDSM_ERROR(p.put(array.at(0, 10), &value, 1), Errc::out_of_range,
                      "bytes [80, 88) are outside the 80-byte allocation");
  EXPECT_MPIDSM_ERROR(p.get(&value, array.at(0, 5), 6), Errc::out_of_range, "outside");
  EXPECT_MPIDSM_ERROR(p.put(array.at(0) - 1, &value, 1), Errc::out_of_range, "outside");
  EXPECT_MPIDSM_ERROR(p.put(array.at(n, 0), &value, 1), Errc::invalid_rank,
                      "rank " + std::to_string(n));
  EXPECT_MPIDSM_ERROR(p.put(global_ptr<std::uint64_t>(), &value, 1), Errc::invalid_argument,
                      "null");
  // Misaligned atomic.
  auto bytes = array.at(0).as<std::uint8_t>();
  EXPECT_MPIDSM_ERROR(p.atomic_fetch_add((bytes + 4).as<std::uint64_t>(), std::uint64_t(1)),
                      Errc::invalid_argument, "byte 4 of the allocation is not aligned");
  // Wait on a non-symmetric address.
  std::uint64_t on_stack = 0;
  EXPECT_MPIDSM_ERROR(p.wait_until(&on_stack, Compare::eq, std::uint64_t(0)), Errc::unregistered,
                      "is in no live allocation of this rank's symmetric heap");
  // Mismatched collective allocation: reported on every rank, nobody hangs.
  if (n > 1) {
    EXPECT_MPIDSM_ERROR(p.allocate<char>(100 + me), Errc::collective_mismatch,
                        "ranks asked for different sizes (smallest 100 bytes, largest " +
                            std::to_string(100 + n - 1));
  }
  // Larger than the heap: names the variable and the sizes.
  EXPECT_MPIDSM_ERROR(p.allocate<char>(p.heap_capacity() + 1), Errc::no_memory,
                      "do not fit the symmetric heap (MPIDSM_HEAP_SIZE=");
  // Use after free.
  auto doomed = p.allocate<int>(4);
  auto stale = doomed.at((me + 1) % n);
  p.free(doomed);
  int x = 0;
  EXPECT_MPIDSM_ERROR(p.get(&x, stale, 1), Errc::unregistered, "allocation that was freed");
  EXPECT_MPIDSM_ERROR(p.free(doomed), Errc::unregistered, "it was freed already");
  // Still usable.
  value = 40 + me;
  p.put(array.at((me + 1) % n, 3), &value, 1);
  p.barrier();
  EXPECT_EQ(array[3], 40u + (me + n - 1) % n);
  p.barrier();
  p.free(array);
}

// Sizes and strides whose byte counts wrap, arrays of another Pgas, null
// buffers, DSM memory outside any allocation: typed errors on every path.
TEST_F(PgasTest, NoSilentOverflowAliasingOrCrash) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size(), next = (me + 1) % n;
  auto array = p.allocate<std::uint64_t>(16);
  std::uint64_t values[16] = {};
  const std::size_t wraps = (std::size_t{1} << 61) + 1;  // times 8 is 8
  EXPECT_MPIDSM_ERROR(p.put(array.at(next), values, wraps), Errc::out_of_range,
                      "overflow the address space");
  EXPECT_MPIDSM_ERROR(p.get(values, array.at(next), wraps), Errc::out_of_range, "overflow");
  EXPECT_MPIDSM_ERROR(p.put_nbi(array.at(next), values, wraps), Errc::out_of_range, "overflow");
  const std::ptrdiff_t huge_stride = std::ptrdiff_t{1} << 61;
  EXPECT_MPIDSM_ERROR(p.iput(array.at(next), values, huge_stride, 1, 1, 2), Errc::out_of_range,
                      "remote stride");
  EXPECT_MPIDSM_ERROR(p.iget(values, array.at(next), huge_stride, 1, 1, 2), Errc::out_of_range,
                      "local stride");
  // Null local buffers: the same error whether the peer is mapped or not.
  EXPECT_MPIDSM_ERROR(p.put(array.at(next), static_cast<const std::uint64_t*>(nullptr), 1),
                      Errc::invalid_argument, "source buffer is null");
  EXPECT_MPIDSM_ERROR(p.get(static_cast<std::uint64_t*>(nullptr), array.at(next), 1),
                      Errc::invalid_argument, "destination buffer is null");
  // A null signal word is a null pointer, not "rank -1".
  EXPECT_MPIDSM_ERROR(p.put_signal(array.at(next), values, 1, global_ptr<std::uint64_t>(),
                                   std::uint64_t{1}, SignalOp::set),
                      Errc::invalid_argument, "global pointer is null");
  {
    // Another Pgas's arrays neither free nor address this one's heap.
    Pgas other(*runtime_);
    auto theirs = other.allocate<std::uint64_t>(16);
    EXPECT_MPIDSM_ERROR(p.free(theirs), Errc::unregistered, "allocated by another Pgas");
    EXPECT_MPIDSM_ERROR(p.put(theirs.at(next), values, 1), Errc::unregistered, "another Pgas");
    other.free(theirs);
  }
  auto fresh = p.allocate<std::uint64_t>(16);  // must not alias a live array
  EXPECT_NE(static_cast<void*>(fresh.local()), static_cast<void*>(array.local()));
  p.free(fresh);
  p.barrier();
  p.free(array);
}

// A heap the node cannot hold is refused before anything is allocated, with
// the variable to change (filling it would end in the OOM killer).
TEST(PgasHeap, MoreHeapThanTheNodeHasIsRefusedNamingTheVariable) {
  const auto memory = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                      static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  setenv("MPIDSM_HEAP_SIZE", std::to_string(memory / 4096 * 4096 + 4096).c_str(), 1);
  {
    Runtime runtime(MPI_COMM_WORLD);
    EXPECT_MPIDSM_ERROR(Pgas pgas(runtime), Errc::config, "lower MPIDSM_HEAP_SIZE");
  }
  unsetenv("MPIDSM_HEAP_SIZE");
  Runtime runtime(MPI_COMM_WORLD);
  Pgas pgas(runtime);  // usable again
  EXPECT_GT(pgas.heap_capacity(), 0u);
}

// A child after fork() is not a rank: its PGAS and transport calls are
// refused with an error (before, over tcp, its parent then hung), and the
// parent goes on.
TEST_F(PgasTest, AChildProcessAfterForkIsRefused) {
  Pgas& pgas = *pgas_;
  const int me = runtime_->rank(), n = runtime_->size(), next = (me + 1) % n;
  auto word = pgas.allocate<long>(1);
  const pid_t child = fork();
  if (child == 0) {
    alarm(20);  // a hang ends in SIGALRM
    int refused = 0;
    const long value = 7;
    try {
      pgas.put(word.at(next), &value, 1);
    } catch (const Error& e) {
      refused += e.code() == Errc::invalid_state && e.message().find("Pgas::put") == 0 &&
                 e.message().find("child process after fork()") != std::string::npos;
    }
    try {
      runtime_->transport().barrier();
    } catch (const Error& e) {
      refused += e.code() == Errc::invalid_state &&
                 e.message().find("child process after fork()") != std::string::npos;
    }
    _exit(refused == 2 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  const long value = me + 1;
  pgas.put(word.at(next), &value, 1);
  pgas.barrier();
  EXPECT_EQ(*word.local(), (me + n - 1) % n + 1);
  pgas.barrier();
  pgas.free(word);
}

}  // namespace
}  // namespace mpidsm
