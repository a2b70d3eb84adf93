#include "transport/tag_codec.hpp"

#include <gtest/gtest.h>

namespace mpidsm::detail {
namespace {

TEST(TagCodec, FieldsRoundTrip) {
  std::uint64_t tag = TagCodec::encode(0xbeef, 0xabcdef, 0x123456);
  EXPECT_EQ(TagCodec::runtime(tag), 0xbeef);
  EXPECT_EQ(TagCodec::source(tag), 0xabcdef);
  EXPECT_EQ(TagCodec::user_tag(tag), 0x123456);
  EXPECT_EQ(TagCodec::source(TagCodec::encode(1, static_cast<std::uint32_t>(max_ranks - 1), 0)),
            max_ranks - 1);
  EXPECT_EQ(TagCodec::user_tag(TagCodec::encode(1, 0, static_cast<std::uint32_t>(max_tag))),
            max_tag);
}

TEST(TagCodec, FieldsCoverTheWordWithoutOverlap) {
  EXPECT_EQ(TagCodec::user_field & TagCodec::rank_field, 0u);
  EXPECT_EQ(TagCodec::user_field & TagCodec::runtime_field, 0u);
  EXPECT_EQ(TagCodec::rank_field & TagCodec::runtime_field, 0u);
  EXPECT_EQ(TagCodec::user_field | TagCodec::rank_field | TagCodec::runtime_field, ~0ull);
}

// A receive matches when (sender_tag & mask) == (receive_tag & mask), as in UCX.
bool matches(std::uint64_t sent, std::uint64_t wanted, std::uint64_t mask) {
  return (sent & mask) == (wanted & mask);
}

TEST(TagCodec, WildcardsNeverCrossRuntimes) {
  std::uint64_t sent = TagCodec::encode(3, 7, 42);
  EXPECT_TRUE(matches(sent, TagCodec::encode(3, 7, 42), TagCodec::mask(false, false)));
  EXPECT_FALSE(matches(sent, TagCodec::encode(3, 6, 42), TagCodec::mask(false, false)));
  EXPECT_FALSE(matches(sent, TagCodec::encode(3, 7, 41), TagCodec::mask(false, false)));
  EXPECT_TRUE(matches(sent, TagCodec::encode(3, 0, 42), TagCodec::mask(true, false)));
  EXPECT_TRUE(matches(sent, TagCodec::encode(3, 7, 0), TagCodec::mask(false, true)));
  EXPECT_TRUE(matches(sent, TagCodec::encode(3, 0, 0), TagCodec::mask(true, true)));
  EXPECT_FALSE(matches(sent, TagCodec::encode(4, 0, 0), TagCodec::mask(true, true)));
}

TEST(TagCodec, DescribeReportsSourceTagAndSize) {
  MessageInfo info = TagCodec::describe(TagCodec::encode(9, 12, 345), 678);
  EXPECT_EQ(info.source, 12);
  EXPECT_EQ(info.tag, 345);
  EXPECT_EQ(info.size, 678u);
}

}  // namespace
}  // namespace mpidsm::detail
