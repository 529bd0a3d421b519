#!/usr/bin/env bash
# Usage: tools/check-accuracy.sh METRICS_CSV [MIN]
# Fails unless the last epoch of plexus-train's metrics.csv reached test
# accuracy MIN (default: issue 4's bar, 0.86). A file without the column,
# without an epoch, or whose last epoch has no test accuracy (an empty
# test_acc: the run had no test images) fails, saying which.
set -euo pipefail
csv=$1
min=${2:-0.86}
if [ ! -s "$csv" ]; then
  echo "check-accuracy: no metrics in $csv" >&2
  exit 1
fi
# The header names the column; the last row is the last epoch.
awk -F, -v min="$min" -v csv="$csv" '
  NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "test_acc") col = i; next }
  { last = col ? $col : ""; epoch = $1; ++rows }
  END {
    if (!col) { print "check-accuracy: no test_acc column in the metrics" > "/dev/stderr"; exit 1 }
    if (!rows) { print "check-accuracy: no epoch in " csv " (only its header)" > "/dev/stderr"; exit 1 }
    if (last == "") {
      print "check-accuracy: epoch " epoch " of " csv " has no test accuracy (test_acc is empty: the run had no test images)" > "/dev/stderr"
      exit 1
    }
    if (last !~ /^[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?$/) {
      print "check-accuracy: epoch " epoch " of " csv " has test_acc \"" last "\", not a number" > "/dev/stderr"
      exit 1
    }
    printf "check-accuracy: epoch %d, test accuracy %.4f (at least %s wanted)\n", epoch, last, min
    exit !(last + 0 >= min + 0)
  }' "$csv"
