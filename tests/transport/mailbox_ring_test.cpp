// The mailbox ring on plain memory: records arrive whole and in order across
// the wrap, a full ring refuses instead of overwriting, and records left from
// an earlier lap are never taken for new ones.
#include "transport/mailbox_ring.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace mpidsm::detail {
namespace {

struct Ring : ::testing::Test {
  std::vector<std::byte> memory = std::vector<std::byte>(RingLayout::ring_bytes);
  RingWriter writer{memory.data()};
  RingReader reader{memory.data()};

  std::string take() {
    const MailboxRecord* record = reader.peek();
    if (!record) return "<none>";
    std::string text(reinterpret_cast<const char*>(RingReader::payload(record)), record->length);
    reader.pop(record);
    return text;
  }
  bool put(const std::string& text, int tag = 0) {
    return writer.try_write(RecordKind::eager, tag, 0, text.size(), text.data(), text.size());
  }
};

TEST_F(Ring, RecordsArriveInOrderAcrossManyLaps) {
  for (int i = 0; i < 20000; ++i) {
    const std::string text(static_cast<std::size_t>(i % 300), static_cast<char>('a' + i % 26));
    ASSERT_TRUE(put(text + std::to_string(i), i));
    const MailboxRecord* record = reader.peek();
    ASSERT_NE(record, nullptr);
    EXPECT_EQ(record->tag, i);
    ASSERT_EQ(take(), text + std::to_string(i));
  }
  EXPECT_EQ(take(), "<none>");
}

TEST_F(Ring, AFullRingRefusesUntilTheReaderConsumes) {
  const std::string big(RingLayout::max_eager, 'x');
  int written = 0;
  while (put(big)) ++written;
  EXPECT_EQ(written, 4);  // the largest record is a quarter of the ring
  EXPECT_FALSE(put("small enough?"));
  EXPECT_EQ(take(), big);
  EXPECT_TRUE(put("after one left"));
  for (int i = 0; i < written - 1; ++i) EXPECT_EQ(take(), big);
  EXPECT_EQ(take(), "after one left");
  EXPECT_EQ(take(), "<none>");
}

TEST_F(Ring, RendezvousRecordsCarryTheLengthButNoPayload) {
  ASSERT_TRUE(writer.try_write(RecordKind::rendezvous, 7, 42, 1 << 20, nullptr, 0));
  const MailboxRecord* record = reader.peek();
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->kind, RecordKind::rendezvous);
  EXPECT_EQ(record->length, 1u << 20);
  EXPECT_EQ(record->sequence, 42u);
  EXPECT_EQ(record->cells, 1);
  reader.pop(record);
  EXPECT_EQ(reader.peek(), nullptr);
}

TEST_F(Ring, StaleRecordsOfAnEarlierLapAreNotTaken) {
  // Fill one lap exactly with one-cell records, consume them all: the ring
  // now holds old records at every position, none of which may reappear.
  for (std::size_t i = 0; i < RingLayout::ring_cells; ++i) {
    ASSERT_TRUE(put("x"));
    ASSERT_EQ(take(), "x");
  }
  EXPECT_EQ(reader.peek(), nullptr);
  ASSERT_TRUE(put("next lap"));
  EXPECT_EQ(take(), "next lap");
  EXPECT_EQ(reader.peek(), nullptr);
}

}  // namespace
}  // namespace mpidsm::detail
