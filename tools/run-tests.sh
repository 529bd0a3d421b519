#!/usr/bin/env bash
# The README's second command (and CI's): set everything up, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cd build
ctest --output-on-failure --parallel "$(nproc)" --timeout 300
