#!/usr/bin/env bash
# The README's first command: set everything up, then show the devices and
# run the seeds' walkthrough on the best device there is.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build/bin/plexus-smi
echo
build/bin/plexus-demo
