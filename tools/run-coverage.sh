#!/usr/bin/env bash
# Line coverage of the host runtime, the CPU and CUDA plugins, the frontend
# headers and the tools: builds build-cov/ with gcc --coverage (Debug; the
# CUDA plugin's sources through the CUDA emulator, tests/cuda_emu, since nvcc's
# code cannot run without a GPU), runs every test, and prints gcovr's table
# (the least covered files last), with the lines no test reached. Use it to find
# error paths without a test; it is not part of CI (it adds a full build).
# PLEXUS_COVERAGE_HTML=1 also writes build-cov/coverage/index.html.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-packages.sh gcovr
flags="--coverage -fprofile-update=atomic"  # atomic: threads update the counts too
cmake -S . -B build-cov -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPLEXUS_WITH_CUDA=OFF \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DCMAKE_SHARED_LINKER_FLAGS="$flags" -DCMAKE_MODULE_LINKER_FLAGS="$flags" >/dev/null
cmake --build build-cov --parallel "$(nproc)"
find build-cov -name '*.gcda' -delete  # counts from this run only
# A test that fails still leaves its counts; the table is printed either way.
(cd build-cov && ctest --parallel "$(nproc)" --timeout 900) || status=$?
# api/abi/ is the layout program the build runs, before the counts are reset.
filters=(--filter 'host/' --filter 'plugins/' --filter 'api/' --filter 'tools/' --exclude 'api/abi/')
gcovr -r . build-cov "${filters[@]}" --sort-percentage --txt
if [ "${PLEXUS_COVERAGE_HTML:-0}" = 1 ]; then
  mkdir -p build-cov/coverage
  gcovr -r . build-cov "${filters[@]}" --html-details build-cov/coverage/index.html
  echo "run-coverage: build-cov/coverage/index.html"
fi
# Processes that end in MPI_Abort or a signal (the time-out and kill tests)
# write no counts: their paths show as unreached here although tests reach them.
exit "${status:-0}"
