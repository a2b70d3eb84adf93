// Teams and contexts conformance: the predefined teams, splits (strided and
// 2-D), translation, configuration, team contexts whose PE numbers are the
// team's, team pointers, and destruction.
#include <vector>

#include "shmem_test_support.hpp"

namespace {

using namespace shmem_test;

TEST(ShmemTeams, PredefinedTeamsNumberThePes) {
  EXPECT_EQ(shmem_team_my_pe(SHMEM_TEAM_WORLD), me());
  EXPECT_EQ(shmem_team_n_pes(SHMEM_TEAM_WORLD), npes());
  const int shared = shmem_team_n_pes(SHMEM_TEAM_SHARED);
  EXPECT_GE(shared, 1);
  EXPECT_LE(shared, npes());
  const int world_of_mine = shmem_team_translate_pe(
      SHMEM_TEAM_SHARED, shmem_team_my_pe(SHMEM_TEAM_SHARED), SHMEM_TEAM_WORLD);
  EXPECT_EQ(world_of_mine, me());
  EXPECT_EQ(shmem_team_my_pe(SHMEM_TEAM_INVALID), -1);
  EXPECT_EQ(shmem_team_n_pes(SHMEM_TEAM_INVALID), -1);
  EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_WORLD, npes(), SHMEM_TEAM_WORLD), -1);
  EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID), -1);
}

TEST(ShmemTeams, StridedSplitNumbersItsMembersAndLeavesOthersOut) {
  shmem_team_config_t config{3};
  shmem_team_t evens = SHMEM_TEAM_INVALID;
  const int size = (npes() + 1) / 2;
  ASSERT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, size, &config, SHMEM_TEAM_NUM_CONTEXTS,
                                     &evens),
            0);
  if (me() % 2 != 0) {
    EXPECT_EQ(evens, SHMEM_TEAM_INVALID);
  } else {
    ASSERT_NE(evens, SHMEM_TEAM_INVALID);
    EXPECT_EQ(shmem_team_my_pe(evens), me() / 2);
    EXPECT_EQ(shmem_team_n_pes(evens), size);
    shmem_team_config_t got{0};
    EXPECT_EQ(shmem_team_get_config(evens, SHMEM_TEAM_NUM_CONTEXTS, &got), 0);
    EXPECT_EQ(got.num_contexts, 3);
    EXPECT_EQ(shmem_team_translate_pe(evens, size - 1, SHMEM_TEAM_WORLD), 2 * (size - 1));
    EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 1, evens), -1);  // odd, or no PE 1
    EXPECT_EQ(shmem_team_sync(evens), 0);
    // A split of the split.
    shmem_team_t first = SHMEM_TEAM_INVALID;
    ASSERT_EQ(shmem_team_split_strided(evens, 0, 1, 1, nullptr, 0, &first), 0);
    EXPECT_EQ(first != SHMEM_TEAM_INVALID, me() == 0);
    shmem_team_destroy(first);
  }
  shmem_team_destroy(evens);
  shmem_barrier_all();
}

TEST(ShmemTeams, TwoDimensionalSplitGivesRowsAndColumns) {
  const int xrange = npes() > 1 ? 2 : 1;
  shmem_team_t row = SHMEM_TEAM_INVALID, column = SHMEM_TEAM_INVALID;
  ASSERT_EQ(shmem_team_split_2d(SHMEM_TEAM_WORLD, xrange, nullptr, 0, &row, nullptr, 0, &column),
            0);
  ASSERT_NE(row, SHMEM_TEAM_INVALID);
  ASSERT_NE(column, SHMEM_TEAM_INVALID);
  EXPECT_EQ(shmem_team_my_pe(row), me() % xrange);
  EXPECT_EQ(shmem_team_my_pe(column), me() / xrange);
  EXPECT_EQ(shmem_team_n_pes(column), (npes() - me() % xrange + xrange - 1) / xrange);
  // The row's first member, in the world's numbering.
  EXPECT_EQ(shmem_team_translate_pe(row, 0, SHMEM_TEAM_WORLD), me() - me() % xrange);
  int sum = 0, one = 1;
  EXPECT_EQ(shmem_int_sum_reduce(column, &sum, &one, 1), 0);
  EXPECT_EQ(sum, shmem_team_n_pes(column));
  shmem_team_destroy(row);
  shmem_team_destroy(column);
  shmem_barrier_all();
}

// A context of a team numbers PEs as the team does.
TEST(ShmemContexts, TeamContextsUseTheTeamsNumbers) {
  shmem_team_t reversed = SHMEM_TEAM_INVALID;
  // Every PE, from the last to the first.
  ASSERT_EQ(
      shmem_team_split_strided(SHMEM_TEAM_WORLD, npes() - 1, -1, npes(), nullptr, 0, &reversed), 0);
  ASSERT_NE(reversed, SHMEM_TEAM_INVALID);
  ASSERT_EQ(shmem_team_my_pe(reversed), npes() - 1 - me());
  shmem_ctx_t ctx = SHMEM_CTX_INVALID;
  ASSERT_EQ(shmem_team_create_ctx(reversed, SHMEM_CTX_SERIALIZED, &ctx), 0);
  shmem_team_t back = SHMEM_TEAM_INVALID;
  EXPECT_EQ(shmem_ctx_get_team(ctx, &back), 0);
  EXPECT_EQ(back, reversed);
  Symmetric<int> word(1);
  shmem_barrier_all();
  // Team PE 0 is the world's last PE.
  shmem_ctx_int_atomic_add(ctx, word.get(), 1, 0);
  shmem_ctx_quiet(ctx);
  shmem_barrier_all();
  EXPECT_EQ(word[0], me() == npes() - 1 ? npes() : 0);
  EXPECT_EQ(shmem_ctx_int_g(ctx, word.get(), 0), npes());
  void* there = shmem_team_ptr(reversed, word.get(), shmem_team_my_pe(reversed));
  EXPECT_EQ(there, word.get());
  shmem_ctx_destroy(ctx);
  shmem_team_destroy(reversed);
  EXPECT_EQ(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &back), 0);
  EXPECT_EQ(back, SHMEM_TEAM_WORLD);
  EXPECT_NE(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &ctx), 0);
  EXPECT_EQ(ctx, SHMEM_CTX_INVALID);
  shmem_ctx_destroy(SHMEM_CTX_INVALID);  // no operation
  shmem_barrier_all();
}

TEST(ShmemTeams, ABadSplitFailsOnEveryPeAndTheLibraryGoesOn) {
  shmem_team_t team = SHMEM_TEAM_WORLD;
  EXPECT_NE(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes() + 1, nullptr, 0, &team), 0);
  EXPECT_EQ(team, SHMEM_TEAM_INVALID);
  EXPECT_NE(shmem_team_split_2d(SHMEM_TEAM_WORLD, 0, nullptr, 0, &team, nullptr, 0, &team), 0);
  shmem_barrier_all();
}

}  // namespace
