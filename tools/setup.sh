#!/usr/bin/env bash
# Installs what Plexus needs from Debian's packages, then configures and
# builds it in ./build. Run as root, or as a user with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-packages.sh

# The CUDA plugin (when /usr/local/cuda or nvcc on PATH is there) is built
# for this machine's GPU, or as PTX only when there is none: that compiles
# every kernel fast and still runs on any GPU (compiled when loaded).
# PLEXUS_CUDA_ARCHITECTURES overrides, e.g. "80;90".
cuda_args=()
if [ -z "${PLEXUS_CUDA_ARCHITECTURES:-}" ]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    PLEXUS_CUDA_ARCHITECTURES=native
  else
    PLEXUS_CUDA_ARCHITECTURES=75-virtual
  fi
fi
cuda_args+=("-DCMAKE_CUDA_ARCHITECTURES=$PLEXUS_CUDA_ARCHITECTURES")
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_args+=("-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc")
fi

build_type=${PLEXUS_BUILD_TYPE:-Release}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${cuda_args[@]}" ${PLEXUS_CMAKE_ARGS:-} >/dev/null
cmake --build build --parallel "$(nproc)"
