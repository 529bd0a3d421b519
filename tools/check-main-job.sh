#!/usr/bin/env bash
# CI's check of the README's first command: runs it as a user would (seed
# 002's LeNet, 10 epochs, on the best device there is) and fails unless the
# last epoch's test accuracy reaches issue 4's bar (0.86; PLEXUS_MIN_TEST_ACC
# overrides). Extra arguments go to plexus-train.
set -euo pipefail
cd "$(dirname "$0")/.."
min=${PLEXUS_MIN_TEST_ACC:-0.86}
rm -f plexus-train-out/metrics.csv
bash tools/run-main.sh --no-progress "$@"
csv=plexus-train-out/metrics.csv
if [ ! -s "$csv" ]; then
  echo "check-main-job: the main job wrote no $csv" >&2
  exit 1
fi
# The header names the column; the last row is the last epoch.
awk -F, -v min="$min" '
  NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "test_acc") col = i; next }
  { last = $col; epoch = $1 }
  END {
    if (!col || last == "") { print "check-main-job: no test_acc column in the metrics" > "/dev/stderr"; exit 1 }
    printf "check-main-job: epoch %d, test accuracy %.4f (at least %s wanted)\n", epoch, last, min
    exit !(last + 0 >= min + 0)
  }' "$csv"
