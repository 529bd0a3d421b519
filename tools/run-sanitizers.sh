#!/usr/bin/env bash
# The whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer
# (LeakSanitizer included) in build-asan/, then the concurrency and waiting-point tests built with
# ThreadSanitizer in build-tsan/. Any report fails the run. The CUDA plugin as
# built by nvcc is left out (its runtime and ASan's shadow memory do not mix;
# the GPU tests skip without a GPU anyway), but its sources are in: the CUDA
# emulator (tests/cuda_emu) compiles them with the host compiler, so ASan
# checks every kernel's memory accesses to the byte, as compute-sanitizer's
# memcheck would on a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-packages.sh
supp="$PWD/tools/sanitizers"
jobs=$(nproc)

# A report stops the process with a nonzero status; leaks are reports. An
# allocation the system cannot give returns NULL (the out-of-memory paths are
# tested), as without ASan. clang 14's LeakSanitizer, tracking the dynamic TLS
# of a plugin's threads through __tls_get_addr, read a bogus block on Debian
# 12's glibc and faulted in every process with two CPU devices ("Tracer caught
# signal 11"); untracked, those blocks are heap (glibc allocates them) and are
# still scanned.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:intercept_tls_get_addr=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
# OpenMPI keeps its components loaded, so LeakSanitizer can name (and the
# suppressions match) what they keep until exit.
export OMPI_MCA_mca_base_component_disable_dlclose=1

echo "run-sanitizers: ASan + UBSan + LSan build (clang; the fuzz stage's tree)"
tools/sanitizers/configure-asan.sh
cmake --build build-asan --parallel "$jobs"
# Left to the normal build: the downstream test links a fresh program against
# the installed (here instrumented) libraries without -fsanitize, and the
# build.* tests run CMake; they prove packaging, not memory safety. The
# emulator's conformance runs with work run as queued (eager) or in a random
# order add no code path the default order lacks (one random-order run of the
# GPU tests stays: an order that frees too early is ASan's to see). The
# conformance tool's tests that rerun the suite in child processes (plugins
# that crash, hang or leak on purpose, the budget's time-outs; an op withheld or failing; a plugin
# whose exp is wrong, 37 s under ASan, where the threads example plugin it
# is built from has tests of its own; every
# device's JSON) prove the tool's process handling and the suite's
# bookkeeping; under ASan they took 2-10x their normal time for it
# (2026-11-27), and every conformance.<device> test runs the suite itself.
# --perf's test times every op at benchmark sizes (51 s under ASan,
# 2026-11-28: the instruments' time, not the op's; the conformance runs
# reach the same kernels). The tool's other tests (options, JSON, the
# threads example plugin, an escaping exception, process groups) stay:
# seconds in all.
# (A sanitizer build has no plexus-bench: tools/CMakeLists.txt.)
(cd build-asan && ctest --output-on-failure --parallel "$jobs" --timeout 600 \
  -E '^(downstream|build)\.|^cuda_emu\.conformance\.(eager|random)$|^cuda_emu\.gpu\.random\.(9|12)$|^conformance\.tool\.(isolates_|budget_shortens_|every_device_json|counts_a_failing_helper_op_once|fails_a_missing_copy_once|skips_what_needs_a_missing_cast|fails_a_plugin_with_a_wrong_exp|perf_times_every_supported_op)' \
  -LE mpi)
# MPI's libraries have no frame pointers: slow unwinding gives LeakSanitizer
# whole stacks, so its suppressions (tools/sanitizers/lsan.supp) can match.
# One OpenMP thread per process: under LLVM's libomp (this clang build) the
# BatchNorm+Adam run on two devices of one process and the one on two ranks
# round differently (the biases before BatchNorm, whose gradients are rounding
# noise that Adam scales to steps, differ by up to 1e-3), and agree with it;
# the normal build (GCC, libgomp) checks them bit for bit without it.
(cd build-asan && ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" OMP_NUM_THREADS=1 \
  ctest --output-on-failure --timeout 600 -L mpi)

echo "run-sanitizers: ThreadSanitizer build of the concurrency and waiting-point tests"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLEXUS_SANITIZE=thread \
  -DPLEXUS_WITH_CUDA=OFF -DPLEXUS_WITH_MPI=OFF -DPLEXUS_BUILD_TOOLS=OFF >/dev/null
cmake --build build-tsan --parallel "$jobs" --target plexus-concurrency-tests plexus-wait-tests plexus-cpu plexus-cuda-emu
# One OpenMP thread per device: libgomp is not instrumented, so its own
# barriers would read as races; the threads under test are Plexus's.
OMP_NUM_THREADS=1 PLEXUS_CPU_DEVICES=2 build-tsan/bin/plexus-concurrency-tests
# Timed waits' background wait, the trace's end and the application's waits, overlapping.
OMP_NUM_THREADS=1 PLEXUS_CPU_DEVICES=2 build-tsan/bin/plexus-wait-tests
# The same threads on two GPUs of the CUDA emulator: the CUDA plugin's own
# locking (OpenBLAS, behind the emulator's cuBLAS, to one thread likewise).
OPENBLAS_NUM_THREADS=1 PLEXUS_TEST_DEVICE_KIND=gpu PLEXUS_PLUGIN_PATH="$(ls build-tsan/tests/cuda_emu/libplexus-cuda-emu.so)" \
  build-tsan/bin/plexus-concurrency-tests "threads compute on shared devices at once and every result is right"
echo "run-sanitizers: no reports"
