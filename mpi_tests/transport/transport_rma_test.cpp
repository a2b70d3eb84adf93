// Put and get of every size class to every peer, content verified, on memory
// UCX allocated (shared-memory mappable) and on memory the application owns.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace {

using testing::fill_pattern;
using testing::first_mismatch;

constexpr std::size_t kMaxSize = 4u << 20;

class TransportRma : public testing::WorldRuntimeTest<::testing::TestWithParam<bool>> {
 protected:
  // Each rank owns one kMaxSize slot per writer in every peer's region.
  void SetUp() override {
    Transport& t = runtime_->transport();
    std::size_t bytes = kMaxSize * t.size();
    if (GetParam()) {
      region_ = t.allocate(bytes);
    } else {
      owned_.assign(bytes, 0);
      region_ = t.register_memory(owned_.data(), bytes);
    }
  }
  void TearDown() override { runtime_->transport().deregister(region_); }

  MemoryRegion region_;
  std::vector<std::uint8_t> owned_;
};

TEST_P(TransportRma, PutEverySizeToEveryPeer) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  auto* local = static_cast<std::uint8_t*>(region_.local_base());
  // One source per peer: a put_nbi source may only be reused after the flush.
  std::vector<std::vector<std::uint8_t>> sources(n, std::vector<std::uint8_t>(kMaxSize));
  for (std::size_t size : testing::size_classes(kMaxSize)) {
    for (int peer = 0; peer < n; ++peer) {
      fill_pattern(sources[peer].data(), me, peer, size);
      t.put_nbi(peer, region_, kMaxSize * me, sources[peer].data(), size);
    }
    t.flush_all();
    t.barrier();
    for (int writer = 0; writer < n; ++writer)
      ASSERT_EQ(first_mismatch(local + kMaxSize * writer, writer, me, size), size)
          << "size " << size << " from rank " << writer;
    t.barrier();  // nobody overwrites a slot before its owner checked it
  }
}

TEST_P(TransportRma, GetEverySizeFromEveryPeer) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  auto* local = static_cast<std::uint8_t*>(region_.local_base());
  std::vector<std::uint8_t> dest(kMaxSize);
  for (std::size_t size : testing::size_classes(kMaxSize)) {
    // Each rank publishes, in slot p, the bytes meant for reader p.
    for (int reader = 0; reader < n; ++reader)
      fill_pattern(local + kMaxSize * reader, me, reader, size);
    t.barrier();
    for (int peer = 0; peer < n; ++peer) {
      std::fill(dest.begin(), dest.begin() + size, 0);
      t.get(peer, region_, kMaxSize * me, dest.data(), size);
      ASSERT_EQ(first_mismatch(dest.data(), peer, me, size), size)
          << "size " << size << " from rank " << peer;
    }
    t.barrier();
  }
}

TEST_P(TransportRma, NonBlockingRequestsComplete) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  constexpr std::size_t size = 64 << 10;
  std::vector<std::vector<std::uint8_t>> sources(n, std::vector<std::uint8_t>(size));
  std::vector<Request> puts;
  for (int peer = 0; peer < n; ++peer) {
    fill_pattern(sources[peer].data(), me, peer, size);
    puts.push_back(t.put_nb(peer, region_, kMaxSize * me, sources[peer].data(), size));
  }
  for (auto& request : puts) request.wait();
  t.flush_all();
  t.barrier();
  std::vector<std::vector<std::uint8_t>> got(n, std::vector<std::uint8_t>(size));
  std::vector<Request> gets;
  for (int peer = 0; peer < n; ++peer)
    gets.push_back(t.get_nb(peer, region_, kMaxSize * peer, got[peer].data(), size));
  for (auto& request : gets) {
    while (!request.test()) {
    }
  }
  // Rank `peer` holds, in slot `peer`, what it put to itself.
  for (int peer = 0; peer < n; ++peer)
    EXPECT_EQ(first_mismatch(got[peer].data(), peer, peer, size), size) << "rank " << peer;
  t.barrier();
}

TEST_P(TransportRma, MappedPointerIsTheSameMemory) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  ASSERT_EQ(region_.mapped(me), region_.local_base());
  for (int peer = 0; peer < n; ++peer) {
    if (peer == me) continue;
    // UCX maps only memory it allocated in shared memory, never over tcp,
    // and never across nodes.
    bool expect_mapped = GetParam() && !testing::tcp_only() && testing::same_node(peer);
    ASSERT_EQ(region_.mapped(peer) != nullptr, expect_mapped) << "rank " << peer;
  }
  constexpr std::size_t size = 4096;
  for (int peer = 0; peer < n; ++peer)
    if (auto* remote = static_cast<std::uint8_t*>(region_.mapped(peer)))
      fill_pattern(remote + kMaxSize * me, me, peer, size);
  t.barrier();
  auto* local = static_cast<std::uint8_t*>(region_.local_base());
  for (int writer = 0; writer < n; ++writer) {
    if (region_.mapped(writer)) {
      EXPECT_EQ(first_mismatch(local + kMaxSize * writer, writer, me, size), size)
          << "direct store from rank " << writer;
    }
  }
  t.barrier();
}

// Over tcp UCX allocates from the heap, so a region may reuse the bytes of
// one just freed: a zeroed allocation must still read 0 everywhere, on every
// rank, before anyone writes it (the DSM's lock table and page records rely
// on that).
TEST(TransportAllocate, ZeroedMemoryReadsZeroEvenWhereRecycled) {
  Runtime runtime(MPI_COMM_WORLD);
  Transport& t = runtime.transport();
  constexpr std::size_t kBytes = 64 << 10;  // below malloc's mmap threshold
  for (int round = 0; round < 4; ++round) {
    MemoryRegion dirty = t.allocate(kBytes);
    std::memset(dirty.local_base(), 0xBE, kBytes);
    t.deregister(dirty);
    MemoryRegion fresh = t.allocate(kBytes, true);
    const auto* bytes = static_cast<const std::uint8_t*>(fresh.local_base());
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < kBytes; ++i) nonzero += bytes[i] != 0;
    EXPECT_EQ(nonzero, 0u) << "round " << round;
    t.deregister(fresh);
  }
}

// What a rank holds of UCX, as the start-up benchmark reports it. Ranks of
// this node and the ranks 2^k away (the liveness ring) connect at start-up,
// on both workers, and unpack their keys to a region at once; other ranks
// (or every rank, with MPIDSM_EAGER_CONNECT=1) only on first use: a put to
// each peer makes the RMA worker's endpoint to it and unpacks its key, and
// nothing more.
TEST(TransportResources, CountEndpointsRegionsAndKeysMadeOnUse) {
  Runtime runtime(MPI_COMM_WORLD);
  Transport& t = runtime.transport();
  const int me = t.rank(), ranks = t.size();
  const auto n = static_cast<std::size_t>(ranks);
  const bool eager = runtime.config().eager_connect;
  auto on_ring = [&](int peer) {
    for (int distance = 1; distance < ranks; distance *= 2)
      if (peer == (me + distance) % ranks || peer == (me - distance % ranks + ranks) % ranks)
        return true;
    return false;
  };
  std::size_t near = 0;  // other ranks connected at start-up, on each worker
  for (int peer = 0; peer < ranks; ++peer)
    near += peer != me && (eager || testing::same_node(peer) || on_ring(peer));
  const TransportResources before = t.resources();
  EXPECT_EQ(before.workers, 2u);
  EXPECT_EQ(before.endpoints, 2 * near);
  constexpr std::size_t kBytes = 1 << 20;
  MemoryRegion region = t.allocate(kBytes);
  const TransportResources with_region = t.resources();
  EXPECT_EQ(with_region.regions, before.regions + 1);
  EXPECT_EQ(with_region.registered_bytes, before.registered_bytes + kBytes);
  EXPECT_EQ(with_region.remote_keys, before.remote_keys + near + 1);  // self included
  EXPECT_EQ(with_region.endpoints, before.endpoints);

  const std::uint64_t word = 1;
  for (int peer = 0; peer < ranks; ++peer) t.put(peer, region, 8 * me, &word, 8);
  const TransportResources used = t.resources();
  EXPECT_EQ(used.remote_keys, before.remote_keys + n);
  EXPECT_EQ(used.endpoints, (n - 1) + near);  // the messaging worker's stay
  t.barrier();
  for (std::size_t r = 0; r < n; ++r)
    EXPECT_EQ(static_cast<const std::uint64_t*>(region.local_base())[r], 1u) << "from rank " << r;

  t.deregister(region);
  const TransportResources after = t.resources();
  EXPECT_EQ(after.regions, before.regions);
  EXPECT_EQ(after.registered_bytes, before.registered_bytes);
  EXPECT_EQ(after.remote_keys, before.remote_keys);
}

// Ranks on different nodes (real, or simulated by scripts/hosts) must never
// be joined by shared memory: a shared-memory transport across nodes would
// mean the nodes were not separate, and every multi-host result a lie.
TEST(TransportPath, NoSharedMemoryTransportReachesAnotherNode) {
  Runtime runtime(MPI_COMM_WORLD);
  Transport& t = runtime.transport();
  for (int peer = 0; peer < t.size(); ++peer) {
    const std::string path = t.path_to(peer);
    EXPECT_NE(path, "unknown") << "rank " << peer;
    if (testing::same_node(peer)) continue;
    for (const char* memory : {"posix", "sysv", "cma", "xpmem", "knem", "self"})
      EXPECT_EQ(path.find(memory), std::string::npos)
          << "rank " << peer << " on another node is reached through " << path;
  }
}

INSTANTIATE_TEST_SUITE_P(Memory, TransportRma, ::testing::Values(true, false),
                         [](const auto& info) {
                           return info.param ? "UcxAllocated" : "ApplicationOwned";
                         });

}  // namespace
}  // namespace mpidsm
