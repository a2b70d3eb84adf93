// Bookkeeping of the DSM's view and copy log, driven without MPI or UCX: the
// mappings a pattern of protections needs, the copy log's lap marks, and
// which pages of the view were touched.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <random>
#include <vector>

#include "dsm/memory/page_touches.hpp"
#include "dsm/memory/protection_map.hpp"
#include "dsm/protocol/copy_log.hpp"

namespace mpidsm::detail {
namespace {

TEST(PageTouches, APageIsTouchedOnceAccessedAndNotAfterItIsDropped) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* at = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(at, MAP_FAILED);
  auto* bytes = static_cast<volatile char*>(at);
  const PageTouches touches;
  EXPECT_FALSE(touches.touched(at)) << "a fresh mapping has no page-table entry";
  bytes[page + 10] = 1;
  EXPECT_TRUE(touches.touched(const_cast<char*>(bytes) + page + 100));
  EXPECT_FALSE(touches.touched(at)) << "the first page was never accessed";
  ASSERT_EQ(madvise(at, 2 * page, MADV_DONTNEED), 0);
  EXPECT_FALSE(touches.touched(const_cast<char*>(bytes) + page));
  munmap(at, 2 * page);
}

// Mappings of a protection pattern counted the slow way: runs of equal values.
std::size_t runs(const std::vector<int>& protection) {
  std::size_t n = 1;
  for (std::size_t p = 1; p < protection.size(); ++p) n += protection[p] != protection[p - 1];
  return n;
}

TEST(ProtectionMap, CountsTheMappingsOfEveryPattern) {
  constexpr std::size_t kPages = 64;
  ProtectionMap map(kPages);
  std::vector<int> model(kPages, PROT_NONE);
  EXPECT_EQ(map.mappings(), 1u);
  std::mt19937 rng(7);
  const int choices[] = {PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE};
  for (int step = 0; step < 5000; ++step) {
    const std::size_t first = rng() % kPages;
    const std::size_t count = 1 + rng() % std::min<std::size_t>(8, kPages - first);
    const int protection = choices[rng() % 3];
    const std::ptrdiff_t predicted = map.change_if(first, count, protection);
    const std::size_t before = runs(model);
    for (std::size_t p = first; p < first + count; ++p) model[p] = protection;
    ASSERT_EQ(static_cast<std::ptrdiff_t>(runs(model)) - static_cast<std::ptrdiff_t>(before),
              predicted)
        << "step " << step;
    map.set(first, count, protection);
    ASSERT_EQ(map.mappings(), runs(model)) << "step " << step;
    for (std::size_t p = first; p < first + count; ++p) ASSERT_EQ(map.at(p), protection);
  }
}

TEST(ProtectionMap, AlternatingPagesNeedOneMappingEach) {
  ProtectionMap map(10);
  for (std::size_t p = 0; p < 10; p += 2) map.set(p, 1, PROT_READ);
  EXPECT_EQ(map.mappings(), 10u);
  map.set(0, 10, PROT_NONE);
  EXPECT_EQ(map.mappings(), 1u);
}

TEST(CopyLog, AnEntryMatchesOnlyTheIndexItWasWrittenFor) {
  const std::uint64_t index = 3 * CopyLog::entries + 5;
  const std::uint64_t entry = CopyLog::encode(index, 123456);
  EXPECT_EQ(CopyLog::page(entry), 123456u);
  const std::uint64_t check = CopyLog::check(entry);
  EXPECT_TRUE(CopyLog::written_for(entry, check, index));
  // The same slot one lap earlier or later, and a slot nobody wrote.
  EXPECT_FALSE(CopyLog::written_for(entry, check, index - CopyLog::entries));
  EXPECT_FALSE(CopyLog::written_for(entry, check, index + CopyLog::entries));
  EXPECT_FALSE(CopyLog::written_for(0, 0, 5));
  // Half written: a new entry beside an old check word, or a byte of the
  // entry still old, reads as not yet written.
  const std::uint64_t older = CopyLog::encode(index - CopyLog::entries, 99);
  EXPECT_FALSE(CopyLog::written_for(entry, CopyLog::check(older), index));
  EXPECT_FALSE(CopyLog::written_for((entry & ~0xFFull) | (older & 0xFF), check, index));
  EXPECT_EQ(CopyLog::slot(index), 5u);
}

TEST(CopyLog, LapsNeverReadAsUnwritten) {
  // Laps wrap inside the bits left beside the page, never to 0.
  for (std::uint64_t lap :
       {std::uint64_t{0}, CopyLog::lap_mask - 1, CopyLog::lap_mask, 2 * CopyLog::lap_mask + 3})
    EXPECT_NE(CopyLog::lap(lap * CopyLog::entries), 0u);
  const std::size_t largest_page = (std::size_t{1} << CopyLog::page_bits) - 1;
  EXPECT_EQ(CopyLog::page(CopyLog::encode(7, largest_page)), largest_page);
}

}  // namespace
}  // namespace mpidsm::detail
