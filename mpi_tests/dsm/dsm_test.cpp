// The coherent DSM under mpirun: one address everywhere, placement, barrier
// coherence (a stencil equal to the sequential result bit for bit), multiple
// writers of one page, pointers stored in the region, and real crashes
// outside the protocol still crashing.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

TEST_F(DsmTest, SameAddressOnEveryRankAndHomesFollowPlacement) {
  Dsm& d = *dsm_;
  const int n = runtime_->size();
  const std::size_t page = d.page_size();
  auto* block = d.allocate<std::byte>(page * 8);
  auto* cyclic = d.allocate<std::byte>(page * 8, Placement::cyclic(2));
  auto* single = d.allocate<std::byte>(page * 3, Placement::on(n - 1));
  auto* shifted = d.allocate<std::byte>(page * 8, Placement::cyclic(1, n - 1));
  for (auto* p : {block, cyclic, single, shifted}) {
    std::uint64_t mine = reinterpret_cast<std::uint64_t>(p), low = 0, high = 0;
    MPI_Allreduce(&mine, &low, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &high, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(low, high);
  }
  const int slab = (8 + n - 1) / n;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(d.home_of(block + i * page), i / slab) << "block page " << i;
    EXPECT_EQ(d.home_of(cyclic + i * page), (i / 2) % n) << "cyclic page " << i;
    EXPECT_EQ(d.home_of(shifted + i * page), (i + n - 1) % n) << "cyclic from rank n-1, page " << i;
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(d.home_of(single + i * page), n - 1);
  int outside = 0;
  EXPECT_MPIDSM_ERROR(d.home_of(&outside), Errc::unregistered, "outside the DSM region");
  EXPECT_MPIDSM_ERROR(d.allocate<std::byte>(page, Placement::cyclic(1, n)), Errc::invalid_rank,
                      "first rank of the cyclic placement " + std::to_string(n));
  d.free(shifted);
  d.free(single);
  d.free(cyclic);
  d.free(block);
}

// Blocks of different sizes, each homed where the program says: rows of a
// matrix dealt unevenly, the last rank's block first. Writes by each home
// to its block are seen everywhere after a barrier.
TEST_F(DsmTest, BlocksOfDifferentSizesLiveOnTheHomesGiven) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t page = d.page_size();
  std::vector<PlacementBlock> blocks;
  for (int r = n - 1; r >= 0; --r)
    blocks.push_back({page * static_cast<std::size_t>(1 + 2 * r), r});  // 2r+1 pages
  std::size_t bytes = 0;
  for (const auto& b : blocks) bytes += b.bytes;
  auto* data = d.allocate<std::byte>(bytes, Placement::blocks(blocks));
  std::size_t at = 0;
  for (const auto& b : blocks) {
    for (std::size_t offset = 0; offset < b.bytes; offset += page)
      EXPECT_EQ(d.home_of(data + at + offset), b.home) << "byte " << at + offset;
    if (b.home == me)
      for (std::size_t i = 0; i < b.bytes; ++i) data[at + i] = std::byte(b.home + 1);
    at += b.bytes;
  }
  d.barrier();
  at = 0;
  std::size_t wrong = 0;
  for (const auto& b : blocks) {
    for (std::size_t i = 0; i < b.bytes; ++i) wrong += data[at + i] != std::byte(b.home + 1);
    at += b.bytes;
  }
  EXPECT_EQ(wrong, 0u) << "rank " << me;
  d.barrier();
  d.free(data);
  EXPECT_MPIDSM_ERROR(d.allocate<std::byte>(page, Placement::blocks({{page, n}})),
                      Errc::invalid_rank, "home of block 0, rank " + std::to_string(n));
  EXPECT_MPIDSM_ERROR(d.allocate<std::byte>(3 * page, Placement::blocks({{page, 0}, {page, 0}})),
                      Errc::invalid_argument, "cover " + std::to_string(2 * page) + " bytes");
  EXPECT_MPIDSM_ERROR(d.allocate<std::byte>(page, Placement::blocks({})), Errc::invalid_argument,
                      "no block");
}

TEST_F(DsmTest, FirstTouchMakesTheFirstRankToTouchAPageItsHome) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t per_page = d.page_size() / sizeof(long),
                    pages = 4 * static_cast<std::size_t>(n);
  long* data = d.allocate<long>(per_page * pages, Placement::first_touch());
  EXPECT_EQ(d.home_of(data), -1);  // nobody touched it yet
  d.barrier();
  // Rank r writes pages r, r + n, ... first; the last page is only ever read.
  for (std::size_t p = static_cast<std::size_t>(me); p + 1 < pages;
       p += static_cast<std::size_t>(n))
    for (std::size_t i = 0; i < per_page; ++i)
      data[p * per_page + i] = static_cast<long>(p * 1000 + i);
  d.barrier();
  for (std::size_t p = 0; p + 1 < pages; ++p) {
    EXPECT_EQ(d.home_of(data + p * per_page), static_cast<int>(p % n)) << "page " << p;
    for (std::size_t i = 0; i < per_page; i += 97)
      ASSERT_EQ(data[p * per_page + i], static_cast<long>(p * 1000 + i)) << "page " << p;
  }
  // Every rank reads the last page at once: exactly one becomes its home and
  // everyone agrees which.
  EXPECT_EQ(data[(pages - 1) * per_page], 0);
  const int home = d.home_of(data + (pages - 1) * per_page);
  int low = 0, high = 0;
  MPI_Allreduce(&home, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&home, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(low, high);
  EXPECT_GE(low, 0);
  d.barrier();
  d.free(data);
}

TEST_F(DsmTest, WritesBeforeABarrierAreSeenByEveryRankAfterIt) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t count = d.page_size() / sizeof(int) * 4 * n;
  int* data = d.allocate<int>(count, Placement::on(0));
  // Each rank writes its own stripe of pages homed on rank 0.
  for (std::size_t i = me; i < count; i += n) data[i] = static_cast<int>(i) * 7 + me;
  d.barrier();
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(data[i], static_cast<int>(i) * 7 + static_cast<int>(i % n)) << "element " << i;
  d.barrier();
  d.free(data);
}

TEST_F(DsmTest, TwoWritersOfOnePageBothSurvive) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t bytes = d.page_size() * 3;
  // Every rank writes the bytes b with b % n == rank: adjacent bytes of the
  // same words and pages belong to different writers.
  auto* data = d.allocate<std::uint8_t>(bytes, Placement::cyclic(1));
  for (int round = 1; round <= 3; ++round) {
    for (std::size_t b = me; b < bytes; b += n)
      data[b] = static_cast<std::uint8_t>(round * 31 + me);
    d.barrier();
    for (std::size_t b = 0; b < bytes; ++b)
      ASSERT_EQ(data[b], static_cast<std::uint8_t>(round * 31 + static_cast<int>(b % n)))
          << "byte " << b << " round " << round;
    d.barrier();
  }
  d.free(data);
}

// A stream of write misses fetches and twins the following pages ahead of
// their writes. Pages of that batch this rank then leaves alone must send no
// bytes home: the home's own writes to them in the same interval survive.
// Rank 1 writes a stream with gaps over pages homed on rank 0, either
// missing (the batch fetches and twins the following pages) or cached (the
// batch twins the following cached pages); then, in the same interval, the
// home writes the last byte of every page. A page of a batch rank 1 left
// alone must send nothing home, or it would undo the home's byte.
void WriteStreamWithGapsLeavesTheHomesBytes(Dsm& d, int me, bool cached_first) {
  const std::size_t page = d.page_size(), pages = 40;
  auto* data = d.allocate<std::uint8_t>(page * pages, Placement::on(0));
  auto by_rank_1 = [](std::size_t p) { return p < 3 || (p >= 8 && p % 4 == 0); };
  for (int round = 1; round <= 3; ++round) {
    if (me == 0)  // rank 1's copies are gone
      for (std::size_t p = 0; p < pages; ++p) data[p * page + page - 1] = 100;
    d.barrier();
    std::size_t sum = 0;
    if (me == 1 && cached_first)
      for (std::size_t p = 0; p < pages; ++p) sum += data[p * page];
    if (me == 1)
      for (std::size_t p = 0; p < pages; ++p)
        if (by_rank_1(p)) data[p * page] = static_cast<std::uint8_t>(round);
    MPI_Barrier(MPI_COMM_WORLD);  // synchronisation only: no consistency action
    if (me == 0)
      for (std::size_t p = 0; p < pages; ++p)
        data[p * page + page - 1] = static_cast<std::uint8_t>(200 + round);
    d.barrier();
    std::size_t wrong = sum == 12345 ? 1 : 0;  // (keeps the reads)
    for (std::size_t p = 0; p < pages; ++p) {
      wrong += data[p * page] != (by_rank_1(p) ? round : 0);
      wrong += data[p * page + page - 1] != 200 + round;
    }
    EXPECT_EQ(wrong, 0u) << "rank " << me << " round " << round;
    d.barrier();
    if (me == 1)
      for (std::size_t p = 0; p < pages; ++p)
        if (by_rank_1(p)) data[p * page] = 0;
    d.barrier();
  }
  d.free(data);
}

TEST_F(DsmTest, PagesTwinnedAheadOfAWriteStreamButNotWrittenSendNothingHome) {
  if (runtime_->size() < 2) GTEST_SKIP() << "needs a home and a writer";
  WriteStreamWithGapsLeavesTheHomesBytes(*dsm_, runtime_->rank(), false);
}

TEST_F(DsmTest, CachedPagesTwinnedAlongAWriteStreamButNotWrittenSendNothingHome) {
  if (runtime_->size() < 2) GTEST_SKIP() << "needs a home and a writer";
  WriteStreamWithGapsLeavesTheHomesBytes(*dsm_, runtime_->rank(), true);
}

// Rewriting a page with the bytes it holds changes nothing: no notice, so
// the other copies stay valid.
TEST_F(DsmTest, RewritingTheSameBytesInvalidatesNoOtherCopy) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 3) GTEST_SKIP() << "needs a home, a writer and a reader";
  const testing::FixedHomes fixed(d, *runtime_);  // rank 1 alone writes the page
  // Counts invalidations: a policy that keeps copies (update) has none.
  auto* data = d.allocate<std::uint64_t>(d.page_size() / 8, Placement::on(0), Coherence::adaptive);
  if (me == 0) data[5] = 77;
  d.barrier();
  // Every rank takes a copy. The home then sends one notice for the page at
  // its next release (it may have written its exclusive page unseen), so
  // the copies are taken again after that before counting.
  for (int twice = 0; twice < 2; ++twice) {
    EXPECT_EQ(data[5], 77u);
    d.barrier();
  }
  EXPECT_EQ(data[5], 77u);
  d.reset_stats();
  if (me == 1) data[5] = 77;  // a write fault and a twin; the same bytes
  d.barrier();
  EXPECT_EQ(data[5], 77u);
  if (me == 2) {
    EXPECT_EQ(d.stats().invalidations, 0u);
  }
  d.barrier();
  if (me == 1) data[5] = 78;  // a real change still invalidates
  d.barrier();
  EXPECT_EQ(data[5], 78u);
  if (me == 2) {
    EXPECT_EQ(d.stats().invalidations, 1u);
  }
  d.barrier();
  d.free(data);
}

TEST_F(DsmTest, BarrierPhasedStencilEqualsSequentialBitForBit) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  constexpr std::size_t kCells = 20000;
  constexpr int kSteps = 20;
  double* a = d.allocate<double>(kCells);
  double* b = d.allocate<double>(kCells);
  std::vector<double> x(kCells), y(kCells);
  for (std::size_t i = 0; i < kCells; ++i) x[i] = static_cast<double>((i * 37) % 101);
  const std::size_t lo = kCells * me / n, hi = kCells * (me + 1) / n;
  for (std::size_t i = lo; i < hi; ++i) a[i] = x[i];
  d.barrier();
  auto step = [](const double* in, double* out, std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      const double left = i > 0 ? in[i - 1] : 0.0, right = i + 1 < kCells ? in[i + 1] : 0.0;
      out[i] = 0.25 * left + 0.5 * in[i] + 0.25 * right;
    }
  };
  for (int s = 0; s < kSteps; ++s) {
    step(s % 2 ? b : a, s % 2 ? a : b, lo, hi);
    step(s % 2 ? y.data() : x.data(), s % 2 ? x.data() : y.data(), 0, kCells);
    d.barrier();
  }
  const double* result = kSteps % 2 ? b : a;
  const std::vector<double>& expected = kSteps % 2 ? y : x;
  for (std::size_t i = 0; i < kCells; ++i) ASSERT_EQ(result[i], expected[i]) << "cell " << i;
  d.barrier();
  d.free(b);
  d.free(a);
}

TEST_F(DsmTest, PointersStoredInTheRegionWorkOnEveryRank) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  struct Node {
    Node* next;
    int value;
  };
  Node* nodes = d.allocate<Node>(static_cast<std::size_t>(n), Placement::cyclic(1));
  nodes[me] = {&nodes[(me + 1) % n], 100 + me};
  d.barrier();
  Node* walk = &nodes[0];
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(walk->value, 100 + i);
    walk = walk->next;
  }
  EXPECT_EQ(walk, &nodes[0]);
  d.barrier();
  d.free(nodes);
}

TEST_F(DsmTest, FreeOfAnAddressThatStartsNoAllocationIsAnErrorOnEveryRank) {
  Dsm& d = *dsm_;
  auto* data = d.allocate<std::byte>(d.page_size() * 2);
  int outside = 0;
  EXPECT_MPIDSM_ERROR(d.free(data + d.page_size()), Errc::unregistered,
                      "not the start of a DSM allocation");
  EXPECT_MPIDSM_ERROR(d.free(data + 1), Errc::unregistered, "not the start");
  EXPECT_MPIDSM_ERROR(d.free(&outside), Errc::unregistered, "not the start");
  d.free(data);  // the real start still frees, once
  EXPECT_MPIDSM_ERROR(d.free(data), Errc::unregistered, "not the start");
}

// Runs `crash` in a child process; true when the child died of SIGSEGV.
template <class Crash>
bool dies_of_segfault(Crash crash) {
  pid_t child = fork();
  if (child == 0) {
    crash();
    _exit(0);  // survived: the test fails
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

TEST_F(DsmTest, FaultsOutsideTheProtocolStillCrash) {
  Dsm& d = *dsm_;
  int* data = d.allocate<int>(16);
  // Outside the region (a page just unmapped), and inside the region but in
  // no allocation.
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(page, 4096);
  EXPECT_TRUE(dies_of_segfault([&] { *static_cast<volatile int*>(page) = 1; }));
  auto* unallocated = static_cast<volatile char*>(d.base()) + d.size() - 1;
  EXPECT_TRUE(dies_of_segfault([&] { *unallocated = 1; }));
  // The handler still serves DSM faults afterwards in this process.
  data[runtime_->rank()] = 5;
  d.barrier();
  EXPECT_EQ(data[0], 5);
  d.barrier();
  d.free(data);
}

}  // namespace
}  // namespace mpidsm
