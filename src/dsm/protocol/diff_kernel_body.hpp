// The four operations of a diff kernel (diff_kernels.hpp), written once over
// an instruction set. Each diff_kernel_<set>.cpp includes this file inside an
// anonymous namespace, after it defines MPIDSM_DIFF_TARGET (its target
// attribute) and a struct with:
//   changed(twin, page): 64-bit mask of the bytes of a 64-byte block that differ
//   popcount(mask), compact(word, mask, out): as the *_portable functions
//     of diff_blocks.hpp do
//   expand(in, mask): the word whose `mask` bytes come, in order, from the
//     8 bytes at `in` (unpacking spreads a block's packed bytes out with it)
//   kMaskedStore: whether the set has a byte-masked store; then
//     store(to, from, changed) writes exactly the `changed` bytes of the
//     block at `from` to `to` with one; otherwise blend(to, from, changed)
//     writes the block with the `changed` bytes taken from `from` and the
//     others read back from `to` (PageAccess::exclusive only)
// No include guard: every kernel compiles its own copy under its own target,
// with internal linkage, so no code of one instruction set can stand in for
// another's at link time.

template <class Isa>
MPIDSM_DIFF_TARGET inline void add_block_shape(DiffShape& shape, std::uint64_t changed,
                                               std::uint64_t& previous_last) {
  shape.bytes += Isa::popcount(changed);
  shape.runs += Isa::popcount(changed & ~(changed << 1 | previous_last));  // runs starting here
  previous_last = changed >> 63;
}

// The changed bytes of a spread-out block, with whole vectors: one masked
// store, or a blend where no other writer may store meanwhile.
template <class Isa>
MPIDSM_DIFF_TARGET inline void write_block(std::byte* to, const std::byte* from,
                                           std::uint64_t changed) {
  if constexpr (Isa::kMaskedStore)
    Isa::store(to, from, changed);
  else
    Isa::blend(to, from, changed);
}

// The changed bytes of a block: a copy when all changed; whole vectors
// where the set has a masked store or the page is held alone. Otherwise
// exactly the changed bytes: a byte per store where the runs average 2
// bytes or fewer (updated floats: with AVX2, 256 such pages took 410-490 us
// a barrier this way against 870 run by run), else run by run.
template <class Isa>
MPIDSM_DIFF_TARGET inline void store_block(std::byte* to, const std::byte* from,
                                           std::uint64_t changed, PageAccess access) {
  if (changed == ~std::uint64_t{0})
    copy_bytes<kDiffBlock>(to, from);
  else if (Isa::kMaskedStore || access == PageAccess::exclusive)
    write_block<Isa>(to, from, changed);
  else if (Isa::popcount(changed & ~(changed << 1)) * 2 >= Isa::popcount(changed))
    store_changed_bytes(to, from, changed);
  else
    store_changed_runs(to, from, changed);
}

template <class Isa>
MPIDSM_DIFF_TARGET DiffShape store_kernel(const std::byte* twin, const std::byte* page,
                                          std::byte* home, std::size_t size, PageAccess access) {
  DiffShape shape;
  std::uint64_t previous_last = 0;
  for (std::size_t i = 0; i < size; i += kDiffBlock) {
    const std::uint64_t changed = Isa::changed(twin + i, page + i);
    if (changed != 0) store_block<Isa>(home + i, page + i, changed, access);
    add_block_shape<Isa>(shape, changed, previous_last);
  }
  return shape;
}

template <class Isa>
MPIDSM_DIFF_TARGET DiffShape measure_kernel(const std::byte* twin, const std::byte* page,
                                            std::size_t size) {
  DiffShape shape;
  std::uint64_t previous_last = 0;
  for (std::size_t i = 0; i < size; i += kDiffBlock)
    add_block_shape<Isa>(shape, Isa::changed(twin + i, page + i), previous_last);
  return shape;
}

template <class Isa>
MPIDSM_DIFF_TARGET std::size_t pack_kernel(const std::byte* twin, const std::byte* page,
                                           std::size_t size, std::byte* masks, std::byte* packed) {
  std::byte* out = packed;
  for (std::size_t i = 0; i < size; i += kDiffBlock) {
    const std::uint64_t changed = Isa::changed(twin + i, page + i);
    std::memcpy(masks + i / 8, &changed, sizeof changed);  // byte w: word w's mask
    if (changed == 0) continue;
    if (changed == ~std::uint64_t{0}) {
      copy_bytes<kDiffBlock>(out, page + i);
      out += kDiffBlock;
      continue;
    }
    for (unsigned w = 0; w < 8; ++w)
      out += Isa::compact(load_word(page + i + 8 * w),
                          static_cast<unsigned>(changed >> (8 * w)) & 0xFFu, out);
  }
  return static_cast<std::size_t>(out - packed);
}

template <class Isa>
MPIDSM_DIFF_TARGET bool unpack_kernel(const std::byte* masks, const std::byte* packed,
                                      std::size_t packed_bytes, std::byte* target, std::size_t size,
                                      PageAccess access) {
  const std::byte* in = packed;
  const std::byte* const end = packed + packed_bytes;
  for (std::size_t i = 0; i < size; i += kDiffBlock) {
    std::uint64_t changed;
    std::memcpy(&changed, masks + i / 8, sizeof changed);
    if (changed == 0) continue;
    if (Isa::popcount(changed) > static_cast<std::size_t>(end - in)) return false;
    if (changed == ~std::uint64_t{0}) {
      copy_bytes<kDiffBlock>(target + i, in);
      in += kDiffBlock;
    } else if (Isa::kMaskedStore || access == PageAccess::exclusive) {
      // Spread the block's bytes out, then store it with whole vectors.
      alignas(kDiffBlock) std::byte block[kDiffBlock];
      std::byte last_word[8] = {};  // the final bytes, so expand never reads past the message
      for (unsigned w = 0; w < 8; ++w) {
        const unsigned mask = static_cast<unsigned>(changed >> (8 * w)) & 0xFFu;
        const std::byte* from = in;
        if (end - in < 8) {
          std::memcpy(last_word, in, static_cast<std::size_t>(end - in));
          from = last_word;
        }
        const std::uint64_t word = Isa::expand(from, mask);
        std::memcpy(block + 8 * w, &word, sizeof word);
        in += kBitsSet[mask];
      }
      write_block<Isa>(target + i, block, changed);
    } else {
      // Exactly the changed bytes: a byte per store beats spreading the
      // bytes out and storing them run by run (measured on updated floats).
      for (unsigned w = 0; w < 8; ++w)
        in =
            scatter_word(target + i + 8 * w, in, static_cast<unsigned>(changed >> (8 * w)) & 0xFFu);
    }
  }
  return in == end;
}

template <class Isa>
constexpr DiffKernelOps kernel_ops(DiffKernel kind) {
  return {kind, &store_kernel<Isa>, &measure_kernel<Isa>, &pack_kernel<Isa>, &unpack_kernel<Isa>};
}
