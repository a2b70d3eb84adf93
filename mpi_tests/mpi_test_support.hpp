// Helpers shared by the mpirun tests.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mpidsm/error.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm::testing {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// A byte that depends on who wrote it, for whom, at which size and index, so
// any misplaced, stale or truncated byte is detected.
inline std::uint8_t pattern(int writer, int target, std::size_t size, std::size_t index) {
  std::uint64_t x = (std::uint64_t(writer) * 1315423911u) ^ (std::uint64_t(target) * 2654435761u) ^
                    (size * 97) ^ (index * 31 + (index >> 8));
  return static_cast<std::uint8_t>(x ^ (x >> 13) ^ (x >> 29));
}

inline void fill_pattern(std::uint8_t* data, int writer, int target, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) data[i] = pattern(writer, target, size, i);
}

// Index of the first byte that differs from the pattern, or size when all match.
inline std::size_t first_mismatch(const std::uint8_t* data, int writer, int target,
                                  std::size_t size) {
  for (std::size_t i = 0; i < size; ++i)
    if (data[i] != pattern(writer, target, size, i)) return i;
  return size;
}

// 1, 2, 4, ... max, plus a few odd sizes that cross alignment and protocol edges.
inline std::vector<std::size_t> size_classes(std::size_t max) {
  std::vector<std::size_t> sizes;
  for (std::size_t s = 1; s <= max; s *= 2) sizes.push_back(s);
  for (std::size_t s : {3u, 7u, 4095u, 8193u, 65537u})
    if (s <= max) sizes.push_back(s);
  return sizes;
}

// True when the test runs with UCX restricted to tcp (the emulated-RMA path).
inline bool tcp_only() {
  const char* tls = std::getenv("UCX_TLS");
  return tls && std::string(tls).find("tcp") != std::string::npos &&
         std::string(tls).find("shm") == std::string::npos &&
         std::string(tls).find("posix") == std::string::npos &&
         std::string(tls).find("sysv") == std::string::npos;
}

// Whether `rank` (of MPI_COMM_WORLD) runs on this rank's node, as MPI sees
// nodes (under scripts/hosts, each simulated host is a node).
inline bool same_node(int rank) {
  static const std::vector<int> node_of = [] {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int leader = 0, world_rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Allreduce(&world_rank, &leader, 1, MPI_INT, MPI_MIN, node);  // the node's lowest rank
    MPI_Comm_free(&node);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> nodes(static_cast<std::size_t>(size));
    MPI_Allgather(&leader, 1, MPI_INT, nodes.data(), 1, MPI_INT, MPI_COMM_WORLD);
    return nodes;
  }();
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  return node_of[static_cast<std::size_t>(rank)] == node_of[static_cast<std::size_t>(me)];
}

// Whether this rank reaches `rank`'s memory by loads and stores (as mpidsm
// maps peers by default), rather than through UCX.
inline bool mapped_here(const Runtime& runtime, int rank) {
  return runtime.config().direct_access && !tcp_only() && same_node(rank);
}

// A fixture whose tests share one Runtime on MPI_COMM_WORLD, created once per
// test suite (runtime creation is collective and not what these tests test).
template <class Base = ::testing::Test>
class WorldRuntimeTest : public Base {
 protected:
  static void SetUpTestSuite() { runtime_ = std::make_unique<Runtime>(MPI_COMM_WORLD); }
  static void TearDownTestSuite() { runtime_.reset(); }
  static inline std::unique_ptr<Runtime> runtime_;
};

}  // namespace mpidsm::testing

// Asserts that `statement` throws mpidsm::Error with `code` and a message
// containing `fragment`.
#define EXPECT_MPIDSM_ERROR(statement, expected_code, fragment)                       \
  do {                                                                                \
    try {                                                                             \
      statement;                                                                      \
      ADD_FAILURE() << "expected mpidsm::Error from " #statement;                     \
    } catch (const ::mpidsm::Error& e) {                                              \
      EXPECT_EQ(e.code(), expected_code) << e.what();                                 \
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what(); \
    }                                                                                 \
  } while (0)
