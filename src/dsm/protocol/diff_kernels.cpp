// Which diff kernels this CPU runs, and the default: the widest.
#include "diff_kernels.hpp"

namespace mpidsm::detail {

bool cpu_runs(DiffKernel kind) {
  switch (kind) {
    case DiffKernel::automatic:
    case DiffKernel::words:
      return true;
#if defined(__x86_64__)
    case DiffKernel::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("popcnt");
    case DiffKernel::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             cpu_runs(DiffKernel::avx2);
#endif
#if defined(__aarch64__)
    case DiffKernel::neon:
      return true;
#endif
    default:
      return false;
  }
}

const DiffKernelOps* find_diff_kernel(DiffKernel choice) {
  if (choice == DiffKernel::automatic) {
    for (DiffKernel widest : {DiffKernel::avx512, DiffKernel::avx2, DiffKernel::neon})
      if (cpu_runs(widest)) return find_diff_kernel(widest);
    return &words_diff_kernel();
  }
  if (!cpu_runs(choice)) return nullptr;
  switch (choice) {
#if defined(__x86_64__)
    case DiffKernel::avx512:
      return &avx512_diff_kernel();
    case DiffKernel::avx2:
      return &avx2_diff_kernel();
#endif
#if defined(__aarch64__)
    case DiffKernel::neon:
      return &neon_diff_kernel();
#endif
    default:
      return &words_diff_kernel();
  }
}

std::string kernels_this_cpu_runs() {
  std::string list;
  for (DiffKernel kind :
       {DiffKernel::avx512, DiffKernel::avx2, DiffKernel::neon, DiffKernel::words})
    if (cpu_runs(kind)) list += std::string(list.empty() ? "" : ", ") + to_string(kind);
  return list;
}

}  // namespace mpidsm::detail
