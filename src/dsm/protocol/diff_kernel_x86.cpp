// The diff kernels of x86-64 CPUs:
//   avx2: most CPUs since 2013, AMD's before Zen 4 included. 32-byte
//     compares, PSHUFB to pack words and spread them out. AVX2 has no
//     byte-masked store: a page held alone takes 32-byte blends, any other
//     is stored run by run or byte by byte (diff_kernel_body.hpp).
//   avx512: CPUs with AVX-512BW. 64-byte compares and byte-masked stores
//     (masked-off bytes are not written at all, not read and written back,
//     so other writers' bytes stay intact); packing and spreading as
//     AVX2's.
#if defined(__x86_64__)
#include <immintrin.h>

#include "diff_blocks.hpp"
#include "diff_kernels.hpp"

namespace mpidsm::detail {
namespace {

#define MPIDSM_AVX2 __attribute__((target("avx2,bmi,popcnt")))
#define MPIDSM_AVX512 __attribute__((target("avx512f,avx512bw,avx2,bmi,popcnt")))

struct Avx2 {
  static constexpr bool kMaskedStore = false;
  MPIDSM_AVX2 static std::uint64_t changed(const std::byte* twin, const std::byte* page) {
    auto equal = [&](std::size_t at) MPIDSM_AVX2 {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(twin + at));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(page + at));
      return static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b)));
    };
    return ~(std::uint64_t{equal(0)} | std::uint64_t{equal(32)} << 32);
  }
  MPIDSM_AVX2 static unsigned popcount(std::uint64_t x) {
    return static_cast<unsigned>(_mm_popcnt_u64(x));
  }
  MPIDSM_AVX2 static unsigned compact(std::uint64_t word, unsigned mask, std::byte* out) {
    const __m128i row = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&kShuffles.compact[mask]));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out),
                     _mm_shuffle_epi8(_mm_cvtsi64_si128(static_cast<long long>(word)), row));
    return kBitsSet[mask];
  }
  MPIDSM_AVX2 static std::uint64_t expand(const std::byte* in, unsigned mask) {
    const __m128i row = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&kShuffles.expand[mask]));
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in));
    return static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_shuffle_epi8(bytes, row)));
  }
  // 0xFF in byte i where bit i of `bits` is set: each byte takes the mask
  // byte holding its bit, then keeps only that bit.
  MPIDSM_AVX2 static __m256i byte_mask(std::uint32_t bits) {
    const __m256i spread =
        _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                            _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2,
                                             2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  }
  MPIDSM_AVX2 static void blend(std::byte* to, const std::byte* from, std::uint64_t changed) {
    for (unsigned half = 0; half < 2; ++half) {
      auto* at = reinterpret_cast<__m256i*>(to + 32 * half);
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + 32 * half));
      const auto bits = static_cast<std::uint32_t>(changed >> (32 * half));
      _mm256_storeu_si256(at, _mm256_blendv_epi8(_mm256_loadu_si256(at), bytes, byte_mask(bits)));
    }
  }
};

struct Avx512 : Avx2 {
  static constexpr bool kMaskedStore = true;
  MPIDSM_AVX512 static std::uint64_t changed(const std::byte* twin, const std::byte* page) {
    return _mm512_cmpneq_epi8_mask(_mm512_loadu_si512(twin), _mm512_loadu_si512(page));
  }
  MPIDSM_AVX512 static void store(std::byte* to, const std::byte* from, std::uint64_t changed) {
    _mm512_mask_storeu_epi8(to, changed, _mm512_loadu_si512(from));
  }
};

namespace with_avx2 {
#define MPIDSM_DIFF_TARGET MPIDSM_AVX2
#include "diff_kernel_body.hpp"
#undef MPIDSM_DIFF_TARGET
}  // namespace with_avx2

namespace with_avx512 {
#define MPIDSM_DIFF_TARGET MPIDSM_AVX512
#include "diff_kernel_body.hpp"
#undef MPIDSM_DIFF_TARGET
}  // namespace with_avx512

// A page held alone (PageAccess::exclusive), with AVX2: each block's
// compare result is already the blend's byte mask, so the changed bytes go
// out with the vectors just compared, not by spreading the block's bit mask
// back into bytes (Avx2::blend, which unpacking needs). On an AMD EPYC
// (Zen, AVX2 only) 256 pages of updated floats took 94 us through the bit
// masks against 68 us for 256 pages rewritten whole.
MPIDSM_AVX2 DiffShape store_avx2_alone(const std::byte* twin, const std::byte* page,
                                       std::byte* home, std::size_t size) {
  DiffShape shape;
  std::uint64_t previous_last = 0;
  for (std::size_t i = 0; i < size; i += kDiffBlock) {
    __m256i now[2], equal[2];
    std::uint64_t same = 0;
    for (unsigned half = 0; half < 2; ++half) {
      const std::size_t at = i + 32 * half;
      now[half] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(page + at));
      equal[half] = _mm256_cmpeq_epi8(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(twin + at)), now[half]);
      same |= std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(equal[half]))}
              << (32 * half);
    }
    const std::uint64_t changed = ~same;
    with_avx2::add_block_shape<Avx2>(shape, changed, previous_last);
    if (changed == 0) continue;
    for (unsigned half = 0; half < 2; ++half) {
      auto* to = reinterpret_cast<__m256i*>(home + i + 32 * half);
      _mm256_storeu_si256(to,
                          changed == ~std::uint64_t{0}
                              ? now[half]
                              : _mm256_blendv_epi8(now[half], _mm256_loadu_si256(to), equal[half]));
    }
  }
  return shape;
}

DiffShape store_avx2(const std::byte* twin, const std::byte* page, std::byte* home,
                     std::size_t size, PageAccess access) {
  if (access == PageAccess::exclusive) return store_avx2_alone(twin, page, home, size);
  return with_avx2::store_kernel<Avx2>(twin, page, home, size, access);
}

}  // namespace

const DiffKernelOps& avx2_diff_kernel() {
  static constexpr DiffKernelOps ops = [] {
    DiffKernelOps avx2 = with_avx2::kernel_ops<Avx2>(DiffKernel::avx2);
    avx2.store = &store_avx2;
    return avx2;
  }();
  return ops;
}

const DiffKernelOps& avx512_diff_kernel() {
  static constexpr DiffKernelOps ops = with_avx512::kernel_ops<Avx512>(DiffKernel::avx512);
  return ops;
}

}  // namespace mpidsm::detail
#endif
