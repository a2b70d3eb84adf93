#!/usr/bin/env bash
# Checks scripts/hosts --confine: the ranks of two simulated hosts run on
# disjoint sets of cores (each host on cores of its own, as real hosts), and
# a layout with more hosts than usable cores is refused with a message, not
# run half-confined. Exits 77 where namespaces cannot be created or the
# machine has a single usable core, 1 on a failed check.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
usable=$(nproc)
if ((usable < 2)); then
  echo "check-hosts-confine: SKIPPED: one usable core, two hosts cannot have cores of their own"
  exit 77
fi
status=0
out=$(bash "$here/hosts" --no-paths --confine --layout 1+1 -- \
  mpirun -np 2 sh -c 'echo "$(hostname) $(awk "/^Cpus_allowed_list:/ {print \$2}" /proc/self/status)"' \
  2>&1) || status=$?
((status == 77)) && { echo "$out" >&2; exit 77; }
if ((status != 0)); then
  echo "check-hosts-confine: FAILED: a confined 1+1 run ended with status $status:" >&2
  echo "$out" >&2
  exit 1
fi
host0=$(awk '$1 == "simhost0" {print $2}' <<<"$out")
host1=$(awk '$1 == "simhost1" {print $2}' <<<"$out")
if [[ -z $host0 || -z $host1 || $host0 == "$host1" ]]; then
  echo "check-hosts-confine: FAILED: the hosts' ranks should run on cores of their own;" \
    "they printed:" >&2
  echo "$out" >&2
  exit 1
fi
hosts=$(printf '1+%.0s' $(seq "$usable"))1  # one host more than usable cores
status=0
refused=$(bash "$here/hosts" --no-paths --confine --layout "$hosts" -- true 2>&1) || status=$?
if ((status != 2)) || [[ $refused != *"--confine needs a core per host"* ]]; then
  echo "check-hosts-confine: FAILED: --confine over $hosts hosts on $usable cores should be" \
    "refused with status 2 and a reason; status $status:" >&2
  echo "$refused" >&2
  exit 1
fi
echo "check-hosts-confine: confined hosts ran on cores $host0 and $host1; $hosts was refused"
