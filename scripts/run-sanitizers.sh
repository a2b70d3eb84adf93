#!/usr/bin/env bash
# Every test under AddressSanitizer and UndefinedBehaviorSanitizer: a Debug
# build in $SANITIZE_BUILD_DIR (default build-sanitize/), then ctest.
#
# The DSM takes SIGSEGV for its page faults, so ASan must leave that signal
# to it (handle_segv=0, allow_user_segv_handler=1). Leak checking is off:
# Open MPI and UCX keep allocations until exit by design. UBSan stops at the
# first report. package_consumer is left out: it builds a project outside
# this tree without the sanitizers, which cannot load an ASan library.
# Takes about twice the time of scripts/run-tests.sh.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
bash "$here/install-deps.sh"
source "$here/env.sh"
build=${SANITIZE_BUILD_DIR:-$MPIDSM_ROOT/build-sanitize}
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S "$MPIDSM_ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
  -DMPIDSM_BUILD_BENCHMARKS=OFF -DMPIDSM_BUILD_EXAMPLES=OFF
cmake --build "$build" -j "$(nproc)"
export ASAN_OPTIONS=handle_segv=0:allow_user_segv_handler=1:detect_leaks=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
ctest --output-on-failure --timeout 900 -E '^package_consumer$'
