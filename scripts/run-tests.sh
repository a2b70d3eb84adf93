#!/usr/bin/env bash
# Every test: install what is missing, build, run the unit tests and the
# mpirun tests (1, 2 and 4 ranks; shared memory and tcp), on one node and
# across simulated hosts.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
bash "$here/install-deps.sh"
bash "$here/build.sh"
source "$here/env.sh"
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 300
# The mpirun tests again with ranks on simulated hosts (tcp between them).
cd "$MPIDSM_ROOT"
bash scripts/test-across-hosts.sh
