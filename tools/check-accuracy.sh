#!/usr/bin/env bash
# Usage: tools/check-accuracy.sh METRICS_CSV [MIN]
# Fails unless the last epoch of plexus-train's metrics.csv reached test
# accuracy MIN (default: issue 4's bar, 0.86).
set -euo pipefail
csv=$1
min=${2:-0.86}
if [ ! -s "$csv" ]; then
  echo "check-accuracy: no metrics in $csv" >&2
  exit 1
fi
# The header names the column; the last row is the last epoch.
awk -F, -v min="$min" '
  NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "test_acc") col = i; next }
  { last = $col; epoch = $1 }
  END {
    if (!col || last == "") { print "check-accuracy: no test_acc column in the metrics" > "/dev/stderr"; exit 1 }
    printf "check-accuracy: epoch %d, test accuracy %.4f (at least %s wanted)\n", epoch, last, min
    exit !(last + 0 >= min + 0)
  }' "$csv"
