// The diff kernel for any CPU: 64-bit word compares, no vector instruction
// and no POPCNT (baseline x86-64 lacks it), no branch per byte.
#include "diff_blocks.hpp"
#include "diff_kernels.hpp"

#define MPIDSM_DIFF_TARGET  // the default target

namespace mpidsm::detail {
namespace {

struct Words {
  static constexpr bool kMaskedStore = false;
  static std::uint64_t changed(const std::byte* twin, const std::byte* page) {
    std::uint64_t mask = 0;
    for (unsigned w = 0; w < 8; ++w)
      mask |= std::uint64_t{changed_bytes(load_word(twin + 8 * w), load_word(page + 8 * w))}
              << (8 * w);
    return mask;
  }
  static unsigned popcount(std::uint64_t x) { return popcount_portable(x); }
  static unsigned compact(std::uint64_t word, unsigned mask, std::byte* out) {
    return compact_word_portable(word, mask, out);
  }
  static std::uint64_t expand(const std::byte* in, unsigned mask) {
    return expand_word_portable(in, mask);
  }
  static void blend(std::byte* to, const std::byte* from, std::uint64_t changed) {
    blend_block_portable(to, from, changed);
  }
};

#include "diff_kernel_body.hpp"

}  // namespace

const DiffKernelOps& words_diff_kernel() {
  static constexpr DiffKernelOps ops = kernel_ops<Words>(DiffKernel::words);
  return ops;
}

}  // namespace mpidsm::detail
