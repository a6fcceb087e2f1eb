#!/usr/bin/env bash
# Install a knead build into a temporary prefix and use it the ways a user would:
#   1. every installed public header compiles alone with -I<prefix>/include only
#   2. CMake: find_package(knead) -> knead::knead (static) and knead::knead_shared
#   3. pkg-config: cc main.c $(pkg-config --cflags --libs knead)         (libknead.so)
#                  cc main.c $(pkg-config --cflags --libs knead-static)  (libknead.a)
#   4. the prefix moved elsewhere: its bin/knead and a program linked to its libknead.so render
#      replay.html with the prefix's own share/knead/three.min.js
# and run the programs. Usage: tests/install/run.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "install test: $*" >&2; exit 1; }
# has PATTERN: stdin matches. Not grep -q in a pipe: under pipefail, ldd killed by SIGPIPE when grep -q
# stops reading at the first match fails the pipeline (a flaky "does not load").
has() { grep -- "$1" >/dev/null; }

# the compiler and build type the library was built with
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cc=$(cache CMAKE_C_COMPILER)
build_type=$(cache CMAKE_BUILD_TYPE)
sanitize=$(cache KNEAD_SANITIZE)
# a sanitized libknead reports the leaks of the tools it runs under (gnuplot, npm): not ours to test
export ASAN_OPTIONS=detect_leaks=0

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log"
libdir=$(cache CMAKE_INSTALL_LIBDIR)
for f in include/knead/knead.h include/knead/common/common.h include/knead/multibody/multibody.h \
         include/knead/urdf/urdf.h include/knead/scene/scene.h include/knead/sim/sim.h \
         include/knead/output/output.h include/knead/check/check.h "$libdir/libknead.a" "$libdir/libknead.so" \
         "$libdir/libknead.so.0.1" "$libdir/cmake/knead/kneadConfig.cmake" "$libdir/pkgconfig/knead.pc" \
         "$libdir/pkgconfig/knead-static.pc" bin/knead bin/knead-bench; do
  [ -e "$prefix/$f" ] || fail "missing from the install: $f"
done
soname=$(objdump -p "$prefix/$libdir/libknead.so" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = libknead.so.0.1 ] || fail "libknead.so's soname is '$soname', expected libknead.so.0.1"
echo "libknead.so soname: $soname"

echo "== each public header alone, -I$prefix/include only"
for h in knead.h $(cd "$prefix/include/knead" && ls ./*/*.h | sed 's|^\./||'); do
  printf '#include <knead/%s>\nint main(void) { return 0; }\n' "$h" > "$tmp/header.c"
  "$cc" -std=c17 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" "$tmp/header.c" ||
    fail "<knead/$h> does not compile with -I$prefix/include alone"
done

echo "== find_package(knead)"
cmake -S "$here/consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$build_type" > "$tmp/configure.log" ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/cmake-build" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
"$tmp/cmake-build/knead_consumer"
"$tmp/cmake-build/knead_consumer_shared"
ldd "$tmp/cmake-build/knead_consumer_shared" | has "libknead.so.0.1 => $prefix/" ||
  fail "knead_consumer_shared does not load $prefix's libknead.so"

echo "== pkg-config knead (shared) and knead-static"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
for m in knead knead-static; do
  cflags=$(pkg-config --cflags "$m")
  echo "pkg-config --cflags $m: $cflags"
  case "$cflags" in *include/knead*) fail "$m.pc puts include/knead on the include path: $cflags" ;; esac
  # knead's own link flags (the dependencies' modules add their own)
  grep -E '^(Libs|Cflags)' "$prefix/$libdir/pkgconfig/$m.pc" | has "/usr/lib" &&
    fail "$m.pc hard-codes a /usr/lib folder: $(grep -E '^Libs' "$prefix/$libdir/pkgconfig/$m.pc")"
done
flags=$(pkg-config --cflags --libs knead)
echo "pkg-config --cflags --libs knead: $flags"
# shellcheck disable=SC2086  # flags are meant to split
"$cc" -std=c17 "$here/consumer/main.c" -o "$tmp/pc-shared" $flags -Wl,-rpath,"$prefix/$libdir"
ldd "$tmp/pc-shared" | has "libknead.so.0.1 => $prefix/" || fail "pc-shared does not load $prefix's libknead.so"
"$tmp/pc-shared"
flags=$(pkg-config --cflags --libs knead-static)
echo "pkg-config --cflags --libs knead-static: $flags"
# shellcheck disable=SC2086
"$cc" -std=c17 "$here/consumer/main.c" -o "$tmp/pc-static" $flags
ldd "$tmp/pc-static" | has libknead && fail "pc-static loads a libknead.so"
"$tmp/pc-static"

echo "== replay.html from a moved prefix"
if [ ! -e "$prefix/share/knead/three.min.js" ]; then
  echo "three.js was not installed by this build (no npm or no registry at build time): skipped"
else
  moved=$tmp/moved
  mv "$prefix" "$moved"
  # mark the moved prefix's copy: replay.html must inline that one
  echo "/* knead install test: the moved prefix's three.min.js */" >> "$moved/share/knead/three.min.js"
  cat > "$tmp/ball.yaml" << 'EOF'
time_step: 0.01
duration: 0.05
objects:
  - {name: ball, shape: {sphere: 0.05}, mass: 1, pose: {xyz: [0, 0, 1]}}
output: {html: true, frame_rate: 50}
EOF
  (cd "$tmp" && env -u KNEAD_THREE_JS "$moved/bin/knead" run ball.yaml --out "$tmp/html-cli" > /dev/null)
  grep -q "the moved prefix's three.min.js" "$tmp/html-cli/replay.html" ||
    fail "bin/knead's replay.html does not inline $moved/share/knead/three.min.js"
  echo "bin/knead: replay.html inlines the moved prefix's three.js"
  # a program linked to the moved libknead.so, found next to the library
  # shellcheck disable=SC2046
  "$cc" -std=c17 "$here/consumer/main.c" -o "$tmp/html-shared" -I"$moved/include" -L"$moved/$libdir" -lknead \
    -Wl,-rpath,"$moved/$libdir" $([ "$sanitize" = ON ] && echo -fsanitize=address,undefined)
  env -u KNEAD_THREE_JS "$tmp/html-shared" "$tmp/html-lib"
  grep -q "the moved prefix's three.min.js" "$tmp/html-lib/replay.html" ||
    fail "replay.html of a program linked to libknead.so does not inline $moved/share/knead/three.min.js"
  echo "libknead.so: replay.html inlines the moved prefix's three.js"
fi
echo "install test passed"
