#!/usr/bin/env bash
# tools/mpi_check (registered when CMake found MPI): `mpirun --oversubscribe -n 3 knead check
# examples/regression` against `knead check -j 1`: the same report on stdout (every scene's
# PASS/FAIL lines and the summary), the same JUnit file but for times (so the same final state
# hashes, which the golden testcases list), the same exit status. Then `knead sweep` the same way:
# the same sweep.csv and sweep.json but for wall times. And `knead compare` (two fidelity scenes,
# sap / ipc (refused on the wedged block: it starts pressed into its walls) / none): the same compare.json but for wall times, the same CSVs. Last,
# a scene whose process dies (SIGKILL, as from the OOM killer, to the forked child running it,
# mpm_squeeze, 2 s in; SIGSEGV would be caught by the sanitizer build's handler)
# under mpirun: that scene is reported as an ERROR naming the signal, the others as usual, and
# the job ends with status 1 instead of hanging.
#   bash tests/tools/mpi_check.sh KNEAD MPIRUN SOURCE_DIR
set -euo pipefail
knead=$1 mpirun=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 # a root container (CI)
# the sanitizer build: OpenMPI's own allocations at MPI_Init are never freed (not knead's leaks)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
cd "$tmp"
set +e
"$knead" check "$src/examples/regression" -j 1 --junit j1.xml > j1.txt
j1=$?
"$mpirun" --oversubscribe -n 3 "$knead" check "$src/examples/regression" --junit mpi.xml > mpi.txt
mpi=$?
set -e
strip() { sed -E 's/ time="[^"]*"//; s/ timestamp="[^"]*"//' "$1"; }
fail=0
[ "$j1" = "$mpi" ] || { echo "exit status: -j 1 $j1, mpirun $mpi"; fail=1; }
diff j1.txt mpi.txt || { echo "the reports differ (< -j 1, > mpirun -n 3)"; fail=1; }
diff <(strip j1.xml) <(strip mpi.xml) || { echo "the JUnit files differ (< -j 1, > mpirun -n 3)"; fail=1; }
hashes=$(grep -c "final state hash: " mpi.xml || true)
[ "$hashes" -gt 0 ] || { echo "no final state hash in the JUnit report"; fail=1; }
sweep=("$src/examples/ball_on_slope.yaml" --set "objects[1].friction=0.1:0.5:3" --set duration=0.1:0.2:2)
"$knead" sweep "${sweep[@]}" --out s1 > /dev/null || true
"$mpirun" --oversubscribe -n 3 "$knead" sweep "${sweep[@]}" --out sm > /dev/null || true
nowall() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall_time_s") w = i } { $w = ""; print }' "$1"; }
diff <(nowall s1/sweep.csv) <(nowall sm/sweep.csv) || { echo "sweep.csv differs"; fail=1; }
diff <(grep -v wall_time_s s1/sweep.json) <(grep -v wall_time_s sm/sweep.json) || { echo "sweep.json differs"; fail=1; }
[ "$(wc -l < sm/sweep.csv)" = 7 ] || { echo "sweep.csv under mpirun: not 6 rows"; cat sm/sweep.csv; fail=1; }
cmp=("$src/examples/fidelity/ball_slope_45_mu_0_2.yaml" "$src/examples/fidelity/wedged_block_mu_0_4_jams.yaml"
     --backends sap,ipc,none)
"$knead" compare "${cmp[@]}" --out c1 > /dev/null || { echo "compare -j 1 failed"; fail=1; }
"$mpirun" --oversubscribe -n 3 "$knead" compare "${cmp[@]}" --out cm > /dev/null || { echo "compare under mpirun failed"; fail=1; }
diff <(grep -v wall_per_step c1/compare.json) <(grep -v wall_per_step cm/compare.json) || { echo "compare.json differs"; fail=1; }
diff -r -x plots -x compare.json -x compare.md c1 cm || { echo "compare's CSVs differ"; fail=1; }
grep -q '"status": "refused"' cm/compare.json || { echo "compare under mpirun: no refused cell"; fail=1; }
# a crash under mpirun: kill a scene's process (a forked child: its parent is a knead rank) once it
# has run 2 s, which only the MPM scene does (the rigid ones take well under a second); polled for
# up to 60 s, so a slow start (the sanitizer build, a loaded machine) is waited for
crash=("$src/examples/mpm_squeeze.yaml" "$src/examples/fidelity/ball_slope_45_mu_0.yaml"
       "$src/examples/fidelity/five_box_stack.yaml")
timeout 300 "$mpirun" --oversubscribe -n 3 "$knead" check "${crash[@]}" --junit crash.xml > crash.txt &
job=$!
victim=""
# descendants of a process (this job's only: other knead runs on the machine are not ours)
descendants() { local c; for c in $(pgrep -P "$1" || true); do echo "$c"; descendants "$c"; done; }
for _ in $(seq 120); do
  sleep 0.5
  for p in $(descendants "$job"); do
    [ "$(ps -o comm= -p "$p" 2>/dev/null)" = knead ] || continue
    pp=$(ps -o ppid= -p "$p" | tr -d ' ')
    age=$(ps -o etimes= -p "$p" | tr -d ' ')
    if [ -n "$pp" ] && [ -n "$age" ] && [ "$age" -ge 2 ] && [ "$(ps -o comm= -p "$pp" 2>/dev/null)" = knead ]; then
      victim=$p
    fi
  done
  [ -n "$victim" ] && break
done
if [ -z "$victim" ]; then
  echo "crash test: no scene process ran for 2 s"; fail=1
else
  kill -KILL "$victim" || true
fi
set +e
wait $job
crashrc=$?
set -e
[ "$crashrc" = 1 ] || { echo "crash test: exit status $crashrc, expected 1 (124: hung)"; fail=1; }
grep -q "killed by signal 9" crash.txt || { echo "crash test: no ERROR naming signal 9"; cat crash.txt; fail=1; }
grep -q "3 scenes, " crash.txt || { echo "crash test: not every scene reported"; cat crash.txt; fail=1; }
[ $fail = 0 ] && echo "mpirun -n 3 = -j 1: $(tail -n 1 mpi.txt); $hashes final state hashes equal; compare.json and its CSVs equal; a killed scene reported: $(tail -n 1 crash.txt)"
exit $fail
