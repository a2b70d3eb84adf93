// Diff kernels: comparing a page with its twin and moving the bytes that
// changed, one kernel per instruction set (AVX-512BW, AVX2, NEON, plain
// 64-bit words), chosen at run time by DsmSettings::diff_kernel
// (MPIDSM_DIFF_KERNEL) or, by default, the fastest this CPU runs. Every
// kernel is byte-exact (diff.hpp says why it must be) and they agree bit for
// bit, so ranks on different CPUs exchange diffs freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "diff.hpp"
#include "mpidsm/config.hpp"

namespace mpidsm::detail {

// Who else may store into a home's page while a kernel stores a diff into
// it. `shared`: anyone (another writer's diff, the home's application), so
// exactly the changed bytes are written. `exclusive`: nobody (the caller
// holds the page's guard and the home's view of it is read-only,
// master_guards.hpp), so a kernel without a byte-masked store may read the
// unchanged bytes of a block and write them back with the changed ones, a
// vector at a time, instead of a store per run or byte.
enum class PageAccess : bool { shared, exclusive };

// A kernel's operations. `size` is a page size (a multiple of 64).
struct DiffKernelOps {
  DiffKernel kind;
  // Stores at `home` the bytes where `page` differs from `twin`; under
  // PageAccess::shared no other byte is written.
  DiffShape (*store)(const std::byte* twin, const std::byte* page, std::byte* home,
                     std::size_t size, PageAccess access);
  // The shape of the changes, writing nothing.
  DiffShape (*measure)(const std::byte* twin, const std::byte* page, std::size_t size);
  // Writes one mask byte per 64-bit word at `masks` (bit i: byte i changed)
  // and the changed bytes, in page order, at `packed`; returns how many.
  // May write up to kPackSlack bytes past them.
  std::size_t (*pack)(const std::byte* twin, const std::byte* page, std::size_t size,
                      std::byte* masks, std::byte* packed);
  // Stores the `packed_bytes` bytes at `packed` into `target` where `masks`
  // says, changing no other byte (and, under PageAccess::shared, writing
  // none). False when the masks name more or fewer bytes than there are
  // (nothing past the first short word is written).
  bool (*unpack)(const std::byte* masks, const std::byte* packed, std::size_t packed_bytes,
                 std::byte* target, std::size_t size, PageAccess access);
};

inline constexpr std::size_t kPackSlack = 8;

// Whether this build on this CPU runs `kind` (automatic: always).
bool cpu_runs(DiffKernel kind);
// The kernel `choice` names (automatic: the fastest this CPU runs), or
// nullptr when cpu_runs(choice) is false.
const DiffKernelOps* find_diff_kernel(DiffKernel choice);
// The kernels this CPU runs, as MPIDSM_DIFF_KERNEL spells them ("avx2, words").
std::string kernels_this_cpu_runs();

// Each kernel, where its instruction set exists in this build.
const DiffKernelOps& words_diff_kernel();
#if defined(__x86_64__)
const DiffKernelOps& avx2_diff_kernel();
const DiffKernelOps& avx512_diff_kernel();
#endif
#if defined(__aarch64__)
const DiffKernelOps& neon_diff_kernel();
#endif

}  // namespace mpidsm::detail
