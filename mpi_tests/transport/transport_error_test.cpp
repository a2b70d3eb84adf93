// Bad input to the transport is a clear error naming what was wrong, and the
// runtime keeps working afterwards.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace {

class TransportErrors : public testing::WorldRuntimeTest<> {
 protected:
  void SetUp() override { region_ = runtime_->transport().allocate(kRegion); }
  void TearDown() override {
    Transport& t = runtime_->transport();
    // The runtime is still usable after every error: a put and get round trip.
    const int peer = (t.rank() + 1) % t.size();
    std::uint64_t out = 0xfeedu + t.rank(), back = 0;
    t.put(peer, region_, 0, &out, sizeof out);
    t.get(peer, region_, 0, &back, sizeof back);
    EXPECT_EQ(back, out);
    t.deregister(region_);
  }
  static constexpr std::size_t kRegion = 4096;
  MemoryRegion region_;
};

TEST_F(TransportErrors, RankOutsideTheCommunicator) {
  Transport& t = runtime_->transport();
  char byte = 0;
  EXPECT_MPIDSM_ERROR(t.put(t.size(), region_, 0, &byte, 1), Errc::invalid_rank,
                      "rank " + std::to_string(t.size()) + " is outside the communicator of size");
  EXPECT_MPIDSM_ERROR(t.get(-1, region_, 0, &byte, 1), Errc::invalid_rank, "rank -1");
  EXPECT_MPIDSM_ERROR(t.flush(1 << 20), Errc::invalid_rank, "rank 1048576");
  EXPECT_MPIDSM_ERROR(region_.mapped(t.size() + 3), Errc::invalid_rank, "rank");
}

TEST_F(TransportErrors, OffsetsAndSizesOutsideTheRegion) {
  Transport& t = runtime_->transport();
  std::vector<char> buffer(8192);
  EXPECT_MPIDSM_ERROR(t.put(0, region_, 4090, buffer.data(), 16), Errc::out_of_range,
                      "offset 4090 + size 16 exceeds the region of 4096 bytes");
  EXPECT_MPIDSM_ERROR(t.get(0, region_, 5000, buffer.data(), 1), Errc::out_of_range, "offset 5000");
  EXPECT_MPIDSM_ERROR(t.put_nbi(0, region_, 0, buffer.data(), 8192), Errc::out_of_range,
                      "size 8192");
  // offset + size wraps around: must not pass the range check.
  EXPECT_MPIDSM_ERROR(
      t.get(0, region_, std::numeric_limits<std::size_t>::max() - 2, buffer.data(), 8),
      Errc::out_of_range, "exceeds the region");
  EXPECT_MPIDSM_ERROR(t.put(0, region_, 0, buffer.data(), 0), Errc::invalid_argument, "size is 0");
}

TEST_F(TransportErrors, MisalignedAndInvalidAtomics) {
  Transport& t = runtime_->transport();
  EXPECT_MPIDSM_ERROR(t.atomic_fetch<std::uint64_t>(AtomicOp::add, 0, region_, 4, 1),
                      Errc::invalid_argument, "offset 4 is not aligned to the 8-byte word");
  EXPECT_MPIDSM_ERROR(t.atomic_post<std::uint32_t>(AtomicOp::add, 0, region_, 2, 1),
                      Errc::invalid_argument, "not aligned to the 4-byte word");
  EXPECT_MPIDSM_ERROR(t.atomic_post<std::uint64_t>(AtomicOp::swap, 0, region_, 0, 1),
                      Errc::invalid_argument, "swap only exists as a fetching atomic");
  EXPECT_MPIDSM_ERROR(t.atomic_fetch<std::uint64_t>(AtomicOp::add, 0, region_, 4096, 1),
                      Errc::out_of_range, "offset 4096");
}

TEST_F(TransportErrors, UnregisteredAddressesAndStaleHandles) {
  Transport& t = runtime_->transport();
  int on_stack = 0;
  EXPECT_MPIDSM_ERROR(t.locate(&on_stack), Errc::unregistered,
                      "is not inside any registered memory region");
  auto [found, offset] = t.locate(static_cast<char*>(region_.local_base()) + 100);
  EXPECT_EQ(offset, 100u);
  EXPECT_TRUE(found.valid());

  MemoryRegion empty;
  char byte = 0;
  EXPECT_MPIDSM_ERROR(t.put(0, empty, 0, &byte, 1), Errc::unregistered, "never registered");
  MemoryRegion doomed = t.allocate(64);
  MemoryRegion copy = doomed;
  t.deregister(doomed);
  EXPECT_FALSE(copy.valid());
  EXPECT_MPIDSM_ERROR(t.get(0, copy, 0, &byte, 1), Errc::unregistered, "used after deregistration");
  EXPECT_MPIDSM_ERROR(copy.local_base(), Errc::unregistered, "used after deregistration");
  // Deregistering a stale handle fails on every rank together, never hangs.
  EXPECT_MPIDSM_ERROR(t.deregister(copy), Errc::unregistered, "not registered");
}

TEST_F(TransportErrors, ZeroSizeAndNullRegistrations) {
  Transport& t = runtime_->transport();
  EXPECT_MPIDSM_ERROR(t.allocate(0), Errc::invalid_argument, "size is 0");
  EXPECT_MPIDSM_ERROR(t.register_memory(nullptr, 64), Errc::invalid_argument,
                      "base address is null");
}

TEST_F(TransportErrors, RegistrationFailureOnOneRankFailsAllRanks) {
  Transport& t = runtime_->transport();
  // Only the last rank passes a bad argument; every rank must get an error
  // (the others naming the rank that failed) instead of hanging in the exchange.
  const int bad = t.size() - 1;
  std::vector<char> memory(64);
  try {
    MemoryRegion r = t.register_memory(t.rank() == bad ? nullptr : memory.data(), memory.size());
    ADD_FAILURE() << "registration succeeded although rank " << bad << " passed null";
    t.deregister(r);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
    std::string expected =
        t.rank() == bad ? "base address is null" : "failed on rank " + std::to_string(bad);
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mpidsm
