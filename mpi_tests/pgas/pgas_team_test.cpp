// Teams over MPI communicators and their collectives (include/mpidsm/team.hpp):
// the world and node teams, strided splits and rank translation, and every
// collective checked value by value on the world and on a split team, at
// 1, 2 and 4 ranks, over UCX and tcp, and across simulated hosts. On one
// node the collectives run through memory the team maps; `.mpi` runs them
// through MPI there too (direct access off), and contributions larger than
// that memory's slots take MPI's path on every layout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/team.hpp"
#include "pgas_fixture.hpp"

namespace mpidsm {
namespace {

using TeamTest = testing::WorldPgasTest;

TEST_F(TeamTest, WorldSharedAndStridedTeamsNumberTheirRanks) {
  Pgas& p = *pgas_;
  const int me = p.rank(), n = p.size();
  Team world = Team::world(p);
  ASSERT_TRUE(world.valid());
  EXPECT_EQ(world.rank(), me);
  EXPECT_EQ(world.size(), n);
  for (int r = 0; r < n; ++r) EXPECT_EQ(world.pgas_rank(r), r);

  Team node = Team::shared(p);
  int node_ranks = 0;
  MPI_Comm node_comm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node_comm);
  MPI_Comm_size(node_comm, &node_ranks);
  MPI_Comm_free(&node_comm);
  EXPECT_EQ(node.size(), node_ranks);
  EXPECT_EQ(node.translate(node.rank(), world), me);

  // Even ranks: 0, 2, 4, ...
  const int evens = (n + 1) / 2;
  Team even = world.split_strided(0, 2, evens);
  EXPECT_EQ(even.valid(), me % 2 == 0);
  if (even.valid()) {
    EXPECT_EQ(even.size(), evens);
    EXPECT_EQ(even.rank(), me / 2);
    for (int r = 0; r < evens; ++r) {
      EXPECT_EQ(even.pgas_rank(r), 2 * r);
      EXPECT_EQ(even.translate(r, world), 2 * r);
    }
  }
  if (n > 1) {
    EXPECT_EQ(world.translate(1, even), -1);  // odd: in no even team
  }
  EXPECT_MPIDSM_ERROR(world.split_strided(0, 1, n + 1), Errc::invalid_argument,
                      "leave the team of " + std::to_string(n));
  EXPECT_MPIDSM_ERROR(world.split_strided(0, 0, 2), Errc::invalid_argument, "stride 0, size 2");
  EXPECT_MPIDSM_ERROR(world.split_strided(0, -1, 2), Errc::invalid_argument, "stride -1");
  // Counting down from the last rank: the team numbers its members in reverse.
  Team reversed = world.split_strided(n - 1, -1, n);
  EXPECT_EQ(reversed.rank(), n - 1 - world.rank());
  EXPECT_MPIDSM_ERROR(world.pgas_rank(n), Errc::invalid_rank, "outside the team");
  Team nobody;
  EXPECT_MPIDSM_ERROR(nobody.sync(), Errc::invalid_state, "not a member of the team");
}

// Every collective, value by value, on a team: its members' team ranks
// make the data.
void check_collectives(const Team& team) {
  const int me = team.rank(), n = team.size();
  team.sync();
  // broadcast from the last member, in place and from another buffer
  std::vector<double> values(100);
  for (int root : {0, n - 1}) {
    std::vector<double> source(100);
    std::iota(source.begin(), source.end(), 1000.0 * root);
    std::fill(values.begin(), values.end(), -1.0);
    team.broadcast(values.data(), source.data(), values.size(), root);
    for (std::size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(values[i], 1000.0 * root + static_cast<double>(i)) << "root " << root;
  }
  // fcollect: two ints per member
  const int mine[2] = {me * 10, me * 10 + 1};
  std::vector<int> all(2 * static_cast<std::size_t>(n));
  team.fcollect(all.data(), mine, 2);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(all[2 * static_cast<std::size_t>(r)], r * 10);
    EXPECT_EQ(all[2 * static_cast<std::size_t>(r) + 1], r * 10 + 1);
  }
  // collect: member r gives r+1 elements
  std::vector<std::int64_t> given(static_cast<std::size_t>(me) + 1, me);
  std::vector<std::int64_t> gathered(static_cast<std::size_t>(n * (n + 1) / 2));
  EXPECT_EQ(team.collect(gathered.data(), given.data(), given.size()), gathered.size());
  for (int r = 0, at = 0; r < n; ++r)
    for (int k = 0; k <= r; ++k) EXPECT_EQ(gathered[static_cast<std::size_t>(at++)], r);
  // alltoall: block j of member i holds i*100+j
  std::vector<std::uint32_t> out(3 * static_cast<std::size_t>(n)), in(out.size());
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < 3; ++k)
      out[3 * static_cast<std::size_t>(j) + static_cast<std::size_t>(k)] =
          static_cast<std::uint32_t>(me * 100 + j);
  team.alltoall(in.data(), out.data(), 3);
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(in[3 * static_cast<std::size_t>(i) + 2], static_cast<std::uint32_t>(i * 100 + me));
  // alltoalls: elements at stride 2 in the source, 3 in the destination
  std::vector<std::int16_t> strided_out(2 * 2 * static_cast<std::size_t>(n), -1),
      strided_in(3 * 2 * static_cast<std::size_t>(n), -1);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < 2; ++k)
      strided_out[static_cast<std::size_t>(2 * (2 * j + k))] =
          static_cast<std::int16_t>(me * 100 + j * 10 + k);
  team.alltoalls(strided_in.data(), strided_out.data(), 3, 2, 2);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 2; ++k)
      EXPECT_EQ(strided_in[static_cast<std::size_t>(3 * (2 * i + k))], i * 100 + me * 10 + k);
  // reductions
  const std::int64_t value = me + 1;
  std::int64_t sum = 0, product = 0, biggest = 0;
  team.reduce(ReduceOp::sum, &sum, &value, 1);
  team.reduce(ReduceOp::prod, &product, &value, 1);
  team.reduce(ReduceOp::max, &biggest, &value, 1);
  std::int64_t expected_product = 1;
  for (int r = 1; r <= n; ++r) expected_product *= r;
  EXPECT_EQ(sum, static_cast<std::int64_t>(n) * (n + 1) / 2);
  EXPECT_EQ(product, expected_product);
  EXPECT_EQ(biggest, n);
  std::uint8_t bits = static_cast<std::uint8_t>(1u << (me % 8)), ored = 0, anded = 0;
  team.reduce(ReduceOp::bit_or, &ored, &bits, 1);
  team.reduce(ReduceOp::bit_and, &anded, &bits, 1);
  EXPECT_EQ(ored, static_cast<std::uint8_t>((1u << std::min(n, 8)) - 1));
  EXPECT_EQ(anded, n == 1 ? 1u : 0u);
  std::vector<double> least(4, 10.0 - me);
  team.reduce(ReduceOp::min, least.data(), least.data(), least.size());  // in place
  EXPECT_EQ(least[3], 10.0 - (n - 1));
  const std::complex<double> z(me, 1.0);
  std::complex<double> zsum;
  team.reduce(ReduceOp::sum, &zsum, &z, 1);
  EXPECT_EQ(zsum, std::complex<double>(n * (n - 1) / 2.0, n));
  // errors name what was wrong and leave the team usable
  EXPECT_MPIDSM_ERROR(team.broadcast(values.data(), values.data(), 1, n), Errc::invalid_rank,
                      "root " + std::to_string(n) + " is outside the team");
  EXPECT_MPIDSM_ERROR(team.reduce(ReduceOp::bit_xor, least.data(), least.data(), 1),
                      Errc::invalid_argument, "does not apply to this element type");
  EXPECT_MPIDSM_ERROR(team.reduce(ReduceOp::max, &zsum, &z, 1), Errc::invalid_argument,
                      "does not apply");
  team.sync();
}

// Contributions past the node slots (8 KiB): MPI moves them, and a collect
// whose parts differ in size mixes both paths' decisions.
void check_large_collectives(const Team& team) {
  const int me = team.rank(), n = team.size();
  const std::size_t big = 3000;  // doubles: 24,000 bytes
  std::vector<double> values(big, -1.0), source(big);
  std::iota(source.begin(), source.end(), 0.5);
  team.broadcast(values.data(), source.data(), big, n - 1);
  EXPECT_EQ(values[big - 1], source[big - 1]);
  std::vector<double> all(big * static_cast<std::size_t>(n));
  std::vector<double> mine(big, static_cast<double>(me));
  team.fcollect(all.data(), mine.data(), big);
  for (int r = 0; r < n; ++r) EXPECT_EQ(all[big * static_cast<std::size_t>(r) + big / 2], r);
  const std::vector<double> blocks(all.size(), static_cast<double>(me));
  team.alltoall(all.data(), blocks.data(), big);
  for (int r = 0; r < n; ++r) EXPECT_EQ(all[big * static_cast<std::size_t>(r)], r);
  std::vector<double> sums(big);
  team.reduce(ReduceOp::sum, sums.data(), source.data(), big);
  EXPECT_EQ(sums[10], n * source[10]);
  // Member 0 gives 2000 words (16,000 bytes), the others 1 each.
  std::vector<std::uint64_t> part(me == 0 ? 2000 : 1, static_cast<std::uint64_t>(me) + 7);
  std::vector<std::uint64_t> gathered(2000 + static_cast<std::size_t>(n) - 1);
  EXPECT_EQ(team.collect(gathered.data(), part.data(), part.size()), gathered.size());
  EXPECT_EQ(gathered[1999], 7u);
  for (int r = 1; r < n; ++r) EXPECT_EQ(gathered[1999 + static_cast<std::size_t>(r)], r + 7u);
}

// Broadcasts from changing roots, more in a row than a root may run ahead
// of its readers (the node path's ring of slots), with a slow reader.
void check_broadcast_sequence(const Team& team) {
  const int me = team.rank(), n = team.size();
  for (int i = 0; i < 200; ++i) {
    const int root = i % n;
    std::int64_t value = me == root ? 1000 + i : -1;
    team.broadcast(&value, &value, 1, root);
    ASSERT_EQ(value, 1000 + i) << "broadcast " << i << " from " << root;
    if (me == n - 1 && i % 50 == 0) usleep(2000);
  }
}

// Every member gets the same bits from a floating-point sum whose result
// depends on the order of the additions.
void check_reductions_agree(const Team& team) {
  const int me = team.rank(), n = team.size();
  const double value = me % 2 == 0 ? 1e16 : 1.0 + me;
  double sum = 0;
  team.reduce(ReduceOp::sum, &sum, &value, 1);
  std::vector<double> sums(static_cast<std::size_t>(n));
  team.fcollect(sums.data(), &sum, 1);
  for (int r = 0; r < n; ++r) EXPECT_EQ(sums[static_cast<std::size_t>(r)], sum) << "member " << r;
}

TEST_F(TeamTest, CollectivesOnTheWorld) {
  check_collectives(Team::world(*pgas_));
}

TEST_F(TeamTest, CollectivesOnASplitTeam) {
  Team world = Team::world(*pgas_);
  const int n = world.size();
  Team odd = n > 1 ? world.split_strided(1, 2, n / 2) : world.split_strided(0, 1, 1);
  if (odd.valid()) check_collectives(odd);
  world.sync();
}

TEST_F(TeamTest, LargeContributionsBroadcastSequencesAndReductionOrder) {
  Team world = Team::world(*pgas_);
  check_large_collectives(world);
  check_broadcast_sequence(world);
  check_reductions_agree(world);
  Team shared = Team::shared(*pgas_);
  check_broadcast_sequence(shared);
}

// A team of an application's communicator: the ranks of the same parity.
TEST_F(TeamTest, AnApplicationsCommunicatorIsATeam) {
  Pgas& p = *pgas_;
  MPI_Comm parity;
  MPI_Comm_split(MPI_COMM_WORLD, p.rank() % 2, p.rank(), &parity);
  Team team(p, parity);
  MPI_Comm_free(&parity);  // the team holds its own duplicate
  EXPECT_EQ(team.pgas_rank(team.rank()), p.rank());
  check_collectives(team);
}

}  // namespace
}  // namespace mpidsm
