#!/usr/bin/env bash
# Configures build-asan/, the tree CI's fuzz stage (tools/run-fuzz.sh) and
# ASan stage (tools/run-sanitizers.sh) share: clang (libFuzzer is clang's),
# ASan + UBSan over everything, and the fuzz targets beside the tests, so the
# plugins they both exercise are compiled once. Either script runs alone too.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/install-packages.sh clang libclang-rt-14-dev libomp-14-dev
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DPLEXUS_SANITIZE=address,undefined -DPLEXUS_FUZZ=ON \
  -DPLEXUS_WITH_CUDA=OFF >/dev/null
