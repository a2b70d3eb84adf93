// The DSM barrier's exchange across nodes (src/dsm/protocol/
// sparse_allgather.hpp): every rank receives every non-empty contribution
// exactly once, whatever mix of silent, short and long (two-message)
// contributions the ranks make, over many exchanges in a row; and a rider
// reaches the first round's peer whole.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "dsm/protocol/sparse_allgather.hpp"
#include "mpidsm/error.hpp"
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
  SparseAllgather gather(runtime.transport());
  const int me = runtime.rank(), ranks = runtime.size();
  for (int round = 0; round < 40; ++round) {
    int sent = 0;
    const auto entries = gather.exchange(
        contribution(me, round), {}, [&] { ++sent; }, "SparseAllgather test");
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
  SparseAllgather gather(runtime.transport());
  for (int round = 0; round < 100; ++round)
    EXPECT_TRUE(gather
                    .exchange(
                        {}, {}, [] {}, "SparseAllgather test")
                    .empty());
}

// What rank `r` gives the first round's peer in exchange `round`: nothing,
// a word, or a page's worth; the receiver allows for the largest.
std::vector<std::uint64_t> rider(int r, int round) {
  const std::size_t size = (r + round) % 3 == 0 ? 0 : (r + round) % 3 == 1 ? 1 : 513;
  std::vector<std::uint64_t> words(size);
  for (std::size_t i = 0; i < size; ++i)
    words[i] =
        (static_cast<std::uint64_t>(r) << 40) | (static_cast<std::uint64_t>(round) << 20) | i;
  return words;
}

TEST(SparseAllgather, ARiderReachesTheFirstRoundsPeerBesideTheContributions) {
  Runtime runtime(MPI_COMM_WORLD);
  SparseAllgather gather(runtime.transport());
  const int me = runtime.rank(), ranks = runtime.size();
  if (ranks == 1) {
    EXPECT_EQ(gather.rider_to(), -1);
    EXPECT_EQ(gather.rider_from(), -1);
  } else {
    EXPECT_EQ(gather.rider_to(), (me + ranks - 1) % ranks);
    EXPECT_EQ(gather.rider_from(), (me + 1) % ranks);
  }
  for (int round = 0; round < 24; ++round) {
    const auto out = ranks > 1 ? rider(me, round) : std::vector<std::uint64_t>{};
    const auto entries = gather.exchange(
        contribution(me, round), {out, 513}, [] {}, "SparseAllgather test");
    int heard = 0;
    SparseAllgather::for_each(entries, [&](int r, std::span<const std::int64_t> words) {
      ++heard;
      const auto expected = contribution(r, round);
      EXPECT_TRUE(std::equal(words.begin(), words.end(), expected.begin(), expected.end()))
          << "rank " << r << ", round " << round;
    });
    int speaking = 0;
    for (int r = 0; r < ranks; ++r) speaking += contribution(r, round).empty() ? 0 : 1;
    EXPECT_EQ(heard, speaking) << "round " << round;
    const auto in = gather.rider_in();
    const auto expected =
        ranks > 1 ? rider(gather.rider_from(), round) : std::vector<std::uint64_t>{};
    EXPECT_TRUE(std::equal(in.begin(), in.end(), expected.begin(), expected.end()))
        << "round " << round << ": " << in.size() << " words rode in, " << expected.size()
        << " expected";
  }
}

TEST(SparseAllgather, ARiderLargerThanItsReceiverAllowsFailsOnThatReceiver) {
  Runtime runtime(MPI_COMM_WORLD);
  if (runtime.size() == 1) GTEST_SKIP() << "a rider needs a peer";
  SparseAllgather gather(runtime.transport());
  const std::vector<std::uint64_t> out(8, 1);
  try {
    gather.exchange(
        {}, {out, 4}, [] {}, "SparseAllgather test");
    ADD_FAILURE() << "8 words rode into room for 4";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::truncated) << e.what();
  }
}

}  // namespace
}  // namespace mpidsm
