#!/usr/bin/env bash
# A job whose rank died ends: with mpirun as users run it (no
# --enable-recovery), the last of 3 ranks is killed while the others wait on
# it in a DSM barrier, and mpirun must have ended within 10 s of the death,
# whatever the survivors then do (_exit, return from main, MPI_Finalize), on
# one node and across simulated hosts: 2+1 and 1+1+1 with a PID namespace
# per host, 2+1 with one shared. Prints a row per run; exits 1 on a run that
# did not end in time. Where namespaces cannot be created, runs on one node.
#   scripts/check-job-ends.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
build=${1:-$BUILD_DIR}
program=$build/mpi_tests/peer_failure
limit=10
layouts=("one node" "2+1" "2+1 --shared-pid" "1+1+1")
if ! unshare --net --uts --ipc --mount --pid --fork --mount-proc true 2>/dev/null; then
  echo "check-job-ends: no namespaces here: one node only"
  layouts=("one node")
fi
failed=0
echo "| layout | survivors then | job ended after the death (s) |"
echo "|---|---|---|"
for layout in "${layouts[@]}"; do
  launch=()
  # shellcheck disable=SC2206  # "2+1 --shared-pid": the layout and its option
  [[ $layout != "one node" ]] && launch=(bash "$here/hosts" --no-paths --layout $layout --)
  for leave in exit return finalize; do
    out=$(timeout --kill-after=5 60 "${launch[@]}" mpirun -np 3 --oversubscribe "$program" \
      barrier "$leave" 2>&1) || true
    ended=$(date +%s.%N)
    death=$(grep -oE '^rank 2: dies at [0-9.]+' <<<"$out" | awk '{print $5}' || true)
    if [[ -z $death ]]; then
      echo "| $layout | $leave | the victim never reported its death |"
      failed=1
      continue
    fi
    after=$(awk -v a="$ended" -v b="$death" 'BEGIN { printf "%.2f", a - b }')
    verdict=""
    if awk -v t="$after" -v l="$limit" 'BEGIN { exit !(t > l) }'; then
      verdict=" (more than $limit s)"
      failed=1
    fi
    echo "| $layout | $leave | $after$verdict |"
  done
done
exit "$failed"
