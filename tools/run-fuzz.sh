#!/usr/bin/env bash
# Fuzzes the parameter-file decoder, the IDX and NumPy readers, and the op calls of the
# CPU plugin and of the CUDA plugin on the CUDA emulator (their execute, as
# any host may call it; each alone, then both side by side) with libFuzzer
# under ASan and UBSan (clang from Debian): each target runs for
# PLEXUS_FUZZ_SECONDS (60) or PLEXUS_FUZZ_RUNS (5 million) inputs, whichever
# ends first, as many targets at once as there are cores, starting from
# tests/fuzz/corpus. A crash fails the run and is
# left in build-asan/fuzz/crashes/; copy it to tests/fuzz/regressions/<target>/
# so every build replays it (nn.the fuzz corpus and every recorded crash...,
# nn.the op-call corpus runs on..., nn.the CPU plugin and the emulated CUDA
# plugin agree...). The op-call targets start from the op-call seeds;
# op-call-diff runs each call on both plugins, which must agree. The GPU
# ones are built where CMake finds the CUDA toolkit's headers and Boost.Context.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/sanitizers/configure-asan.sh
targets="param-file idx npy op-call"
if ninja -C build-asan -t targets all | grep -q '^plexus-fuzz-op-call-gpu:'; then
  targets="$targets op-call-gpu op-call-diff"
else
  echo "run-fuzz: op-call-gpu not built (no CUDA emulator: it needs the CUDA toolkit's headers and Boost.Context)"
fi
cmake --build build-asan --target $(printf 'plexus-fuzz-%s ' $targets)

seconds=${PLEXUS_FUZZ_SECONDS:-60}
runs=${PLEXUS_FUZZ_RUNS:-5000000}
mkdir -p build-asan/fuzz/crashes

fuzz_one() {
  local target=$1 work=build-asan/fuzz/corpus/$1 seeds=$1
  mkdir -p "$work"
  case $target in op-call*) seeds="op-call op-call-grown" ;; esac
  for s in $seeds; do cp tests/fuzz/corpus/$s/* "$work"/; done
  echo "run-fuzz: $target for ${seconds} s or ${runs} inputs"
  if ! build-asan/bin/plexus-fuzz-$target -max_total_time="$seconds" -runs="$runs" -print_final_stats=1 \
      -detect_leaks=1 -artifact_prefix=build-asan/fuzz/crashes/$target- "$work" 2>build-asan/fuzz/$target.log; then
    tail -40 build-asan/fuzz/$target.log
    echo "run-fuzz: $target FAILED; the input is in build-asan/fuzz/crashes/" >&2
    return 1
  fi
  grep -E "^Done|stat::number_of_executed_units|stat::peak_rss_mb" build-asan/fuzz/$target.log | sed "s/^/$target: /"
}

# LeakSanitizer's tracer faulted on the plugins' dynamic TLS (clang 14 on
# Debian 12's glibc) unless __tls_get_addr is left alone (run-sanitizers.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}intercept_tls_get_addr=0"

# One target per core at a time: each is one process, and its time is wall-clock time.
failed=0 running=0
for target in $targets; do
  if [ "$running" -ge "$(nproc)" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
[ "$failed" = 0 ] || exit 1
