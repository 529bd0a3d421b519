#!/bin/sh
# A plain configure and build, as a new user runs them: no -D flag, the
# default generator (issue 38). Generation once failed with "CUDA_ARCHITECTURES
# is empty for target plexus-bench" where the CUDA toolkit is installed
# (tools/setup.sh always passed the flag, so CI never saw it).
#   with-toolkit     configure, then build the targets that compile .cu files
#                    with the default architectures (the bench's raw kernels,
#                    the CUDA plugin test build's hook); exits 77 (skipped)
#                    where CMake finds no CUDA compiler.
#   without-toolkit  configure with nvcc off PATH (no CUDA plugin), then build
#                    a small target through the generated build files.
# Building the whole tree again would double CI's build time; these targets
# are the ones the toolchain decisions (cmake/PlexusCuda.cmake) reach.
# usage: plain_build.sh <cmake> <source dir> <work dir> with-toolkit|without-toolkit
set -eu
cmake=$1 src=$2 work=$3 mode=$4
rm -rf "$work"
mkdir -p "$work"
unset CUDAARCHS CUDACXX CMAKE_GENERATOR CMAKE_BUILD_TYPE
case $mode in
  with-toolkit)
    targets="plexus-bench-cuda-math plexus-cuda-test-hook" ;;
  without-toolkit)
    # Every PATH entry with an nvcc in it goes.
    path=""
    old_ifs=$IFS; IFS=:
    for dir in $PATH; do
      [ -x "$dir/nvcc" ] || path="${path:+$path:}$dir"
    done
    IFS=$old_ifs
    PATH=$path
    export PATH
    unset CUDA_PATH CUDAToolkit_ROOT
    targets="plexus_c99_check" ;;
  *) echo "usage: $0 <cmake> <source dir> <work dir> with-toolkit|without-toolkit" >&2; exit 2 ;;
esac
if ! "$cmake" -S "$src" -B "$work/build" >"$work/configure.log" 2>&1; then
  cat "$work/configure.log"
  echo "plain_build: the plain configure failed" >&2
  exit 1
fi
grep -E "CUDA plugin:|CUDA emulator:" "$work/configure.log" || true
case $mode in
  with-toolkit)
    if ! grep -q "CUDA plugin: CUDA" "$work/configure.log"; then
      echo "skipped: CMake found no CUDA compiler here"
      exit 77
    fi ;;
  without-toolkit)
    if ! grep -q "CUDA plugin: not built" "$work/configure.log"; then
      echo "skipped: CMake found a CUDA compiler even with nvcc off PATH (it is in a default place)"
      exit 77
    fi ;;
esac
for target in $targets; do
  if ! "$cmake" --build "$work/build" --target "$target" >"$work/build-$target.log" 2>&1; then
    cat "$work/build-$target.log"
    echo "plain_build: building $target after the plain configure failed" >&2
    exit 1
  fi
  echo "plain_build: built $target"
done
echo "plain_build: $mode: configured and built"
