// Remote atomics: each operation's semantics on 32- and 64-bit words, and
// exactness under contention from every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "mpi_test_support.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace {

class TransportAtomic : public testing::WorldRuntimeTest<> {};

TEST_F(TransportAtomic, EveryRankFetchAddsOneWordExactly) {
  Transport& t = runtime_->transport();
  MemoryRegion region = t.allocate(64);
  *static_cast<std::uint64_t*>(region.local_base()) = 0;
  t.barrier();
  constexpr std::uint64_t kAdds = 100000;
  std::uint64_t previous = 0;
  bool increasing = true;
  for (std::uint64_t i = 0; i < kAdds; ++i) {
    std::uint64_t seen = t.atomic_fetch<std::uint64_t>(AtomicOp::add, 0, region, 0, 1);
    // Our own adds are ordered, so what we fetch strictly increases.
    increasing = increasing && (i == 0 || seen > previous);
    previous = seen;
  }
  EXPECT_TRUE(increasing);
  t.flush_all();
  t.barrier();
  std::uint64_t total = 0;
  t.get(0, region, 0, &total, sizeof total);
  EXPECT_EQ(total, kAdds * static_cast<std::uint64_t>(t.size()));
  t.deregister(region);
}

TEST_F(TransportAtomic, NonFetchingAddsUnderContention) {
  Transport& t = runtime_->transport();
  MemoryRegion region = t.allocate(64);
  *static_cast<std::uint32_t*>(region.local_base()) = 0;
  t.barrier();
  const int target = t.size() - 1;
  for (int i = 0; i < 10000; ++i) t.atomic_post<std::uint32_t>(AtomicOp::add, target, region, 0, 3);
  t.flush_all();
  t.barrier();
  if (t.rank() == target) {
    EXPECT_EQ(*static_cast<std::uint32_t*>(region.local_base()), 30000u * t.size());
  }
  t.deregister(region);
}

template <class T>
class TransportAtomicWidth : public TransportAtomic {};
using Widths = ::testing::Types<std::uint32_t, std::uint64_t, std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(TransportAtomicWidth, Widths);

TYPED_TEST(TransportAtomicWidth, EveryOperationOnEveryPeer) {
  using T = TypeParam;
  Transport& t = this->runtime_->transport();
  const int me = t.rank(), n = t.size();
  // One word per writer in every rank's region, so ranks do not interfere.
  MemoryRegion region = t.allocate(sizeof(T) * n);
  auto* words = static_cast<T*>(region.local_base());
  for (int peer = 0; peer < n; ++peer) {
    const std::size_t offset = sizeof(T) * me;
    const T base = static_cast<T>(0x5a5a0000 + 16 * peer + me);
    words[me] = 0;
    t.barrier();
    EXPECT_EQ(t.atomic_fetch<T>(AtomicOp::swap, peer, region, offset, base), T(0));
    EXPECT_EQ(t.atomic_fetch<T>(AtomicOp::add, peer, region, offset, T(5)), base);
    EXPECT_EQ(t.atomic_fetch<T>(AtomicOp::compare_swap, peer, region, offset, T(7), T(1)),
              T(base + 5));  // comparand differs: no swap
    EXPECT_EQ(t.atomic_fetch<T>(AtomicOp::compare_swap, peer, region, offset, T(0x70), T(base + 5)),
              T(base + 5));  // comparand matches: swapped in 0x70
    EXPECT_EQ(t.atomic_fetch<T>(AtomicOp::bit_or, peer, region, offset, T(0x0f)), T(0x70));
    EXPECT_EQ(t.atomic_fetch<T>(AtomicOp::bit_and, peer, region, offset, T(0x3c)), T(0x7f));
    EXPECT_EQ(t.atomic_fetch<T>(AtomicOp::bit_xor, peer, region, offset, T(0xff)), T(0x3c));
    t.atomic_post<T>(AtomicOp::add, peer, region, offset, T(2));
    t.atomic_post<T>(AtomicOp::bit_xor, peer, region, offset, T(1));
    t.atomic_post<T>(AtomicOp::bit_or, peer, region, offset, T(0x100));
    t.atomic_post<T>(AtomicOp::bit_and, peer, region, offset, T(0x1ff));
    t.flush(peer);
    T now = 0;
    t.get(peer, region, offset, &now, sizeof now);
    EXPECT_EQ(now, T(((0xc3 + 2) ^ 1) | 0x100)) << "on rank " << peer;
    t.barrier();
  }
  // Negative operands keep their meaning for signed words.
  if constexpr (std::is_signed_v<T>) {
    std::fill(words, words + n, T(0));
    t.barrier();
    t.atomic_fetch<T>(AtomicOp::add, (me + 1) % n, region, sizeof(T) * me, T(-7));
    t.flush_all();
    t.barrier();
    EXPECT_EQ(words[(me + n - 1) % n], T(-7));
  }
  t.deregister(region);
}

}  // namespace
}  // namespace mpidsm
