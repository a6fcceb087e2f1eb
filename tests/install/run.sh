#!/usr/bin/env bash
# Install a knead build into a temporary prefix and use it the two ways a user would:
#   1. CMake: find_package(knead) -> knead::knead   (tests/install/consumer/CMakeLists.txt)
#   2. pkg-config: cc main.c $(pkg-config --cflags --libs knead)
# and run both programs. Usage: tests/install/run.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

# the compiler and build type the library was built with
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cc=$(cache CMAKE_C_COMPILER)
build_type=$(cache CMAKE_BUILD_TYPE)

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log"
libdir=$(cache CMAKE_INSTALL_LIBDIR)
for f in include/knead/knead.h include/knead/common/common.h include/knead/multibody/multibody.h \
         include/knead/urdf/urdf.h "$libdir/libknead.a" "$libdir/cmake/knead/kneadConfig.cmake" \
         "$libdir/pkgconfig/knead.pc" bin/knead bin/knead-bench; do
  if [ ! -e "$prefix/$f" ]; then
    echo "missing from the install: $f" >&2
    exit 1
  fi
done

echo "== find_package(knead)"
cmake -S "$here/consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$build_type" > "$tmp/configure.log" ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/cmake-build" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
"$tmp/cmake-build/knead_consumer"

echo "== pkg-config knead"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
flags=$(pkg-config --cflags --libs knead)
echo "pkg-config --cflags --libs knead: $flags"
# shellcheck disable=SC2086  # flags are meant to split
"$cc" -std=c17 "$here/consumer/main.c" -o "$tmp/pc-consumer" $flags
"$tmp/pc-consumer"
echo "install test passed"
