// Writing a diff into a home mapped here. A page of updated floats changes
// in hundreds of runs of 1-3 bytes; storing them byte by byte costs a
// mispredicted branch or two per word. CPUs with AVX-512BW compare and store
// 64 bytes at a time under a byte mask: masked-off bytes are not written at
// all (not read and written back), so other writers' bytes stay intact.
#include "diff.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mpidsm::detail {

DiffShape store_changed_bytes_wordwise(const std::byte* twin, const std::byte* page,
                                       std::byte* home, std::size_t size) {
  ShapeCounter counter;
  for (std::size_t i = 0; i < size; i += 8) {
    const std::uint64_t word = load_word(page + i);
    const unsigned mask = changed_bytes(load_word(twin + i), word);
    if (mask == 0xFFu) {
      std::memcpy(home + i, &word, sizeof word);
    } else {
      for (unsigned bits = mask; bits != 0; bits &= bits - 1) {
        const auto k = static_cast<std::size_t>(std::countr_zero(bits));
        home[i + k] = page[i + k];
      }
    }
    counter.add(mask);
  }
  return counter.shape();
}

namespace {

#if defined(__x86_64__)
// `size` is a multiple of 64 (a page).
__attribute__((target("avx512f,avx512bw,popcnt"))) DiffShape store_masked_avx512(
    const std::byte* twin, const std::byte* page, std::byte* home, std::size_t size) {
  DiffShape shape;
  std::uint64_t previous_last = 0;  // bit 0: the previous block's last byte changed
  for (std::size_t i = 0; i < size; i += 64) {
    const __m512i mine = _mm512_loadu_si512(page + i);
    const __mmask64 changed = _mm512_cmpneq_epi8_mask(_mm512_loadu_si512(twin + i), mine);
    if (changed == 0) {
      previous_last = 0;
      continue;
    }
    _mm512_mask_storeu_epi8(home + i, changed, mine);
    shape.bytes += static_cast<std::size_t>(_mm_popcnt_u64(changed));
    shape.runs +=
        static_cast<std::size_t>(_mm_popcnt_u64(changed & ~(changed << 1 | previous_last)));
    previous_last = changed >> 63;
  }
  return shape;
}
#endif

using StoreFunction = DiffShape (*)(const std::byte*, const std::byte*, std::byte*, std::size_t);

StoreFunction choose_store() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512bw")) return &store_masked_avx512;
#endif
  return &store_changed_bytes_wordwise;
}

const StoreFunction store_function = choose_store();

}  // namespace

DiffShape store_changed_bytes(const std::byte* twin, const std::byte* page, std::byte* home,
                              std::size_t size) {
  return store_function(twin, page, home, size);
}

}  // namespace mpidsm::detail
