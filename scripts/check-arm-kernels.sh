#!/usr/bin/env bash
# The diff kernels' unit tests built for 64-bit Arm and run under QEMU's user
# mode, so that an x86-64 CI runs the NEON kernel (and the portable one on a
# second architecture) against the same byte-exact checks.
#   check-arm-kernels.sh <aarch64 g++> <qemu-aarch64> <scratch dir> <build include dir>
set -euo pipefail
cxx=$1 qemu=$2 scratch=$3 generated=$4
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gtest=/usr/src/googletest/googletest
mkdir -p "$scratch"
flags=(-std=c++20 -O2 -Wall -Wextra -Werror -pthread -I"$root/include" -I"$root/src" -I"$generated")
# GoogleTest built once per build tree: it is most of the compile time.
if [[ ! -f $scratch/gtest.a ]]; then
  "$cxx" -std=c++20 -O2 -pthread -I"$gtest/include" -I"$gtest" -c "$gtest/src/gtest-all.cc" \
    -o "$scratch/gtest-all.o"
  "$cxx" -std=c++20 -O2 -I"$gtest/include" -c "$gtest/src/gtest_main.cc" -o "$scratch/gtest_main.o"
  ar rcs "$scratch/gtest.a.tmp" "$scratch/gtest-all.o" "$scratch/gtest_main.o"
  mv "$scratch/gtest.a.tmp" "$scratch/gtest.a"
fi
"$cxx" "${flags[@]}" -isystem "$gtest/include" -static -o "$scratch/diff_kernels_test" \
  "$root/tests/dsm/diff_encoding_test.cpp" \
  "$root"/src/dsm/protocol/diff_kernel*.cpp "$root/src/dsm/protocol/diff_message.cpp" \
  "$root/src/runtime/config.cpp" "$root/src/transport/progress_modes.cpp" \
  "$root/src/common/error.cpp" "$scratch/gtest.a"
output=$("$qemu" "$scratch/diff_kernels_test" 2>&1) || { echo "$output"; exit 1; }
echo "$output" | tail -3
# The NEON kernel must have been among those tested.
grep -q "EveryKernel.RoundTripsEveryShapeOfChange/neon" <<<"$output" || {
  echo "the NEON kernel did not run"
  exit 1
}
