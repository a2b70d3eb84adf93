#!/usr/bin/env bash
# The kill-at-start-up table: the last of 3 ranks kills itself at one point
# of construction (MPIDSM_TEST_KILL_AT, src/common/startup_watch.hpp) while
# the others construct theirs (mpi_tests/startup_death); one row per
# survivor: time to its error and the message, and when mpirun ended
# (seconds since the ranks passed MPI_Init together); "hung" when the run had
# not ended after the time limit.
#
#   scripts/startup-death-table.sh [--hosts LAYOUT] [--shared-pid] [--limit S] [BUILD_DIR]
#
# --hosts runs across simulated hosts (scripts/hosts), e.g. 1+2 (the victim
# shares its host with rank 1) or 1+1+1 (the victim is alone on its host).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
layout= shared= limit=40 build=
while (($#)); do
  case $1 in
    --hosts) layout=$2; shift 2 ;;
    --shared-pid) shared=--shared-pid; shift ;;
    --limit) limit=$2; shift 2 ;;
    *) build=$1; shift ;;
  esac
done
source "$here/env.sh"
build=${build:-$BUILD_DIR}
program=$build/mpi_tests/startup_death
cases=(runtime:runtime-start runtime:runtime-duplicated runtime:runtime-configured
  runtime:transport-start runtime:transport-pids runtime:transport-endpoints runtime:transport-end
  dsm:dsm-start pgas:pgas-start shmem:runtime-start jia:runtime-start)
launch=()
[[ -n $layout ]] && launch=(bash "$here/hosts" --no-paths $shared --layout "$layout" --)
where="${layout:-one node}${shared:+ (shared PID namespace)}"
echo "| object | killed at | layout | survivor | error after (s) | message | mpirun ended after (s) |"
echo "|---|---|---|---|---|---|---|"
for case in "${cases[@]}"; do
  what=${case%%:*} point=${case#*:}
  started=$(date +%s.%N)
  out=$(timeout --kill-after=5 "$limit" "${launch[@]}" mpirun -np 3 --oversubscribe \
    --enable-recovery -x "MPIDSM_TEST_KILL_AT=$point:2" "$program" "$what" 2>&1) && status=0 || status=$?
  ended=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  ((status == 124 || status == 137)) && ended="hung (> $limit s)"
  lines=$(grep -E "^rank [01]: $what after |mpidsm.*rank 2 is gone" <<<"$out" | sort -u || true)
  if [[ -z $lines ]]; then
    echo "| $what | $point | $where | all | none | | $ended |"
    continue
  fi
  while IFS= read -r line; do
    if [[ $line =~ ^rank\ ([0-9]+):\ [a-z]+\ after\ ([0-9.]+)\ s:\ ([A-Za-z]+):\ (.*)$ ]]; then
      message=${BASH_REMATCH[4]#mpidsm\[rank [0-9]*\] }
      message=${message#transport error: }
      message=${message%%; the runtime cannot*}
      echo "| $what | $point | $where | ${BASH_REMATCH[1]} (${BASH_REMATCH[3]}) | ${BASH_REMATCH[2]} | $message | $ended |"
    else
      echo "| $what | $point | $where | (one line) | | ${line:0:110} | $ended |"
    fi
  done <<<"$lines"
done
