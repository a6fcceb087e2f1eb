#!/usr/bin/env bash
# Build the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined; KNEAD_FUZZ=ON) in
# build-fuzz/ and run each for SECONDS (default 60), seeded with the project's own files: scenes
# (examples/), URDFs (examples/models/, plus ../shared/models when it exists, read in place) and
# volume meshes (tests/deformable/data/). Inputs the fuzzer finds interesting accumulate in
# build-fuzz/corpus/<target>; a crash, leak or UBSan report stops the run, leaves the input in
# build-fuzz/artifacts/ and makes this script fail.
#   bash tests/fuzz/run.sh 60   (each target about 60 s of CPU; the three run at once)
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KNEAD_FUZZ_BUILD:-$root/build-fuzz}
jobs=${KNEAD_FUZZ_JOBS:-2}
shared=$(cd "$root/.." && pwd)/shared/models

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DKNEAD_FUZZ=ON -DKNEAD_TESTS=OFF -DKNEAD_BENCH=OFF -DKNEAD_SANITIZE=OFF > /dev/null
cmake --build "$build" -j "$jobs" --target fuzz_urdf fuzz_scene fuzz_mesh

# seeds: small files only (libFuzzer's -max_len below), copied under content hashes
seed() { # target, files...
  local dir="$build/seeds/$1"
  shift
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 65536 ] && cp "$f" "$dir/$(sha1sum "$f" | cut -c1-16)"
  done
  return 0
}
seed scene "$root"/examples/*.yaml "$root"/examples/regression/*.yaml
seed urdf "$root"/examples/models/*.urdf
if [ -d "$shared" ]; then
  mapfile -t urdfs < <(find "$shared" -name '*.urdf' -size -64k | sort | head -n 300)
  seed urdf "${urdfs[@]}"
fi
seed mesh "$root"/tests/deformable/data/*

# The three targets run at once, each for SECONDS x 3 / jobs of wall time, so that each gets about
# SECONDS of CPU on `jobs` cores (on CI's 2 cores: 90 s of wall for the three, not 180 s).
wall=$(( (secs * 3 + jobs - 1) / jobs ))
fuzz() { # target
  local t=$1
  mkdir -p "$build/corpus/$t" "$build/artifacts"
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$wall" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$build/artifacts/$t-" -print_final_stats=1 "$build/corpus/$t" "$build/seeds/$t" \
    > "$build/fuzz_$t.log" 2>&1
}
declare -A pid
for t in urdf scene mesh; do
  echo "knead fuzz: $t for $wall s (of wall, with the others)"
  fuzz "$t" &
  pid[$t]=$!
done
status=0
for t in urdf scene mesh; do
  if ! wait "${pid[$t]}"; then
    echo "knead fuzz: $t FAILED (input in $build/artifacts/, log $build/fuzz_$t.log):"
    grep -E "ERROR|SUMMARY|runtime error" "$build/fuzz_$t.log" | head -n 20 || true
    status=1
  else
    echo -n "knead fuzz: $t: "
    grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$build/fuzz_$t.log" | tr '\n' ' '
    echo
  fi
done
exit $status
