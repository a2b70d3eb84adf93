#!/usr/bin/env bash
# The whole suite, quickly (small sizes, few iterations, -f), then the plots:
# run-suite must stream a progress line and the standalone header per test
# and write one CSV section per test, and plot must draw a PNG for every test in the CSV; --help prints
# the usage; the start-up scaling run, its fits and plots; and the barrier
# scaling run.
# Usage: check_suite_and_plots.sh <scratch directory>   (BUILD_DIR: the build)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
scratch=$1
rm -rf "$scratch" && mkdir -p "$scratch"
# --help prints the usage and runs nothing.
bash "$here/run-suite" --help > "$scratch/help.txt"
grep -q '^  benchmarks/run-suite \[--latency' "$scratch/help.txt" ||
  { echo "run-suite --help printed no usage" >&2; exit 1; }
bash "$here/run-suite" -m 1:16 -i 20 -x 2 -f -o "$scratch/suite.csv" > "$scratch/run.log"
tests=$(grep -c '^run-suite: \[[0-9]*/[0-9]*\] .* done in' "$scratch/run.log")
sections=$(grep -c '^test,size,' "$scratch/suite.csv")
facts=$(grep -c '^# mpidsm=.*; transport=.*; ranks=2; host=' "$scratch/suite.csv")
if ((tests != 13 || sections != 13 || facts != 13)); then
  echo "expected 13 tests, sections and facts lines; got $tests, $sections, $facts" >&2
  cat "$scratch/run.log" >&2
  exit 1
fi
# The suite shows each test's own header, as the test prints it alone.
headers=$(grep -c '^# mpidsm .* Test v' "$scratch/run.log")
cpus=$(grep -c '^# CPU .*; 2 ranks on ' "$scratch/run.log")
if ((headers != 13 || cpus != 13)); then
  echo "expected 13 test headers with their CPU line; got $headers and $cpus" >&2
  exit 1
fi
/usr/bin/python3 "$here/plot" "$scratch/suite.csv" -o "$scratch/plots" > "$scratch/plot.log"
pngs=$(find "$scratch/plots" -name '*.png' -size +10k | wc -l)
if ((pngs != 13)); then
  echo "expected a plot per test (13), found $pngs" >&2
  cat "$scratch/plot.log" >&2
  exit 1
fi
# The start-up scaling run (two rank counts, one node) writes a row per
# figure and rank count, fits a law for each figure and draws it.
bash "$here/startup-scaling" --ranks "1 2" -r 2 --one-node-only -o "$scratch/startup.csv" \
  > "$scratch/startup.log"
rows=$(grep -c '^[12],one node,' "$scratch/startup.csv")
laws=$(grep -c ' one node ' "$scratch/startup.log")
startup_pngs=$(find "$scratch/plots" -name 'startup_*.png' -size +10k | wc -l)
if ((rows != 26 || laws != 13 || startup_pngs != 13)); then
  echo "startup-scaling: expected 26 rows, 13 laws and 13 plots; got $rows, $laws, $startup_pngs" >&2
  cat "$scratch/startup.log" >&2
  exit 1
fi
bash "$here/barrier-scaling" --ranks "1 2" -i 20 --one-node-only -o "$scratch/barrier.csv" \
  > "$scratch/barrier.log"
barrier_rows=$(grep -cE '^[12],one node,(clean|dirty_1),[0-9.]+,[0-9.]+,[0-9.]+,' \
  "$scratch/barrier.csv")
if ((barrier_rows != 4)); then
  echo "barrier-scaling: expected 4 rows; got $barrier_rows" >&2
  cat "$scratch/barrier.log" "$scratch/barrier.csv" >&2
  exit 1
fi
echo "13 tests run, 13 CSV sections, 13 plots; start-up scaling: 26 rows, 13 laws, 13 plots;" \
  "barrier scaling: 4 rows"
