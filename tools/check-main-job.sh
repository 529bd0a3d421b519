#!/usr/bin/env bash
# CI's check of the README's first command: runs it as a user would (seed
# 002's LeNet, 10 epochs, on the best device there is) and fails unless the
# last epoch's test accuracy reaches issue 4's bar (0.86; PLEXUS_MIN_TEST_ACC
# overrides). Extra arguments go to plexus-train.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f plexus-train-out/metrics.csv
bash tools/run-main.sh --no-progress "$@"
bash tools/check-accuracy.sh plexus-train-out/metrics.csv "${PLEXUS_MIN_TEST_ACC:-0.86}"
