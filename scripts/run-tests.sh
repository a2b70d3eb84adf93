#!/usr/bin/env bash
# Every test: install what is missing, build, run the unit tests and the
# mpirun tests (1, 2 and 4 ranks; shared memory and tcp).
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
bash "$here/install-deps.sh"
bash "$here/build.sh"
source "$here/env.sh"
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 300
