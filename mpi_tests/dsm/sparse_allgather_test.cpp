// The DSM barrier's exchange across nodes (src/dsm/protocol/
// sparse_allgather.hpp): every rank receives every non-empty contribution
// exactly once, whatever mix of silent, short and long (two-message)
// contributions the ranks make, over many exchanges in a row.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <map>
#include <vector>

#include "dsm/protocol/sparse_allgather.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace {

using detail::SparseAllgather;

// What rank `r` says in exchange `round`: nothing, a few words, more than
// a round's first message holds, or, every 8th exchange on every rank at
// once, more than any MPI eager limit (the rest then travels by
// rendezvous, which completes only once its receiver has posted the
// receive, while that receiver's own rest waits likewise).
std::vector<std::int64_t> contribution(int r, int round) {
  const int kind = round % 8 == 7 ? 4 : (r * 7 + round * 3) % 4;
  const std::size_t size = kind == 0   ? 0
                           : kind == 1 ? 1
                           : kind == 2 ? 5
                           : kind == 3 ? SparseAllgather::kFirstWords * 3 + r
                                       : 40000 + r;
  std::vector<std::int64_t> words(size);
  for (std::size_t i = 0; i < size; ++i)
    words[i] = (static_cast<std::int64_t>(r) << 40) | (static_cast<std::int64_t>(round) << 20) |
               static_cast<std::int64_t>(i);
  return words;
}

TEST(SparseAllgather, EveryRankLearnsEveryNonEmptyContributionOnce) {
  Runtime runtime(MPI_COMM_WORLD);
  SparseAllgather gather(runtime.comm(), runtime.transport());
  const int me = runtime.rank(), ranks = runtime.size();
  for (int round = 0; round < 40; ++round) {
    int sent = 0;
    const auto entries = gather.exchange(
        contribution(me, round), [&] { ++sent; }, "SparseAllgather test");
    EXPECT_EQ(sent, 1) << "round " << round;
    std::map<int, std::vector<std::int64_t>> heard;
    SparseAllgather::for_each(entries, [&](int r, std::span<const std::int64_t> words) {
      EXPECT_TRUE(heard.find(r) == heard.end()) << "rank " << r << " heard twice, round " << round;
      heard[r].assign(words.begin(), words.end());
    });
    for (int r = 0; r < ranks; ++r) {
      const auto expected = contribution(r, round);
      if (expected.empty()) {
        EXPECT_TRUE(heard.find(r) == heard.end())
            << "rank " << r << " said nothing, round " << round;
      } else {
        ASSERT_TRUE(heard.find(r) != heard.end()) << "rank " << r << " unheard, round " << round;
        EXPECT_EQ(heard[r], expected) << "rank " << r << ", round " << round;
      }
    }
  }
}

TEST(SparseAllgather, SilentRanksExchangeNothing) {
  Runtime runtime(MPI_COMM_WORLD);
  SparseAllgather gather(runtime.comm(), runtime.transport());
  for (int round = 0; round < 100; ++round)
    EXPECT_TRUE(gather
                    .exchange(
                        {}, [] {}, "SparseAllgather test")
                    .empty());
}

}  // namespace
}  // namespace mpidsm
