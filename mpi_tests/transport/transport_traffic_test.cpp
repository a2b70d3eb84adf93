// Transport::traffic counts each operation a rank starts once, with its
// payload bytes, whatever carries it (UCX's shared memory, tcp, the node's
// mailboxes): the figures the examples set beside their MPI twins'.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace {

using testing::WorldRuntimeTest;

class TransportTrafficTest : public WorldRuntimeTest<> {};

void count_nothing(void*, int, std::uint64_t, const std::byte*, std::size_t) {}

TEST_F(TransportTrafficTest, EachOperationCountsOnceWithItsBytes) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  const int next = (me + 1) % n, previous = (me + n - 1) % n;
  MemoryRegion region = t.allocate(4096);
  const std::uint32_t handler = t.add_remote_handler(count_nothing, nullptr);
  std::vector<std::uint8_t> bytes(1000, 7), received(1000);
  // Read before the barrier: a rank that leaves it first may call this one
  // while this one still waits in it, and the barrier progresses UCX, so the
  // acknowledgement can leave here before this rank has left the barrier.
  const TransportTraffic before = t.traffic();
  t.barrier();

  t.put(next, region, 0, bytes.data(), 1000);
  t.get(next, region, 0, bytes.data(), 300);
  t.atomic_fetch<std::uint64_t>(AtomicOp::add, next, region, 1024, 1);
  t.atomic_post<std::uint32_t>(AtomicOp::add, next, region, 1040, 1);
  Request arriving = t.irecv(previous, 5, received.data(), received.size());
  t.send(next, 5, bytes.data(), 200);
  arriving.wait();
  t.call(next, handler, bytes.data(), 64);
  t.flush_all();
  // Every rank's call has been acknowledged (a 4-byte message each callee
  // sent) once every flush has returned.
  t.barrier();
  const TransportTraffic after = t.traffic();

  // Put, get, two atomics, a send, a call, and the acknowledgement of the
  // call `previous` made here.
  EXPECT_EQ(after.messages - before.messages, 7u) << "rank " << me;
  EXPECT_EQ(after.bytes - before.bytes, 1000u + 300 + 8 + 4 + 200 + 64 + 4) << "rank " << me;

  t.remove_remote_handler(handler);
  t.deregister(region);
}

TEST_F(TransportTrafficTest, LoadsAndStoresThroughMappedMemoryAreNoMessages) {
  Transport& t = runtime_->transport();
  const int next = (t.rank() + 1) % t.size();
  MemoryRegion region = t.allocate(4096);
  t.barrier();
  const TransportTraffic before = t.traffic();
  if (auto* word = static_cast<std::uint64_t*>(region.mapped(next))) *word = 1;
  const TransportTraffic after = t.traffic();
  EXPECT_EQ(after.messages, before.messages);
  EXPECT_EQ(after.bytes, before.bytes);
  t.barrier();
  t.deregister(region);
}

}  // namespace
}  // namespace mpidsm
