// Byte-exact diffs, driven without MPI or UCX: the runs found, the bytes
// stored into a home mapped here, and the wire form a home applies, by every
// diff kernel this CPU runs (each must agree with the portable one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "dsm/protocol/diff.hpp"
#include "dsm/protocol/diff_kernels.hpp"
#include "dsm/protocol/diff_message.hpp"

namespace mpidsm::detail {
namespace {

using ChangedRun = std::pair<std::size_t, std::size_t>;
using Bytes = std::vector<std::byte>;

std::vector<ChangedRun> runs_of(const Bytes& twin, const Bytes& page) {
  std::vector<ChangedRun> runs;
  for_each_changed_run(
      twin.data(), page.data(), twin.size(),
      [&](std::size_t offset, std::size_t length) { runs.emplace_back(offset, length); });
  return runs;
}

std::size_t bytes_in(const std::vector<ChangedRun>& runs) {
  std::size_t total = 0;
  for (auto [offset, length] : runs) total += length;
  return total;
}

// A page of floats updated as a stencil sweep updates them: most bytes of
// every float change, some do not.
std::pair<Bytes, Bytes> floats_updated(std::size_t size) {
  Bytes twin(size), page(size);
  std::vector<float> values(size / sizeof(float));
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = 0.25f + static_cast<float>(k) * 1e-3f;
  std::memcpy(twin.data(), values.data(), size);
  for (auto& v : values) v = v * 0.999f + 0.001f;
  std::memcpy(page.data(), values.data(), size);
  return {twin, page};
}

// Changes in random places: single bytes, runs across words, whole words.
std::pair<Bytes, Bytes> randomly_changed(std::size_t size, unsigned seed) {
  std::mt19937 random(seed);
  Bytes twin(size);
  for (auto& x : twin) x = std::byte(random() & 0xff);
  Bytes page = twin;
  const std::size_t edits = random() % 200;
  for (std::size_t e = 0; e < edits; ++e) {
    const std::size_t at = random() % size, length = 1 + random() % 40;
    for (std::size_t i = at; i < std::min(size, at + length); ++i)
      page[i] = twin[i] ^ std::byte(1 + random() % 255);
  }
  return {twin, page};
}

TEST(Diff, NoChangeNoRun) {
  Bytes twin(4096, std::byte{7}), page = twin;
  EXPECT_TRUE(runs_of(twin, page).empty());
}

TEST(Diff, RunsAreByteExactInsideAWord) {
  Bytes twin(64, std::byte{0}), page = twin;
  page[3] = std::byte{1};  // one byte inside the first word
  page[9] = std::byte{1};  // two adjacent bytes in the second word
  page[10] = std::byte{1};
  page[63] = std::byte{1};  // the last byte
  EXPECT_EQ(runs_of(twin, page), (std::vector<ChangedRun>{{3, 1}, {9, 2}, {63, 1}}));
}

TEST(Diff, RunsCrossWordBoundaries) {
  Bytes twin(24, std::byte{0}), page = twin;
  for (std::size_t i = 6; i < 19; ++i) page[i] = std::byte{2};
  EXPECT_EQ(runs_of(twin, page), (std::vector<ChangedRun>{{6, 13}}));
}

// Every kernel this build and CPU runs; the portable one always.
std::vector<const DiffKernelOps*> kernels_here() {
  std::vector<const DiffKernelOps*> kernels;
  for (DiffKernel kind :
       {DiffKernel::words, DiffKernel::avx2, DiffKernel::avx512, DiffKernel::neon})
    if (const DiffKernelOps* kernel = find_diff_kernel(kind)) kernels.push_back(kernel);
  return kernels;
}

// Parameterised by kind (a pointer would make the test names differ per run)
// and by how the home's page is held: alone (whole vectors may be stored) or
// beside other writers (exactly the changed bytes).
using KernelAndAccess = std::tuple<DiffKernel, PageAccess>;
class EveryKernel : public ::testing::TestWithParam<KernelAndAccess> {
 protected:
  const DiffKernelOps& kernel() const { return *find_diff_kernel(std::get<0>(GetParam())); }
  PageAccess access() const { return std::get<1>(GetParam()); }
};

std::vector<KernelAndAccess> kinds_here() {
  std::vector<KernelAndAccess> kinds;
  for (const DiffKernelOps* kernel : kernels_here())
    for (PageAccess access : {PageAccess::shared, PageAccess::exclusive})
      kinds.emplace_back(kernel->kind, access);
  return kinds;
}

// Hands out `access` for every page and checks that each is released, once,
// before the next is held.
class CountingGuard final : public PageGuard {
 public:
  explicit CountingGuard(PageAccess access) : access_(access) {}
  PageAccess acquire(std::size_t page) override {
    EXPECT_FALSE(held_) << "page " << page << " held while page " << page_ << " is";
    held_ = true;
    page_ = page;
    ++holds;
    return access_;
  }
  void release(std::size_t page) override {
    EXPECT_TRUE(held_ && page == page_) << "page " << page << " released, not held";
    held_ = false;
  }
  bool idle() const { return !held_; }
  std::size_t holds = 0;

 private:
  PageAccess access_;
  bool held_ = false;
  std::size_t page_ = 0;
};

TEST(DiffKernels, ThePortableKernelRunsEverywhereAndAutoPicksTheWidest) {
  ASSERT_NE(find_diff_kernel(DiffKernel::words), nullptr);
  const DiffKernelOps* automatic = find_diff_kernel(DiffKernel::automatic);
  ASSERT_NE(automatic, nullptr);
  EXPECT_EQ(automatic, kernels_here().back()) << "auto chose " << to_string(automatic->kind);
  EXPECT_NE(kernels_this_cpu_runs().find("words"), std::string::npos);
#if defined(__x86_64__)
  EXPECT_EQ(find_diff_kernel(DiffKernel::neon), nullptr);
  EXPECT_EQ(cpu_runs(DiffKernel::avx2), __builtin_cpu_supports("avx2") != 0);
#endif
}

TEST_P(EveryKernel, ShapeCountsTheRunsAndBytesFound) {
  for (unsigned seed = 1; seed <= 50; ++seed) {
    auto [twin, page] = randomly_changed(4096, seed);
    const auto runs = runs_of(twin, page);
    const DiffShape shape = kernel().measure(twin.data(), page.data(), twin.size());
    ASSERT_EQ(shape.runs, runs.size()) << "seed " << seed;
    ASSERT_EQ(shape.bytes, bytes_in(runs)) << "seed " << seed;
  }
}

// Runs that meet at a block's edge are one run; a page changed whole is one.
TEST_P(EveryKernel, RunsAcrossBlocksCountOnce) {
  Bytes twin(4096, std::byte{0}), page = twin;
  for (std::size_t i = 60; i < 200; ++i) page[i] = std::byte{1};
  EXPECT_EQ(kernel().measure(twin.data(), page.data(), 4096).runs, 1u);
  Bytes all(4096, std::byte{3});
  const DiffShape whole = kernel().measure(twin.data(), all.data(), 4096);
  EXPECT_EQ(whole.runs, 1u);
  EXPECT_EQ(whole.bytes, 4096u);
}

// The multiple-writer guarantee: two ranks change interleaved bytes of one
// page; storing both diffs into the home keeps every change.
TEST_P(EveryKernel, StoringTwoWritersDiffsKeepsBoth) {
  std::mt19937 random(42);
  Bytes home(4096), a, b;
  for (auto& x : home) x = std::byte(random() & 0xff);
  a = b = home;
  for (std::size_t i = 0; i < home.size(); ++i) {
    if (i % 3 == 0) a[i] = ~home[i];
    if (i % 3 == 1) b[i] = ~home[i];
  }
  const Bytes twin = home;
  kernel().store(twin.data(), a.data(), home.data(), home.size(), access());
  kernel().store(twin.data(), b.data(), home.data(), home.size(), access());
  for (std::size_t i = 0; i < home.size(); ++i) {
    const std::byte expected = i % 3 == 0 ? a[i] : i % 3 == 1 ? b[i] : twin[i];
    ASSERT_EQ(home[i], expected) << "byte " << i;
  }
}

// Stores change the changed bytes and nothing else: a home whose other bytes
// hold a marker (another writer's bytes) keeps every marker.
TEST_P(EveryKernel, StoresWriteOnlyChangedBytes) {
  std::vector<std::pair<Bytes, Bytes>> cases;
  for (unsigned seed = 1; seed <= 50; ++seed) cases.push_back(randomly_changed(4096, seed));
  cases.push_back(floats_updated(4096));
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const auto& [twin, page] = cases[c];
    Bytes home(twin.size());
    for (std::size_t i = 0; i < home.size(); ++i) home[i] = ~twin[i];  // differs from both
    const DiffShape shape =
        kernel().store(twin.data(), page.data(), home.data(), home.size(), access());
    const auto runs = runs_of(twin, page);
    ASSERT_EQ(shape.runs, runs.size()) << "case " << c;
    ASSERT_EQ(shape.bytes, bytes_in(runs)) << "case " << c;
    for (std::size_t i = 0; i < home.size(); ++i)
      ASSERT_EQ(home[i], page[i] != twin[i] ? page[i] : ~twin[i]) << "case " << c << " byte " << i;
  }
}

// The packed form of every kernel is the portable kernel's, byte for byte
// (ranks on different CPUs read each other's diffs), and unpacking it
// touches only the changed bytes.
TEST_P(EveryKernel, PacksAsThePortableKernelAndUnpacksOnlyChangedBytes) {
  const DiffKernelOps& portable = *find_diff_kernel(DiffKernel::words);
  for (unsigned seed = 1; seed <= 50; ++seed) {
    auto [twin, page] = seed == 50 ? floats_updated(4096) : randomly_changed(4096, seed);
    Bytes masks(512), packed(4096 + kPackSlack), portable_masks(512),
        portable_packed(4096 + kPackSlack);
    const std::size_t count =
        kernel().pack(twin.data(), page.data(), 4096, masks.data(), packed.data());
    const std::size_t portable_count = portable.pack(twin.data(), page.data(), 4096,
                                                     portable_masks.data(), portable_packed.data());
    ASSERT_EQ(count, portable_count) << "seed " << seed;
    ASSERT_EQ(masks, portable_masks) << "seed " << seed;
    ASSERT_TRUE(std::equal(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(count),
                           portable_packed.begin()))
        << "seed " << seed;
    Bytes home(4096);
    for (std::size_t i = 0; i < home.size(); ++i) home[i] = ~twin[i];
    ASSERT_TRUE(kernel().unpack(masks.data(), packed.data(), count, home.data(), 4096, access()));
    for (std::size_t i = 0; i < home.size(); ++i)
      ASSERT_EQ(home[i], page[i] != twin[i] ? page[i] : ~twin[i])
          << "seed " << seed << " byte " << i;
    if (count > 0) {
      EXPECT_FALSE(
          kernel().unpack(masks.data(), packed.data(), count - 1, home.data(), 4096, access()));
      EXPECT_FALSE(
          kernel().unpack(masks.data(), packed.data(), count + 1, home.data(), 4096, access()));
    }
  }
}

// The wire form, applied at the home, writes what a store would, whichever
// kernel encoded it and whichever applies it.
void expect_round_trip(const DiffKernelOps& encoder, PageAccess access, const Bytes& twin,
                       const Bytes& page, const char* what) {
  const std::size_t size = twin.size(), pages = 3, target_page = 2;
  Bytes message(max_diff_record(size));
  DiffShape shape;
  const std::size_t length =
      encode_diff(encoder, target_page, twin.data(), page.data(), size, message.data(), shape);
  ASSERT_LE(length, message.size()) << what;
  const auto runs = runs_of(twin, page);
  EXPECT_EQ(shape.runs, runs.size()) << what;
  EXPECT_EQ(shape.bytes, bytes_in(runs)) << what;
  for (const DiffKernelOps* applier : kernels_here()) {
    Bytes home(pages * size), expected;
    for (std::size_t i = 0; i < home.size(); ++i) home[i] = std::byte(i * 7 & 0xff);
    expected = home;
    for (std::size_t i = 0; i < size; ++i)
      if (page[i] != twin[i]) expected[target_page * size + i] = page[i];
    // Exactly the bytes of the message: a kernel that read past it would
    // be caught by the sanitizers.
    const Bytes exact(message.begin(), message.begin() + static_cast<std::ptrdiff_t>(length));
    CountingGuard guard(access);
    ASSERT_TRUE(apply_diffs(*applier, exact.data(), length, home.data(), pages, size, guard))
        << what << ", applied by " << to_string(applier->kind);
    EXPECT_EQ(home, expected) << what << ", applied by " << to_string(applier->kind);
    EXPECT_EQ(guard.holds, 1u) << what;
  }
}

TEST_P(EveryKernel, RoundTripsEveryShapeOfChange) {
  Bytes twin(4096, std::byte{5});
  expect_round_trip(kernel(), access(), twin, twin, "no change");
  Bytes one = twin;
  one[100] = std::byte{6};
  expect_round_trip(kernel(), access(), twin, one, "one byte");
  Bytes all(4096, std::byte{9});
  expect_round_trip(kernel(), access(), twin, all, "every byte");
  Bytes last = twin;
  last[4095] = std::byte{1};
  last[4090] = std::byte{1};
  expect_round_trip(kernel(), access(), twin, last, "the last word");
  auto [before, after] = floats_updated(4096);
  expect_round_trip(kernel(), access(), before, after, "updated floats");
  for (unsigned seed = 1; seed <= 50; ++seed) {
    auto [t, p] = randomly_changed(4096, seed);
    expect_round_trip(kernel(), access(), t, p, "random changes");
  }
}

INSTANTIATE_TEST_SUITE_P(ThisCpu, EveryKernel, ::testing::ValuesIn(kinds_here()),
                         [](const auto& info) {
                           return std::string(to_string(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) == PageAccess::shared ? "_shared"
                                                                                 : "_exclusive");
                         });

// Scattered changes cost about a page on the wire, not a header per run,
// whether the changed bytes go packed or in their whole words.
TEST(DiffMessage, ScatteredChangesTakeAboutAPage) {
  auto [twin, page] = floats_updated(4096);
  EXPECT_GT(runs_of(twin, page).size(), 500u);
  for (DiffKernel kind : {DiffKernel::automatic, DiffKernel::words}) {
    Bytes message(max_diff_record(4096));
    DiffShape shape;
    const std::size_t length = encode_diff(*find_diff_kernel(kind), 0, twin.data(), page.data(),
                                           4096, message.data(), shape);
    EXPECT_LE(length, 4096u + 4096u / 8 + 16u) << to_string(kind);
  }
}

// The words kernel sends changed words whole; a record whose mask bytes
// name more or fewer words than its count says is refused before any byte
// of its page is written.
TEST(DiffMessage, WordsRecordsWhoseMasksDisagreeAreRefused) {
  const DiffKernelOps& words = *find_diff_kernel(DiffKernel::words);
  Bytes twin(4096, std::byte{0}), page = twin;
  for (std::size_t i = 0; i < page.size(); i += 64) page[i] = page[i + 3] = std::byte{1};
  Bytes message(max_diff_record(4096));
  DiffShape shape;
  const std::size_t length =
      encode_diff(words, 0, twin.data(), page.data(), 4096, message.data(), shape);
  ASSERT_EQ(shape.runs, 128u);
  ASSERT_EQ(length, 16u + 512u + 64u * 8u) << "header, mask bytes, 64 whole words";
  for (PageAccess access : {PageAccess::shared, PageAccess::exclusive}) {
    Bytes home(4096, std::byte{2});
    CountingGuard guard(access);
    Bytes extra = message;  // one more word named than sent
    extra[16 + 1] = std::byte{1};
    EXPECT_FALSE(apply_diffs(words, extra.data(), length, home.data(), 1, 4096, guard));
    Bytes fewer = message;  // one fewer
    fewer[16] = std::byte{0};
    EXPECT_FALSE(apply_diffs(words, fewer.data(), length, home.data(), 1, 4096, guard));
    EXPECT_EQ(home, Bytes(4096, std::byte{2})) << "nothing written";
    EXPECT_TRUE(guard.idle());
    ASSERT_TRUE(apply_diffs(words, message.data(), length, home.data(), 1, 4096, guard));
    for (std::size_t i = 0; i < home.size(); ++i)
      ASSERT_EQ(home[i], i % 64 == 0 || i % 64 == 3 ? std::byte{1} : std::byte{2}) << "byte " << i;
  }
}

TEST(DiffMessage, MalformedMessagesAreRefused) {
  const DiffKernelOps& kernel = *find_diff_kernel(DiffKernel::automatic);
  auto [twin, page] = floats_updated(4096);
  Bytes message(max_diff_record(4096));
  DiffShape shape;
  const std::size_t length =
      encode_diff(kernel, 1, twin.data(), page.data(), 4096, message.data(), shape);
  Bytes home(2 * 4096);
  // A refused record leaves no page held.
  CountingGuard guard(PageAccess::exclusive);
  EXPECT_FALSE(apply_diffs(kernel, message.data(), length - 1, home.data(), 2, 4096, guard))
      << "truncated";
  EXPECT_TRUE(guard.idle());
  EXPECT_FALSE(apply_diffs(kernel, message.data(), length, home.data(), 1, 4096, guard))
      << "page past the end";
  Bytes longer(message.begin(), message.begin() + static_cast<std::ptrdiff_t>(length));
  longer.push_back(std::byte{0});
  EXPECT_FALSE(apply_diffs(kernel, longer.data(), longer.size(), home.data(), 2, 4096, guard))
      << "trailing byte";
  EXPECT_TRUE(guard.idle());
  EXPECT_TRUE(apply_diffs(kernel, message.data(), length, home.data(), 2, 4096, guard));
}

}  // namespace
}  // namespace mpidsm::detail
