#!/usr/bin/env bash
# Fuzz one target until its coverage of expc's own code stops growing: run
# the built fuzzer on its committed corpus and stop it once no new PC in
# the project's crates/ has been found for QUIET seconds (or after MAX
# seconds). Edges in library code reached with new data (a sort's branches
# for a new length, UTF-8 boundary checks, integer parsing) keep coming
# long after the project's code is covered, so they do not count; both are
# printed: the run's length, executions, edges at start and end, and when
# the last new PC in crates/ came.
#
#   cargo +nightly fuzz build -O
#   fuzz/plateau.sh TARGET [QUIET=1800] [MAX=7200] [extra libFuzzer flags…]
#
# Needs llvm-symbolizer on the PATH (libFuzzer names each new PC's source
# file with it). The binary is copied first so that a rebuild during the
# run does not touch it. The log is kept in $LOGDIR (default /tmp) as
# TARGET.log.
set -euo pipefail
target=$1
quiet=${2:-1800}
max=${3:-7200}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")" && pwd)
crates=$(cd "$here/../crates" && pwd)
command -v llvm-symbolizer >/dev/null || { echo "llvm-symbolizer is not on the PATH" >&2; exit 2; }
logdir=${LOGDIR:-/tmp}
bindir=$(mktemp -d)
bin=$bindir/$target
cp "$here/target/x86_64-unknown-linux-gnu/release/$target" "$bin"
log=$logdir/$target.log
extra=("$@")
if [ "$target" = parse ]; then extra+=("-dict=$here/dicts/exp.dict"); fi

# `own_pcs`: "COUNT LAST_RUN" of the new PCs in crates/ found after start-up.
own_pcs() {
  awk -v crates="$crates/" '/INITED/ {on = 1} /^#[0-9]+/ {run = $1}
    on && /NEW_PC/ && index($0, crates) {n++; last = run}
    END {print n + 0, (last == "" ? "-" : last)}' "$log"
}

start=$(date +%s)
"$bin" "$here/corpus/$target" -max_total_time="$max" -rss_limit_mb=2048 \
  -timeout=60 -print_final_stats=1 -print_pcs=1 -artifact_prefix="$logdir/$target-" \
  "${extra[@]}" >"$log" 2>&1 &
pid=$!
# On any exit, interrupted or not: the fuzzer stopped, its copy removed.
trap 'kill -INT $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$bindir"' EXIT

last_own=0 last_change=$start
while kill -0 "$pid" 2>/dev/null; do
  sleep 10
  read -r own _ < <(own_pcs)
  if [ "$own" -gt "$last_own" ]; then
    last_own=$own last_change=$(date +%s)
  fi
  if [ $(($(date +%s) - last_change)) -ge "$quiet" ]; then
    kill -INT "$pid" 2>/dev/null || true
    break
  fi
done
wait "$pid" || true
end=$(date +%s)
edges() { grep -oE "$1 cov: [0-9]+" "$log" | tail -1 | grep -oE '[0-9]+$' || echo '?'; }
execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
read -r own own_at < <(own_pcs)
# Crashes, timeouts, leaks and OOMs stop libFuzzer and leave an artifact;
# slow units (over 10 s, below the timeout) are listed apart: rerun one
# alone before taking it for a hang, a starved fuzzer writes them too.
crashes=$(grep -cE 'Test unit written to .*(crash|timeout|oom|leak)-' "$log" || true)
slow=$(grep -cE 'Test unit written to .*slow-unit-' "$log" || true)
printf '%s: %d s, %s executions; edges %s -> %s; %s new PCs in crates/ (the last at run %s, then %d s without one); crashes, timeouts, OOMs: %s; slow units: %s (in %s)\n' \
  "$target" $((end - start)) "$execs" "$(edges INITED)" "$(edges '')" "$own" "$own_at" \
  $((end - last_change)) "$crashes" "$slow" "$logdir"
