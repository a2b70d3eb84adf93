#!/usr/bin/env bash
# The kill -9 table: every scenario of mpi_tests/peer_failure (the last of 3
# ranks killed while the others wait on it), one row each, with what every
# survivor reported: time to the error, time until everything was destroyed,
# and the message; "hung" when the run had not ended after the time limit.
#
#   scripts/peer-failure-table.sh [--hosts LAYOUT] [--tls sm|tcp] [--limit S] [BUILD_DIR]
#
# --hosts runs across simulated hosts (scripts/hosts), e.g. 1+1+1 or 2+1+1.
# --tls tcp forces UCX_TLS=tcp,self (default: UCX's choice).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
layout= tls= limit=20 build=
while (($#)); do
  case $1 in
    --hosts) layout=$2; shift 2 ;;
    --tls) tls=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    *) build=$1; shift ;;
  esac
done
source "$here/env.sh"
build=${build:-$BUILD_DIR}
program=$build/mpi_tests/peer_failure
scenarios=(barrier lock wait_flag sync_with wait_until recv put get pgas_barrier dsm_allocate
  dsm_free pgas_allocate pgas_free)
env_args=()
[[ $tls == tcp ]] && env_args+=(-x UCX_TLS=tcp,self)
launch=()
[[ -n $layout ]] && launch=(bash "$here/hosts" --no-paths --layout "$layout" --)
echo "| call | layout | UCX_TLS | survivor | error after (s) | destroyed after (s) | message |"
echo "|---|---|---|---|---|---|---|"
for scenario in "${scenarios[@]}"; do
  out=$(timeout --kill-after=5 "$limit" "${launch[@]}" mpirun -np 3 --oversubscribe \
    --enable-recovery "${env_args[@]}" "$program" "$scenario" 2>/dev/null) || true
  lines=$(grep -E "^rank [0-9]+: $scenario: " <<<"$out" | sort || true)
  if [[ -z $lines ]]; then
    echo "| $scenario | ${layout:-one node} | ${tls:-default} | all | hung (> $limit s) | | |"
    continue
  fi
  while IFS= read -r line; do
    [[ $line =~ ^rank\ ([0-9]+):\ [a-z_]+:\ ([A-Za-z]+)\ after\ ([0-9.]+)\ s\ \(destroyed\ after\ ([0-9.]+)\ s\):\ (.*)$ ]] || continue
    message=${BASH_REMATCH[5]#mpidsm\[rank [0-9]*\] }
    message=${message#transport error: }
    message=${message%%; the runtime cannot go on*}
    echo "| $scenario | ${layout:-one node} | ${tls:-default} | ${BASH_REMATCH[1]} (${BASH_REMATCH[2]}) | ${BASH_REMATCH[3]} | ${BASH_REMATCH[4]} | $message |"
  done <<<"$lines"
done
