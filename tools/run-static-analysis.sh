#!/usr/bin/env bash
# clang-tidy over the C++ that Plexus ships (host/, nn/, mpi/, plugins/, tools/,
# examples/ and the headers they include) with the checks of .clang-tidy,
# every warning an error. Run by CI after the tests; it reads build/ (made by
# tools/setup.sh) for the compile commands. The full log is
# build/clang-tidy.log; on failure the findings are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-packages.sh clang-tidy
[ -f build/compile_commands.json ] || tools/setup.sh
runner=$(command -v run-clang-tidy || command -v run-clang-tidy-14)
files="^$PWD/(host|nn|mpi|plugins|tools|examples)/.*\.cpp$"
count=$(grep -oE "\"file\": \"$PWD/(host|nn|mpi|plugins|tools|examples)/[^\"]*\.cpp\"" build/compile_commands.json | sort -u | wc -l)
echo "run-static-analysis: clang-tidy over $count files"
start=$(date +%s)
if "$runner" -p build -j "$(nproc)" -quiet "$files" >build/clang-tidy.log 2>&1; then
  echo "run-static-analysis: no findings ($(($(date +%s) - start)) s)"
else
  # Findings are reported as errors (WarningsAsErrors); a header's shows once
  # per file that includes it, so each is listed once.
  sed 's/\x1b\[[0-9;]*m//g' build/clang-tidy.log | grep -E "(error|warning): " | sort -u >&2 || true
  echo "run-static-analysis: clang-tidy reported findings (build/clang-tidy.log)" >&2
  exit 1
fi
