#!/usr/bin/env bash
# Installs, from Debian's packages, what Plexus needs to build and test, plus
# any packages named as arguments (run-fuzz.sh adds clang). Only what is
# missing is installed; run as root, or as a user with sudo.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-packages.sh: run as root (apt-get needs it)" >&2; exit 1; }
  SUDO=sudo
fi

packages=(cmake ninja-build g++ pkg-config libboost-dev libboost-context-dev libopenblas-openmp-dev libsleef-dev catch2 zlib1g-dev libzip-dev dataset-fashion-mnist
          libopenmpi-dev openmpi-bin
          python3-dev pybind11-dev python3-numpy python3-pytest python3-torch python3-pil libdlpack-dev "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-packages.sh: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
