#!/usr/bin/env bash
# Set up knead on Debian 12: install the Debian packages it needs (only the missing ones, so a
# machine that has them needs no network), then configure and build into build/.
#   bash tools/install.sh                     Release build in build/
#   KNEAD_SANITIZE=ON bash tools/install.sh   Debug build (-O2) with AddressSanitizer + UBSan (CI)
#   KNEAD_BUILD_DIR=DIR bash tools/install.sh build into DIR instead of build/ (relative paths are
#                                             taken from the checkout's root)
# Runs as root (a fresh container) or as a user with sudo.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(cmake make gcc g++ pkg-config liblapacke-dev libopenblas-dev libsuitesparse-dev liburdfdom-dev
          libccd-dev libqhull-dev libcriterion-dev libcyaml-dev libmujoco-dev libassimp-dev tetgen
          gnuplot-nox npm chromium zlib1g-dev libjansson-dev clang libclang-rt-dev)
packages+=(python3-dev python3-numpy python3-pytest) # the Python module (python/) and its pytest tests
# libqhull-dev: convex hulls of collision meshes (contact/hull.c); gnuplot-nox draws output.plots;
# npm installs three.js for output.html at build time (tools/html/package-lock.json); chromium runs
# the replay's headless-browser test; jansson reads and writes every JSON file (ARCHITECTURE.md);
# clang and libclang-rt-dev (libFuzzer) build the fuzz targets of tests/fuzz/run.sh.
# OpenMPI: `mpirun knead check` / `knead sweep` across ranks and machines (optional at build time)
packages+=(libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  # npm is satisfied by any npm on PATH (a machine with Node.js from elsewhere has one, and
  # Debian's npm package would conflict with that nodejs)
  if [ "$p" = npm ] && command -v npm > /dev/null; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "knead: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo > /dev/null; then
    sudo=(sudo)
  else
    echo "knead: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

build_type=Release
sanitize=${KNEAD_SANITIZE:-OFF}
case "$sanitize" in
  ON | on | 1 | true | TRUE) sanitize=ON; build_type=Debug ;;
  *) sanitize=OFF ;;
esac
build=${KNEAD_BUILD_DIR:-build}
case "$build" in
  /*) ;;
  *) build="$root/$build" ;;
esac
jobs=$(nproc 2> /dev/null || echo 2)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=$build_type -DKNEAD_SANITIZE=$sanitize
cmake --build "$build" -j "$jobs"
echo "knead: built $build ($build_type, sanitizers $sanitize)"
