// Diffs of a page against its twin: the bytes this rank changed.
// Byte-exact on purpose: with several writers to one page, a diff must never
// carry a byte this rank did not change, or it would overwrite another
// writer's byte at the home. This file holds the portable word-at-a-time
// pieces; diff_kernels.hpp the fast paths of each instruction set.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mpidsm::detail {

// Byte i of a loaded word is its bits 8i..8i+7 (the masks below rely on it).
static_assert(std::endian::native == std::endian::little, "mpidsm's diffs assume little-endian");

inline std::uint64_t load_word(const std::byte* at) {
  std::uint64_t word;
  std::memcpy(&word, at, sizeof word);
  return word;
}

// 0x01 in byte i (in memory order) where byte i of the two words differs,
// 0 elsewhere.
inline std::uint64_t changed_byte_flags(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a ^ b;
  x |= x >> 4;
  x |= x >> 2;
  x |= x >> 1;
  return x & 0x0101010101010101ull;
}

// Bit i set when byte i (in memory order) of the two words differs.
inline unsigned changed_bytes(std::uint64_t a, std::uint64_t b) {
  if (a == b) return 0;
  // Gathers bit 8i to bit 56+i (the partial products never overlap).
  return static_cast<unsigned>((changed_byte_flags(a, b) * 0x0102040810204080ull) >> 56);
}

// Set bits of an 8-bit mask, by table: std::popcount is a library call on
// baseline x86-64 (no POPCNT instruction), too slow for once per word.
inline constexpr auto kBitsSet = [] {
  std::array<std::uint8_t, 256> table{};
  for (unsigned v = 0; v < 256; ++v) table[v] = static_cast<std::uint8_t>((v & 1) + table[v >> 1]);
  return table;
}();

// How a page's changes look: maximal runs of changed bytes, and their total.
struct DiffShape {
  std::size_t runs = 0;
  std::size_t bytes = 0;
};

// Calls emit(offset, length) for every maximal run of bytes where `page`
// differs from `twin`, in increasing offset order; returns the run count.
// `size` is a multiple of 8 (pages are).
template <class Emit>
std::size_t for_each_changed_run(const std::byte* twin, const std::byte* page, std::size_t size,
                                 Emit&& emit) {
  std::size_t runs = 0, run_start = 0;
  bool in_run = false;
  for (std::size_t i = 0; i < size; i += 8) {
    const unsigned mask = changed_bytes(load_word(twin + i), load_word(page + i));
    if (mask == (in_run ? 0xFFu : 0u)) continue;  // the run (or the gap) goes on
    for (unsigned k = 0; k < 8; ++k) {
      const bool changed = (mask >> k & 1u) != 0;
      if (changed && !in_run) {
        run_start = i + k;
        in_run = true;
      } else if (!changed && in_run) {
        emit(run_start, i + k - run_start);
        ++runs;
        in_run = false;
      }
    }
  }
  if (in_run) {
    emit(run_start, size - run_start);
    ++runs;
  }
  return runs;
}

}  // namespace mpidsm::detail
