#!/usr/bin/env bash
# Installs what Plexus needs from Debian's packages, then configures and
# builds it in ./build. Run as root, or as a user with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup.sh: run as root (apt-get needs it)" >&2; exit 1; }
  SUDO=sudo
fi

packages=(cmake ninja-build g++ pkg-config libboost-dev libopenblas-openmp-dev catch2 zlib1g-dev dataset-fashion-mnist
          libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

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
