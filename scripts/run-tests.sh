#!/usr/bin/env bash
# Every test: install what is missing, build, run the unit tests and the
# mpirun tests (1, 2 and 4 ranks; shared memory and tcp), on one node and
# across simulated hosts, then the whole suite again under AddressSanitizer
# and UndefinedBehaviorSanitizer (about 4 more minutes; MPIDSM_SANITIZERS=off
# skips it for a quick local run).
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
# A cross compiler and QEMU run the diff kernels' NEON path too.
bash "$here/install-deps.sh" g++-aarch64-linux-gnu qemu-user
bash "$here/build.sh"
source "$here/env.sh"
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 300
# The mpirun tests again with ranks on simulated hosts (tcp between them).
cd "$MPIDSM_ROOT"
bash scripts/test-across-hosts.sh
# The suite under ASan+UBSan (ThreadSanitizer: scripts/run-sanitizers.sh
# --thread, not here: its reports depend on Open MPI's and UCX's timing).
if [[ ${MPIDSM_SANITIZERS:-on} != off ]]; then
  bash scripts/run-sanitizers.sh
fi
