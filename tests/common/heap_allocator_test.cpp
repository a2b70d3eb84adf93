#include "common/heap_allocator.hpp"

#include <gtest/gtest.h>

namespace mpidsm::detail {
namespace {

TEST(HeapAllocator, AlignsAndPacksBlocks) {
  HeapAllocator heap(4096);
  EXPECT_EQ(heap.allocate(1), 0u);
  EXPECT_EQ(heap.allocate(64), 64u);
  EXPECT_EQ(heap.allocate(65), 128u);
  EXPECT_EQ(heap.used(), 64u + 64u + 128u);
}

TEST(HeapAllocator, RefusesZeroAndTooLarge) {
  HeapAllocator heap(1024);
  EXPECT_FALSE(heap.allocate(0));
  EXPECT_FALSE(heap.allocate(1025));
  EXPECT_FALSE(heap.allocate(~std::size_t{0}));
  EXPECT_TRUE(heap.allocate(1024));
  EXPECT_FALSE(heap.allocate(1));
}

TEST(HeapAllocator, FreeMergesNeighboursSoLargeBlocksFitAgain) {
  HeapAllocator heap(64 * 4);
  auto a = heap.allocate(64), b = heap.allocate(64), c = heap.allocate(64), d = heap.allocate(64);
  ASSERT_TRUE(a && b && c && d);
  heap.free(*b);
  heap.free(*d);
  EXPECT_EQ(heap.largest_free(), 64u);
  EXPECT_FALSE(heap.allocate(128));
  heap.free(*c);  // merges with b and d
  EXPECT_EQ(heap.largest_free(), 192u);
  EXPECT_EQ(heap.allocate(192), 64u);
  heap.free(*a);
  EXPECT_EQ(heap.used(), 192u);
}

TEST(HeapAllocator, UnitAlignmentPacksExactly) {
  HeapAllocator pages(10, 1);
  EXPECT_EQ(pages.allocate(3), 0u);
  EXPECT_EQ(pages.allocate(7), 3u);
  EXPECT_FALSE(pages.allocate(1));
  EXPECT_EQ(pages.length_of(3), 7u);
  EXPECT_FALSE(pages.length_of(1));  // inside a block, not its start
  pages.free(3);
  EXPECT_FALSE(pages.length_of(3));
}

TEST(HeapAllocator, SameSequenceGivesSameOffsets) {
  HeapAllocator one(1 << 20), two(1 << 20);
  for (std::size_t size : {100u, 5000u, 64u, 70000u})
    EXPECT_EQ(one.allocate(size), two.allocate(size));
  one.free(64 * 2);
  two.free(64 * 2);
  EXPECT_EQ(one.allocate(10), two.allocate(10));
}

}  // namespace
}  // namespace mpidsm::detail
