// The pieces every diff kernel (diff_kernels.hpp) shares, free of any
// instruction set: a kernel finds which bytes of a 64-byte block changed with
// its own vector compare, and then stores, counts, packs or unpacks them with
// these. Plain inline code, so a kernel built for AVX2 or NEON inlines it
// under its own target.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "diff.hpp"

namespace mpidsm::detail {

// Pages are compared in blocks of 64 bytes: one bit of a 64-bit mask per
// byte (bit i: byte i of the block changed).
inline constexpr std::size_t kDiffBlock = 64;

template <std::size_t N>
inline void copy_bytes(std::byte* to, const std::byte* from) {
  std::memcpy(to, from, N);  // one load and one store of N bytes
}

// Stores the `length` bytes at `from` to `to` and touches no other byte: a
// run of 2 to 7 bytes takes two stores of one width that overlap in its
// middle (3 bytes: two 2-byte stores), so no run costs a store per byte.
inline void store_run(std::byte* to, const std::byte* from, unsigned length) {
  if (length >= 8) {
    for (unsigned k = 0; k + 8 < length; k += 8) copy_bytes<8>(to + k, from + k);
    copy_bytes<8>(to + length - 8, from + length - 8);
  } else if (length >= 4) {
    copy_bytes<4>(to, from);
    copy_bytes<4>(to + length - 4, from + length - 4);
  } else if (length >= 2) {
    copy_bytes<2>(to, from);
    copy_bytes<2>(to + length - 2, from + length - 2);
  } else {
    *to = *from;
  }
}

// Stores at `to` exactly the bytes of the 64-byte block at `from` that
// `changed` marks, run by run: another writer's bytes between the runs stay
// as they are (the multiple-writer guarantee, diff.hpp). A block changed
// whole is a copy instead (store_block), which this does not handle.
inline void store_changed_runs(std::byte* to, const std::byte* from, std::uint64_t changed) {
  while (changed != 0) {
    const auto start = static_cast<unsigned>(__builtin_ctzll(changed));
    // The bits above the run are zero after the shift, so this ends.
    const auto length = static_cast<unsigned>(__builtin_ctzll(~(changed >> start)));
    store_run(to + start, from + start, length);
    changed &= changed + (changed & (~changed + 1));  // clears the lowest run
  }
}

// As store_changed_runs, a byte per store: cheaper where the runs are short
// (a page of updated floats: runs of 1-3 bytes, each of which would cost
// finding its end and two stores).
inline void store_changed_bytes(std::byte* to, const std::byte* from, std::uint64_t changed) {
  for (; changed != 0; changed &= changed - 1) {
    const auto at = static_cast<unsigned>(__builtin_ctzll(changed));
    to[at] = from[at];
  }
}

// The 64-bit word whose byte i is 0xFF where bit i of an 8-bit mask is set.
inline constexpr auto kByteMasks = [] {
  std::array<std::uint64_t, 256> table{};
  for (unsigned mask = 0; mask < 256; ++mask)
    for (unsigned byte = 0; byte < 8; ++byte)
      if (mask >> byte & 1u) table[mask] |= std::uint64_t{0xFF} << (8 * byte);
  return table;
}();

// The 64-bit word at `to` with the bytes `take` marks (0xFF each) taken
// from `word`: the others are read and written back, so only a holder of
// the page alone may call it (PageAccess::exclusive), or one that takes
// every byte.
inline void blend_word(std::byte* to, std::uint64_t word, std::uint64_t take) {
  const std::uint64_t blended = (load_word(to) & ~take) | (word & take);
  std::memcpy(to, &blended, sizeof blended);
}

// The 64-byte block at `to` with the bytes `changed` marks taken from
// `from`, a word at a time (blend_word: PageAccess::exclusive only).
inline void blend_block_portable(std::byte* to, const std::byte* from, std::uint64_t changed) {
  for (unsigned w = 0; w < 8; ++w) {
    const std::uint64_t take = kByteMasks[changed >> (8 * w) & 0xFFu];
    if (take != 0) blend_word(to + 8 * w, load_word(from + 8 * w), take);
  }
}

// Bits set in a 64-bit word without a POPCNT instruction (baseline x86-64).
inline unsigned popcount_portable(std::uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<unsigned>((x * 0x0101010101010101ull) >> 56);
}

// Byte shuffles that gather the changed bytes of a 64-bit word to its front
// (compact) and spread packed bytes back to their places (expand, for
// byte-masked stores), one
// 8-entry row per 8-bit mask; 0x80 selects nothing (a zero byte), as x86's
// PSHUFB and Arm's TBL both read it.
struct ShuffleTables {
  std::array<std::array<std::uint8_t, 8>, 256> compact{};
  std::array<std::array<std::uint8_t, 8>, 256> expand{};
};
inline constexpr ShuffleTables kShuffles = [] {
  ShuffleTables tables;
  for (unsigned mask = 0; mask < 256; ++mask) {
    unsigned packed = 0;
    for (unsigned byte = 0; byte < 8; ++byte) {
      tables.compact[mask][byte] = 0x80;
      tables.expand[mask][byte] = 0x80;
    }
    for (unsigned byte = 0; byte < 8; ++byte)
      if (mask >> byte & 1u) {
        tables.compact[mask][packed] = static_cast<std::uint8_t>(byte);
        tables.expand[mask][byte] = static_cast<std::uint8_t>(packed++);
      }
  }
  return tables;
}();

// Writes the bytes of `word` that `mask` marks, in order, at `out` (one
// store per changed byte, measured faster than eight branch-free stores per
// word on a page of updated floats); returns how many.
inline unsigned compact_word_portable(std::uint64_t word, unsigned mask, std::byte* out) {
  unsigned kept = 0;
  for (unsigned bits = mask; bits != 0; bits &= bits - 1)
    out[kept++] = static_cast<std::byte>(word >> (8 * static_cast<unsigned>(__builtin_ctz(bits))));
  return kept;
}

// The word whose `mask` bytes come, in order, from the bytes at `in` (as
// many as the mask has bits); its other bytes are zero.
inline std::uint64_t expand_word_portable(const std::byte* in, unsigned mask) {
  std::uint64_t word = 0;
  for (unsigned bits = mask; bits != 0; bits &= bits - 1)
    word |= std::uint64_t{static_cast<std::uint8_t>(*in++)}
            << (8 * static_cast<unsigned>(__builtin_ctz(bits)));
  return word;
}

// Stores the next bytes at `in` to the bytes of the word at `to` that
// `mask` marks, one by one; returns where the packed bytes go on.
inline const std::byte* scatter_word(std::byte* to, const std::byte* in, unsigned mask) {
  if (mask == 0xFFu) {
    copy_bytes<8>(to, in);
    return in + 8;
  }
  for (unsigned bits = mask; bits != 0; bits &= bits - 1)
    to[static_cast<unsigned>(__builtin_ctz(bits))] = *in++;
  return in;
}

}  // namespace mpidsm::detail
