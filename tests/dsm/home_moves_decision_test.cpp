// HomeMoves' decision from a barrier's notices, without MPI: the only writer
// holding its copy takes the page; a second writer, a possibly-written or a
// copy-less notice, or the page's own home keep it; adaptive waits for the
// same writer twice; votes fold to the strictest mode.
#include "dsm/protocol/home_moves.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "dsm/protocol/release_notice.hpp"

namespace mpidsm::detail {
namespace {

constexpr std::size_t kPages = 64;

// Notices of ranks 0..n-1, laid out as a barrier's exchange lays them.
struct Notices {
  std::vector<std::int64_t> incoming;
  std::vector<int> sizes, offsets;
  explicit Notices(std::vector<std::vector<std::int64_t>> by_rank) {
    for (const auto& mine : by_rank) {
      offsets.push_back(static_cast<int>(incoming.size()));
      sizes.push_back(static_cast<int>(mine.size()));
      incoming.insert(incoming.end(), mine.begin(), mine.end());
    }
  }
};

std::int64_t held(std::size_t page) {
  return static_cast<std::int64_t>(page) | ReleaseNotice::writer_holds_copy;
}

int placed(std::size_t page) {
  return static_cast<int>(page % 2);
}

std::vector<HomeMoves::Move> decide(HomeMoves& moves, std::uint64_t barrier, HomeMigration mode,
                                    const Notices& n) {
  auto span = moves.decide(barrier, mode, n.incoming, n.sizes, n.offsets, [&](std::size_t page) {
    const int moved = moves.moved_home(page);
    return moved >= 0 ? moved : placed(page);
  });
  return {span.begin(), span.end()};
}

TEST(HomeMoves, TheOnlyWriterHoldingItsCopyTakesThePage) {
  HomeMoves moves(kPages, HomeMigration::on);
  // Rank 0 writes pages 1 and 3 (homed at 1), page 2 (its own); rank 1
  // writes page 4 (homed at 0) without holding its copy, and page 3 too.
  const Notices n({{held(1), held(3), held(2)}, {static_cast<std::int64_t>(4), held(3)}});
  const auto decided = decide(moves, 1, HomeMigration::on, n);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].page, 1u);
  EXPECT_EQ(decided[0].from, 1);
  EXPECT_EQ(decided[0].to, 0);
  EXPECT_TRUE(moves.moving(1));
  EXPECT_FALSE(moves.moving(3));
  moves.record(decided[0], placed(1));
  EXPECT_EQ(moves.moved_home(1), 0);
  // Back to its placed home: no entry kept.
  moves.record({1, 0, 1}, placed(1));
  EXPECT_EQ(moves.moved_home(1), -1);
}

TEST(HomeMoves, PossiblyWrittenAndUnchangedNotices) {
  HomeMoves moves(kPages, HomeMigration::on);
  // Page 5 (homed at 1): rank 0 changed it, its home noticed it "possibly
  // written"; page 7: rank 0 wrote it unchanged, and holds its copy.
  const Notices n({{held(5), held(7) | ReleaseNotice::unchanged},
                   {static_cast<std::int64_t>(5) | ReleaseNotice::possibly_written}});
  const auto decided = decide(moves, 1, HomeMigration::on, n);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].page, 7u);
  EXPECT_EQ(ReleaseNotice::page(held(7) | ReleaseNotice::unchanged), 7u);
  EXPECT_FALSE(ReleaseNotice::definite(held(7) | ReleaseNotice::unchanged));
  EXPECT_TRUE(ReleaseNotice::definite(held(5)));
}

TEST(HomeMoves, AdaptiveWaitsForTheSameWriterInConsecutiveBarriers) {
  HomeMoves moves(kPages, HomeMigration::adaptive);
  const Notices by0({{held(9)}, {}});
  const Notices by1({{}, {held(9)}});
  EXPECT_TRUE(decide(moves, 1, HomeMigration::adaptive, by0).empty());
  EXPECT_TRUE(decide(moves, 3, HomeMigration::adaptive, by0).empty()) << "not consecutive";
  EXPECT_TRUE(decide(moves, 4, HomeMigration::adaptive, by1).empty()) << "the home itself";
  EXPECT_TRUE(decide(moves, 5, HomeMigration::adaptive, by0).empty());
  const auto decided = decide(moves, 6, HomeMigration::adaptive, by0);
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].to, 0);
  EXPECT_TRUE(decide(moves, 7, HomeMigration::off, by0).empty());
}

TEST(HomeMoves, VotesFoldToTheStrictestMode) {
  HomeMoves moves(kPages, HomeMoves::kUsual);
  EXPECT_EQ(moves.vote(false), 0u) << "the usual mode votes 0: a clean count stays 0";
  EXPECT_EQ(HomeMoves::mode_of(moves.vote(true)), HomeMigration::off);
  for (HomeMigration mode : {HomeMigration::off, HomeMigration::adaptive, HomeMigration::on}) {
    moves.set_mode(mode);
    EXPECT_EQ(HomeMoves::mode_of(moves.vote(false)), mode);
    EXPECT_LT(moves.vote(false), 4u) << "two bits of the barrier count";
  }
  EXPECT_EQ(HomeMoves::stricter(HomeMigration::on, HomeMigration::adaptive),
            HomeMigration::adaptive);
  EXPECT_EQ(HomeMoves::stricter(HomeMigration::off, HomeMigration::on), HomeMigration::off);
  EXPECT_EQ(Config{}.home_migration, HomeMoves::kUsual);
}

TEST(HomeMoves, FreedPagesForgetTheirMoves) {
  HomeMoves moves(kPages, HomeMigration::on);
  moves.record({10, 0, 1}, 0);
  EXPECT_EQ(moves.moved_home(10), 1);
  moves.forget(8, 4);
  EXPECT_EQ(moves.moved_home(10), -1);
}

}  // namespace
}  // namespace mpidsm::detail
