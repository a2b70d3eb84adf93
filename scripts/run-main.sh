#!/usr/bin/env bash
# The main job: install what is missing, build, describe the machine, run
# the flagship example (matmul on the coherent DSM against its MPI-native
# twin) and the JIAJIA applications, then the latency suite.
#
#   scripts/run-main.sh [--hosts LAYOUT]
#
# --hosts LAYOUT runs everything after the build across simulated hosts
# (scripts/hosts, for example 1+1 or 1+1+1: one rank per host, tcp between
# them), with as many ranks as the layout has slots; otherwise 2 ranks on
# this node.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
user_osc=${OMPI_MCA_osc-}  # before env.sh supplies its default
layout=""
while (($#)); do
  case $1 in
    --hosts) layout=${2:?--hosts needs a layout, like 1+1}; shift 2 ;;
    -h | --help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "usage: scripts/run-main.sh [--hosts LAYOUT]" >&2; exit 2 ;;
  esac
done
if [[ -z ${RUN_MAIN_LAYOUT:-} ]]; then
  bash "$here/install-deps.sh"
  bash "$here/build.sh"
  if [[ -n $layout ]]; then
    # Across hosts the suite's MPI one-sided column uses osc/pt2pt, as
    # run-suite --hosts chooses, unless the user chose otherwise.
    export RUN_MAIN_LAYOUT=$layout RUN_SUITE_LAYOUT=$layout OMPI_MCA_osc=${user_osc:-pt2pt}
    exec bash "$here/hosts" --layout "$layout" -- bash "$0" --hosts "$layout"
  fi
fi
source "$here/env.sh"
ranks=2
if [[ -n $layout ]]; then
  ranks=0
  IFS=+ read -r -a slots <<<"$layout"
  for s in "${slots[@]}"; do ranks=$((ranks + s)); done
fi
"$BUILD_DIR/src/tools/mpidsm_info"
echo
"${MPIRUN[@]}" -np "$ranks" "$BUILD_DIR/examples/matmul"
echo
# The classic applications written as JIAJIA programs, at their default
# sizes, each against its MPI-native twin.
for app in jacobi lu is tsp water; do
  "${MPIRUN[@]}" -np "$ranks" "$BUILD_DIR/examples/jia/jia_$app"
  echo
done
# The latency half of the benchmark suite: mpidsm and MPI side by side
# (across the same hosts when RUN_SUITE_LAYOUT names them).
bash "$MPIDSM_ROOT/benchmarks/run-suite" --latency
