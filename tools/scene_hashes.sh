#!/bin/sh
# Final state hash of every example, benchmark and regression scene, one line each: "scene hash".
# For refactorings that must not change results: run before and after, then diff the two lists.
# usage: tools/scene_hashes.sh [KNEAD (default ./build/knead)] [JOBS (default 2)]
knead=$(realpath "${1:-./build/knead}")
jobs=${2:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ls "$root"/examples/*.yaml "$root"/examples/bench/*.yaml "$root"/examples/regression/*.yaml |
  xargs -P "$jobs" -I{} sh -c 'n=$(echo "{}" | sed "s|^$0/||; s|/|_|g"); cd "$1" && "$2" run "{}" --out "$1/$n" >/dev/null 2>&1;
    h=$(grep -o "\"final_state_hash\": \"[0-9a-f]*\"" "$1/$n/summary.json" 2>/dev/null | cut -d\" -f4);
    echo "${n%.yaml} ${h:-FAILED}"' "$root" "$out" "$knead" | sort
