// Request::wait_moving_mpi completes like wait() while the rank's MPI traffic
// with the peer it waits for is still under way: here an MPI rendezvous (a
// 60 KiB message with a 4 KiB eager limit, set by CMake; across hosts it
// goes over tcp) whose receiver then waits in UCX for what its sender sends
// once MPI_Send has returned.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace {

using testing::WorldRuntimeTest;

class TransportMpiProgressTest : public WorldRuntimeTest<> {};

TEST_F(TransportMpiProgressTest, AWaitInUcxLetsThisRanksMpiTrafficFinish) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  if (n < 2) GTEST_SKIP() << "needs two ranks";
  MPI_Comm comm = runtime_->comm();
  std::vector<std::uint8_t> record(60 * 1024);
  for (int round = 1; round <= 5; ++round) {
    const std::uint64_t expected = static_cast<std::uint64_t>(round) * 1000 + 7;
    if (me == 0) {
      for (std::size_t i = 0; i < record.size(); ++i)
        record[i] = static_cast<std::uint8_t>(i + round);
      MPI_Send(record.data(), static_cast<int>(record.size()), MPI_BYTE, 1, round, comm);
      t.send(1, round, &expected, sizeof expected);
    } else if (me == 1) {
      std::uint64_t answer = 0;
      Request arriving = t.irecv(0, round, &answer, sizeof answer);
      MPI_Recv(record.data(), static_cast<int>(record.size()), MPI_BYTE, 0, round, comm,
               MPI_STATUS_IGNORE);
      std::size_t right = 0;
      for (std::size_t i = 0; i < record.size(); ++i)
        right += record[i] == static_cast<std::uint8_t>(i + round);
      EXPECT_EQ(right, record.size()) << "round " << round;
      arriving.wait_moving_mpi(comm);
      EXPECT_EQ(answer, expected) << "round " << round;
    }
  }
  t.barrier();
}

}  // namespace
}  // namespace mpidsm
