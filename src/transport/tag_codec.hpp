// Layout of the 64-bit UCX tag: | runtime id : 16 | source rank : 24 | user tag : 24 |.
// The runtime id keeps two runtimes' messages apart, the source rank makes
// any-source receives report who sent, and the masks below give wildcards.
// Plain arithmetic so unit tests can check it without UCX.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

struct TagCodec {
  static constexpr unsigned user_bits = 24;
  static constexpr unsigned rank_bits = 24;
  static constexpr unsigned runtime_bits = 16;
  static constexpr std::uint64_t user_field = (std::uint64_t{1} << user_bits) - 1;
  static constexpr std::uint64_t rank_field = ((std::uint64_t{1} << rank_bits) - 1) << user_bits;
  static constexpr std::uint64_t runtime_field = ~(user_field | rank_field);

  static constexpr std::uint64_t encode(std::uint16_t runtime, std::uint32_t source,
                                        std::uint32_t tag) {
    return (std::uint64_t{runtime} << (user_bits + rank_bits)) |
           (std::uint64_t{source} << user_bits) | (tag & user_field);
  }
  // Bits a receive must match: always the runtime id, the source and the tag
  // unless they are wildcards.
  static constexpr std::uint64_t mask(bool any_source, bool any_tag) {
    return runtime_field | (any_source ? 0 : rank_field) | (any_tag ? 0 : user_field);
  }
  static constexpr int source(std::uint64_t tag) {
    return static_cast<int>((tag & rank_field) >> user_bits);
  }
  static constexpr int user_tag(std::uint64_t tag) { return static_cast<int>(tag & user_field); }
  static constexpr MessageInfo describe(std::uint64_t tag, std::size_t length) {
    return {source(tag), user_tag(tag), length};
  }
  static constexpr std::uint16_t runtime(std::uint64_t tag) {
    return static_cast<std::uint16_t>(tag >> (user_bits + rank_bits));
  }
  // Runtime fields no user message carries (a worker serves one runtime, and
  // runtime ids are small), so no user receive or probe can match them: the
  // bytes of the mailboxes' rendezvous, and the answers of answered calls.
  static constexpr std::uint16_t rendezvous_runtime(std::uint16_t runtime) {
    return static_cast<std::uint16_t>(runtime ^ 0xffffu);
  }
  static constexpr std::uint16_t answer_runtime(std::uint16_t runtime) {
    return static_cast<std::uint16_t>(runtime ^ 0xfffeu);
  }
  // Answer tags' sequence field: answered calls count below 2^23; agreed
  // messages set the top bit, so the two never match.
  static constexpr std::uint32_t agreed_bit = std::uint32_t{1} << 23;
  static constexpr std::uint32_t agreed_sequence(std::uint32_t key) {
    return agreed_bit | (key & (agreed_bit - 1));
  }
  // The tag of the answer `callee` sends to the call numbered `sequence`.
  static constexpr std::uint64_t answer_tag(std::uint16_t runtime, int callee,
                                            std::uint32_t sequence) {
    return encode(answer_runtime(runtime), static_cast<std::uint32_t>(callee), sequence);
  }
};

}  // namespace mpidsm::detail
