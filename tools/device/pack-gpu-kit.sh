#!/usr/bin/env bash
# Builds Plexus for a GPU that this machine lacks and packs what a bare GPU
# machine needs to run the GPU checks without building there (it has CUDA,
# cmake and PyTorch, but no OpenBLAS, Catch2, MPI or dataset):
#   build-kit/kit.tar.xz   the build tree (binaries, libraries, CTest files;
#                          no objects), the shared libraries it needs beyond
#                          glibc, libstdc++ and CUDA, and Fashion-MNIST;
#   build-kit/root         the absolute path the build was made in.
# tools/device/run-gpu-checks.sh unpacks it there and runs the checks.
#
# Usage: tools/device/pack-gpu-kit.sh   (PLEXUS_CUDA_ARCHITECTURES, default 90)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build="build-gpu"
kit="build-kit"
data=${PLEXUS_DATA:-/usr/share/datasets/fashion-mnist}
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)

# Without the CUDA emulator: its tests are CI's, not the GPU machine's, and
# it would only make the build slower and the kit larger.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPLEXUS_WITH_CUDA=ON -DPLEXUS_CUDA_EMULATOR=OFF \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="${PLEXUS_CUDA_ARCHITECTURES:-90}" >/dev/null
cmake --build "$build" --parallel "$(nproc)"

rm -rf "$kit"
mkdir -p "$kit/deps"
# Every library the built files load that the GPU machine may lack: all but
# the C and C++ runtimes (newer there) and CUDA's own (the GPU machine's
# toolkit and driver must be the ones used).
mapfile -t elves < <(find "$build/bin" "$build/lib" -type f -perm -u+x)
for f in "${elves[@]}"; do ldd "$f" 2>/dev/null; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so' |
  grep -Ev "^$root/$build/|/libcuda\.so|/usr/local/cuda" |
  while read -r lib; do cp -L "$lib" "$kit/deps/"; done
if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
  echo "pack-gpu-kit: no Fashion-MNIST in $data (tools/install-packages.sh installs it)" >&2
  exit 1
fi
echo "$root" >"$kit/root"
echo "$data" >"$kit/data"

# Paths inside the tar are absolute paths without the leading '/', so that
# the kit unpacks where the build's RUNPATHs and CTest files point.
tar -C / -cf - --exclude=CMakeFiles --exclude='*.o' --exclude='.ninja_*' --exclude=build.ninja \
    --exclude="${build}/tests/fuzz" "${root#/}/$build" "${root#/}/$kit/deps" "${data#/}" |
  xz -T"$(nproc)" -6 >"$kit/kit.tar.xz"
rm -rf "$kit/deps"
du -h "$kit/kit.tar.xz"
echo "carry build-kit; on the GPU machine run tools/device/run-gpu-checks.sh STAGE..."
