// Typed messaging over the runtime: element counts, wildcards, rendezvous
// sizes and the element-size check.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/messaging.hpp"

namespace mpidsm {
namespace {

struct Particle {
  double position[3];
  int id;
};

TEST(Messaging, TypedRingWithWildcardsAndLargeMessages) {
  Runtime rt(MPI_COMM_WORLD);
  Messaging m(rt);
  const int me = rt.rank(), n = rt.size();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  for (std::size_t count : {std::size_t(1), std::size_t(1000), std::size_t(1) << 19}) {
    std::vector<double> out(count), in(count + 5);
    std::iota(out.begin(), out.end(), me * 1e6);
    Request r = m.irecv<double>(any_source, any_tag, in);
    m.send<double>(next, 11, out);
    r.wait();
    Received got = m.count<double>(r.message());
    EXPECT_EQ(got.source, prev);
    EXPECT_EQ(got.tag, 11);
    ASSERT_EQ(got.count, count);
    EXPECT_EQ(in[count - 1], prev * 1e6 + double(count - 1));
  }
  Particle p{{1.0, 2.0, 3.0}, me};
  Request s = m.isend<Particle>(next, 12, std::span<const Particle>(&p, 1));
  Particle q{};
  Received got = m.recv<Particle>(prev, 12, std::span<Particle>(&q, 1));
  s.wait();
  EXPECT_EQ(got.count, 1u);
  EXPECT_EQ(q.id, prev);
  EXPECT_EQ(q.position[2], 3.0);
}

TEST(Messaging, PartialElementsAreReported) {
  Runtime rt(MPI_COMM_WORLD);
  Messaging m(rt);
  const int me = rt.rank();
  const char bytes[10] = {};
  m.send<char>(me, 3, bytes);
  std::uint64_t words[4];
  EXPECT_MPIDSM_ERROR(m.recv<std::uint64_t>(me, 3, words), Errc::invalid_argument,
                      "message of 10 bytes from rank " + std::to_string(me) +
                          " is not a whole number of 8-byte elements");
}

}  // namespace
}  // namespace mpidsm
