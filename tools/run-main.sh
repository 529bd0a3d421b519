#!/usr/bin/env bash
# The README's first command: set everything up, show the devices, then train
# seed 002's LeNet on Fashion-MNIST on the best device there is (the first
# GPU, else the CPU). Extra arguments go to plexus-train (e.g. --epochs 2).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build/bin/plexus-smi
echo
build/bin/plexus-train --out plexus-train-out "$@"
