#!/usr/bin/env bash
# The main job: install what is missing, build, describe the machine, run
# the flagship example (matmul on the coherent DSM against its MPI-native
# twin) and the JIAJIA applications with 2 ranks, then the latency suite.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
bash "$here/install-deps.sh"
bash "$here/build.sh"
source "$here/env.sh"
"$BUILD_DIR/src/tools/mpidsm_info"
echo
"${MPIRUN[@]}" -np 2 "$BUILD_DIR/examples/matmul"
echo
# The classic applications written as JIAJIA programs, at their default
# sizes, each against its MPI-native twin.
for app in jacobi lu is tsp water; do
  "${MPIRUN[@]}" -np 2 "$BUILD_DIR/examples/jia/jia_$app"
  echo
done
# The latency half of the benchmark suite: mpidsm and MPI side by side.
bash "$MPIDSM_ROOT/benchmarks/run-suite" --latency
