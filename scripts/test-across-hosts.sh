#!/usr/bin/env bash
# The mpirun tests across simulated hosts (scripts/hosts), in each layout
# given (default: one rank per host on 2 hosts; 2+1+1 on 3 hosts, which
# mixes shared memory and tcp in one job; 1+1+1; on 4 hosts 1+1+1+1 and
# 2+2+2+2; and 8 hosts of one rank). In each layout, every test whose rank
# count fills it (np2 for 1+1, np4 for 2+1+1 and 1+1+1+1, np8 for 2+2+2+2),
# in its base variant; in 1+1+1 the peer-failure tests (np3, over tcp), each
# survivor on a host of its own, so only UCX can tell them of the death; on
# 8 hosts the 8-rank peer-failure tests, where some survivors never talked
# to the victim and hear of it from those that did. (In 2+1+1 with
# its last host idle, Open MPI 4.1.4's mpirun did not end after every rank
# had: the survivors reported and exited, and mpirun waited for ever.) The .tcp/.ucx/.bare
# variants repeat on one node what crossing hosts does anyway.
# Before them, scripts/check-hosts-teardown.sh checks the harness's teardown
# and scripts/check-hosts-confine.sh its --confine.
# Where namespaces cannot be created, says so and succeeds: the rest of the
# suite has run on one node.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
layouts=("$@")
((${#layouts[@]})) || layouts=(1+1 2+1+1 1+1+1 1+1+1+1 2+2+2+2 1+1+1+1+1+1+1+1)
# The harness itself first: killed mid-run, it leaves no rank behind.
status=0
bash "$here/check-hosts-teardown.sh" || status=$?
if ((status == 77)); then
  echo "=== SKIPPED: tests across simulated hosts need namespaces (see above) ==="
  exit 0
fi
((status == 0)) || exit "$status"
# A job whose rank died ends, on one node and across hosts.
bash "$here/check-job-ends.sh"
# Confined, each host's ranks run on cores of their own (77: one core).
status=0
bash "$here/check-hosts-confine.sh" || status=$?
((status == 0 || status == 77)) || exit "$status"
for layout in "${layouts[@]}"; do
  echo "=== mpirun tests across simulated hosts, layout $layout ==="
  ranks=$((${layout//+/ + }))
  select="\.np$ranks\$"
  ((ranks != 3)) || select+='|^peer_failure\..*\.np3\.tcp$'
  # A death during construction, from the points at which a rank alone on
  # its host can be seen (docs/transport.md, "A death during start-up").
  ((ranks != 3)) || select+='|^startup_death\.(runtime\.transport-end|dsm\.dsm-start|pgas\.pgas-start)\.np3\.sm$'
  # The 8-rank peer-failure tests on 8 hosts only (with two ranks on a host,
  # mpirun did not end after the survivors had, as in 2+1+1 above); 8 hosts
  # run nothing else.
  exclude='^peer_failure\..*\.np8$'
  if [[ $layout == 1+1+1+1+1+1+1+1 ]]; then
    select=$exclude
    exclude='^$'
  fi
  status=0
  # The view's mapping-budget tests fault ~100,000 pages and depend on no
  # transport (half a minute each through UCX): they run on one node only.
  GTEST_FILTER='-*WholeRegion*:*SeventyThousand*' bash "$here/hosts" --layout "$layout" -- \
    ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 300 \
    -R "$select" -E "$exclude" || status=$?
  if ((status == 77)); then
    echo "=== SKIPPED: tests across simulated hosts need namespaces (see above) ==="
    exit 0
  fi
  ((status == 0)) || exit "$status"
done
