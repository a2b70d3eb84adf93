// The diff kernel of 64-bit Arm CPUs, where NEON is always present: 16-byte
// compares folded into a 64-bit mask by pairwise adds, TBL to pack words and
// spread them out. NEON has no byte-masked store: a page held alone takes
// 16-byte bit selects, any other is stored run by run or byte by byte.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "diff_blocks.hpp"
#include "diff_kernels.hpp"

#define MPIDSM_DIFF_TARGET  // NEON is part of the AArch64 baseline

namespace mpidsm::detail {
namespace {

struct Neon {
  static constexpr bool kMaskedStore = false;
  static std::uint64_t changed(const std::byte* twin, const std::byte* page) {
    // Byte i of each 16-byte compare keeps only bit (i mod 8); three rounds
    // of pairwise adds then sum each group of 8 bytes into one mask byte.
    static constexpr std::uint8_t kWeights[16] = {1, 2, 4, 8, 16, 32, 64, 128,
                                                  1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t weights = vld1q_u8(kWeights);
    auto differs = [&](std::size_t at) {
      const auto* a = reinterpret_cast<const std::uint8_t*>(twin + at);
      const auto* b = reinterpret_cast<const std::uint8_t*>(page + at);
      return vandq_u8(vmvnq_u8(vceqq_u8(vld1q_u8(a), vld1q_u8(b))), weights);
    };
    const uint8x16_t low = vpaddq_u8(differs(0), differs(16));
    const uint8x16_t high = vpaddq_u8(differs(32), differs(48));
    const uint8x16_t sums = vpaddq_u8(low, high);
    return vgetq_lane_u64(vreinterpretq_u64_u8(vpaddq_u8(sums, sums)), 0);
  }
  static unsigned popcount(std::uint64_t x) {
    return static_cast<unsigned>(vaddv_u8(vcnt_u8(vcreate_u8(x))));
  }
  static unsigned compact(std::uint64_t word, unsigned mask, std::byte* out) {
    const uint8x8_t row = vld1_u8(kShuffles.compact[mask].data());
    vst1_u8(reinterpret_cast<std::uint8_t*>(out), vtbl1_u8(vcreate_u8(word), row));
    return kBitsSet[mask];
  }
  static std::uint64_t expand(const std::byte* in, unsigned mask) {
    const uint8x8_t row = vld1_u8(kShuffles.expand[mask].data());
    return vget_lane_u64(
        vreinterpret_u64_u8(vtbl1_u8(vld1_u8(reinterpret_cast<const std::uint8_t*>(in)), row)), 0);
  }
  static void blend(std::byte* to, const std::byte* from, std::uint64_t changed) {
    for (unsigned q = 0; q < 4; ++q) {
      auto* at = reinterpret_cast<std::uint8_t*>(to + 16 * q);
      const uint8x16_t mask = vreinterpretq_u8_u64(
          vcombine_u64(vcreate_u64(kByteMasks[changed >> (16 * q) & 0xFFu]),
                       vcreate_u64(kByteMasks[changed >> (16 * q + 8) & 0xFFu])));
      vst1q_u8(at, vbslq_u8(mask, vld1q_u8(reinterpret_cast<const std::uint8_t*>(from + 16 * q)),
                            vld1q_u8(at)));
    }
  }
};

#include "diff_kernel_body.hpp"

}  // namespace

const DiffKernelOps& neon_diff_kernel() {
  static constexpr DiffKernelOps ops = kernel_ops<Neon>(DiffKernel::neon);
  return ops;
}

}  // namespace mpidsm::detail
#endif
