#!/usr/bin/env bash
# Every test under AddressSanitizer and UndefinedBehaviorSanitizer: a Debug
# build in $SANITIZE_BUILD_DIR (default build-sanitize/), then ctest.
# With --ci: only the unit tests and the 2-rank base variant of each mpirun
# test (the CI set of scripts/run-tests.sh; the whole suite is its nightly).
# With --thread: ThreadSanitizer on the threaded DSM tests instead (build in
# build-tsan/), with UCX's memory hooks off (libucm's madvise hook crashes in
# a thread TSan is tearing down) and scripts/tsan.supp for Open MPI.
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

# configure <build dir> <build type> <sanitizer flags>: the library and the
# tests built with the flags, no benchmarks or examples.
configure() {
  cmake -S "$MPIDSM_ROOT" -B "$1" -DCMAKE_BUILD_TYPE="$2" \
    -DCMAKE_C_FLAGS="$3" -DCMAKE_CXX_FLAGS="$3" \
    -DCMAKE_EXE_LINKER_FLAGS="$3" -DCMAKE_SHARED_LINKER_FLAGS="$3" \
    -DMPIDSM_BUILD_BENCHMARKS=OFF -DMPIDSM_BUILD_EXAMPLES=OFF
}

if [[ ${1:-} == --thread ]]; then
  build=${SANITIZE_BUILD_DIR:-$MPIDSM_ROOT/build-tsan}
  configure "$build" RelWithDebInfo "-fsanitize=thread -Wno-tsan"
  tests=(dsm_cache_test dsm_stress_test dsm_soundness_test)
  cmake --build "$build" -j "$(nproc)" --target "${tests[@]}"
  export UCX_MEM_EVENTS=no
  # Open MPI as users run it: its osc/ucx component (the project's setting)
  # brings a second UCX whose memory hooks crash under TSan.
  unset OMPI_MCA_osc OMPI_MCA_pml OMPI_MCA_btl
  # history_size=7: the longest access history, so the stack of an access
  # made inside UCX long before is restored and its suppression applies.
  export TSAN_OPTIONS="report_signal_unsafe=1 halt_on_error=0 history_size=7 suppressions=$MPIDSM_ROOT/scripts/tsan.supp"
  # The crash tests run in forked children, where TSan's own signal handling
  # changes how they end: they are left out here.
  filter="-*InstructionFetch*:*InsideTheEngine*:*AfterFork*:*OutsideTheProtocol*"
  status=0
  for variant in "" "UCX_TLS=tcp,self" "MPIDSM_DIRECT_ACCESS=off"; do
    for test in "${tests[@]}"; do
      echo "== $test ${variant:-(shared memory)}"
      env $variant "${MPIRUN[@]}" -x UCX_MEM_EVENTS -x TSAN_OPTIONS -np 2 \
        "$build/mpi_tests/$test" --gtest_filter="$filter" || status=1
    done
  done
  exit $status
fi
build=${SANITIZE_BUILD_DIR:-$MPIDSM_ROOT/build-sanitize}
configure "$build" Debug \
  "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake --build "$build" -j "$(nproc)"
export ASAN_OPTIONS=handle_segv=0:allow_user_segv_handler=1:detect_leaks=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
if [[ ${1:-} == --ci ]]; then
  # Unit tests have no ".np" in their names; mpirun tests end in .npN or
  # .npN.<variant>: the CI set keeps each test's plain 2-rank run.
  ctest --output-on-failure --timeout 900 -E '^package_consumer$|\.np([013-9]|[0-9][0-9])|\.np2\.'
else
  ctest --output-on-failure --timeout 900 -E '^package_consumer$'
fi
