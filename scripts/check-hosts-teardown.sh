#!/usr/bin/env bash
# Checks that scripts/hosts leaves nothing behind when its whole process group
# is killed (a job stopped from a shell, or a CI step's timeout): ranks of a
# running mpirun live in sessions of their own and outlive the group, so only
# the harness's teardown can end them. Exits 77 where namespaces cannot be
# created, 1 when a rank survives.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
# A sleep no other program runs, so survivors can be told by their command line.
marker=$((86000 + RANDOM % 400))
survivor="^sleep $marker\$"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
setsid bash "$here/hosts" --no-paths --layout 1+1 -- \
  mpirun -np 2 sh -c "echo up; exec sleep $marker" >"$out" 2>&1 &
group=$!
for _ in $(seq 300); do  # until both ranks run (at most 30 s)
  (($(grep -c '^up$' "$out" || true) == 2)) && break
  if ! kill -0 "$group" 2>/dev/null; then
    wait "$group" && status=0 || status=$?
    ((status == 77)) && { cat "$out" >&2; exit 77; }
    echo "check-hosts-teardown: scripts/hosts ended before its ranks ran (status $status):" >&2
    cat "$out" >&2
    exit 1
  fi
  sleep 0.1
done
kill -TERM -- "-$group"
for _ in $(seq 200); do  # scripts/hosts must end within 20 s
  kill -0 "$group" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$group" 2>/dev/null; then
  echo "check-hosts-teardown: FAILED: scripts/hosts still runs 20 s after its process group was" \
    "sent SIGTERM" >&2
  pkill -KILL -f "$survivor" || true
  kill -KILL -- "-$group" 2>/dev/null || true
  exit 1
fi
wait "$group" 2>/dev/null || true
for _ in $(seq 50); do  # SIGKILL is asynchronous: let the kernel reap them
  pgrep -f "$survivor" >/dev/null || break
  sleep 0.1
done
if pgrep -f "$survivor" >/dev/null; then
  echo "check-hosts-teardown: FAILED: ranks survived scripts/hosts after its process group was" \
    "sent SIGTERM:" >&2
  pgrep -af "$survivor" >&2
  pkill -KILL -f "$survivor" || true
  exit 1
fi
echo "check-hosts-teardown: a process group killed mid-run left no rank behind"
