#!/usr/bin/env bash
# Every test: install what is missing, build, print what this machine's
# kernel charges the DSM, run the unit tests and the mpirun tests (1, 2 and 4
# ranks; shared memory and tcp) on one node and across simulated hosts, then
# under AddressSanitizer and UndefinedBehaviorSanitizer. Each stage's time is
# printed at the end.
#
# MPIDSM_TESTS chooses how much runs under the sanitizers:
#   ci (default)  the unit tests and the 2-rank base variant of every mpirun
#                 test: the set CI runs, about 35 minutes on 2 cores from a
#                 fresh clone (docs/testing.md has the stages' times)
#   nightly       every test under ASan+UBSan (about 30 minutes more), then
#                 the threaded DSM tests under ThreadSanitizer
# MPIDSM_SANITIZERS=off skips the sanitizers for a quick local run.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
tests=${MPIDSM_TESTS:-ci}
if [[ $tests != ci && $tests != nightly ]]; then
  echo "run-tests.sh: MPIDSM_TESTS must be ci or nightly, not '$tests'" >&2
  exit 2
fi
stages=()
stage_started=$SECONDS
# end_stage NAME: records how long the stage that just ended took.
end_stage() {
  stages+=("$(printf '%-28s %5d s' "$1" $((SECONDS - stage_started)))")
  stage_started=$SECONDS
}
print_stages() {
  echo "=== stage times (MPIDSM_TESTS=$tests) ==="
  printf '  %s\n' "${stages[@]}"
}
trap print_stages EXIT
# A cross compiler and QEMU run the diff kernels' NEON path too.
bash "$here/install-deps.sh" g++-aarch64-linux-gnu qemu-user
end_stage "install"
bash "$here/build.sh"
end_stage "build"
source "$here/env.sh"
# What this machine's kernel charges: the first thing to compare when a
# figure or a test's duration differs between two machines.
"$BUILD_DIR/src/tools/mpidsm_info" --kernel
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 300
end_stage "one-node ctest"
# The mpirun tests again with ranks on simulated hosts (tcp between them).
cd "$MPIDSM_ROOT"
bash scripts/test-across-hosts.sh
end_stage "across hosts"
if [[ ${MPIDSM_SANITIZERS:-on} != off ]]; then
  if [[ $tests == nightly ]]; then
    bash scripts/run-sanitizers.sh
    end_stage "ASan+UBSan, every test"
    bash scripts/run-sanitizers.sh --thread
    end_stage "ThreadSanitizer"
  else
    bash scripts/run-sanitizers.sh --ci
    end_stage "ASan+UBSan, CI set"
  fi
fi
