#!/usr/bin/env bash
# Plan-scale benchmark: generates sweeps of 10,000 and 1,000,000 trials (a
# fleet sized by one parameter, a cpuoccupy anomaly loaded by the other, a
# monitor) and `wide`, 1,000,000 trials of one fleet naming both parameters
# (devices × gap, 1,000 values each: its fields) beside an anomaly, then
# measures with /usr/bin/time -v (release build):
#   - `expc check` and `expc plan -o plan.json`: wall time, peak RSS, plan size;
#   - `expc run plan.json --trials LAST --dry-run`: reading the plan back,
#     preflight and the schedule of one trial;
#   - `expc run plan.json --trials LAST --time-scale 0.01`: how long after the
#     process starts the last trial of the million starts (the manifest's
#     `started_at_unix_ns`);
#   - `expc run plan.json --shard 0/4`: how long until a shard's first trial
#     starts (its manifest lists a quarter of the trials; the start is in
#     its journal).
# Targets (issue 13): 1,000,000 trials check and plan in ≤ 1 s and ≤ 200 MB,
# plan ≤ 50 MB, a trial starts ≤ 1 s after its runner. The 5,000-line spec is
# measured by `cargo bench -p exp-check --bench check_and_plan`.
#
#   bench/plan-scale.sh            # 10000, 1000000, wide and long
#   bench/plan-scale.sh long       # one of them (or long-dist)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 1000000 wide long)

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
cargo build --release -p expc
expc="$CARGO_TARGET_DIR/release/expc"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# `n` × 100 sweep points, `repeat` repetitions each (the criterion bench's
# sweep_spec): 100 × 100 × 1 = 10,000 trials, 1000 × 100 × 10 = 1,000,000.
spec() {
  local n=$1 repeat=$2
  local sizes
  # From 128 B: a fleet's JSON payload needs 104 B (preflight checks them all).
  sizes=$(seq -s ', ' 128 64 $((n * 64 + 64)) | sed 's/\([0-9]\+\)/\1B/g')
  cat <<EOF
experiment "sweep" {
  duration = 60s
  repeat   = $repeat

  sweep {
    size        = [$sizes]
    utilization = 1%..100% step 1%
  }

  fleet "plant" {
    devices = 10
    gap     = pareto(shape = 3, median = 100ms)
    payload = json(size = size)
  }

  anomaly "cpu" {
    kind        = cpuoccupy
    utilization = utilization
    at          = 10s
    for         = 30s
  }

  monitor {}
}
EOF
}

# A million points of one fleet, an anomaly and a monitor: SWEEP is the
# sweep block's body, FLEET the fleet's properties besides its payload.
# `wide` names two parameters of 1,000 values (one variant and three fields:
# devices, its shard count, gap); `long` and `long-dist` one parameter of
# 1,000,000 values, a range kept as one in the plan. In `long` the fleet's
# connect rate takes its values (a field of a million numbers); in
# `long-dist` the mean of its gap distribution does (a field of a million
# distributions: the plan holds each distinct value, so this one is over the
# targets, see docs/language.md §9).
fleet_spec() {
  local sweep=$1 fleet=$2
  cat <<EOF
experiment "sweep" {
  duration = 60s

  sweep {
    $sweep
  }

  fleet "plant" {
    $fleet
    payload = json(size = 128B)
  }

  anomaly "cpu" {
    kind        = cpuoccupy
    utilization = 50%
    at          = 10s
    for         = 30s
  }

  monitor {}
}
EOF
}

# Prints "wall s, max RSS MB" of a command measured by /usr/bin/time -v.
measure() {
  local log=$work/time.log
  /usr/bin/time -v "$@" >"$work/out.log" 2>"$log" || { cat "$work/out.log" "$log"; exit 1; }
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, t, ":"); wall = t[n] + (n > 1 ? t[n-1] * 60 : 0) }
    /Maximum resident set size/ { rss = $2 / 1024 }
    END { printf "%6.2f s  %7.1f MB", wall, rss }' "$log"
}

for trials in "${sizes[@]}"; do
  case $trials in
    10000) spec 100 1 >"$work/sweep.exp" ;;
    1000000) spec 1000 10 >"$work/sweep.exp" ;;
    wide) fleet_spec "devices = 1..1000 step 1
    gap     = 10ms..10s step 10ms" "devices = devices
    gap     = exponential(mean = gap)" >"$work/sweep.exp" ;;
    long) fleet_spec "rate = 1/s..1000000/s step 1/s" "devices = 10
    gap     = 100ms
    connect_rate = rate" >"$work/sweep.exp" ;;
    long-dist) fleet_spec "mean = 1ms..1000s step 1ms" "devices = 10
    gap     = exponential(mean = mean)" >"$work/sweep.exp" ;;
    *) echo "sizes: 10000, 1000000, wide, long or long-dist" >&2; exit 2 ;;
  esac
  echo "== $trials ($(wc -l <"$work/sweep.exp") spec lines)"
  case $trials in wide | long*) trials=1000000 ;; esac
  echo "  check          $(measure "$expc" check "$work/sweep.exp")"
  echo "  plan -o        $(measure "$expc" plan "$work/sweep.exp" -o "$work/plan.json")  $(du -b "$work/plan.json" | awk '{ printf "%.1f MB of plan", $1 / 1e6 }')"
  last=$((trials - 1))
  echo "  run --dry-run  $(measure "$expc" run "$work/plan.json" --trials "$last" --dry-run --out "$work/runs")"
  start=$(date +%s%N)
  "$expc" run "$work/plan.json" --trials "$last" --time-scale 0.01 --out "$work/runs" >"$work/run.log" 2>&1 \
    || { cat "$work/run.log"; exit 1; }
  manifest=$(find "$work/runs" -name manifest.json)
  # The trial record's start (the run's own is `started_unix_ns`).
  started=$(grep -m1 -o '"started_at_unix_ns": [0-9][0-9]*' "$manifest" | grep -o '[0-9]*$')
  status=$(grep -m1 -o '"status": "[a-z]*"' "$manifest" | cut -d'"' -f4)
  echo "  run --trials $last: the trial starts $(( (started - start) / 1000000 )) ms after the runner (run $status)"
  rm -rf "$work/runs"
  # Shard 0 of 4 (a quarter of the trials in its manifest): when its first
  # trial starts, then Ctrl-C.
  start=$(date +%s%N)
  "$expc" run "$work/plan.json" --shard 0/4 --run-id shard --time-scale 0.01 --out "$work/runs" >"$work/run.log" 2>&1 &
  runner=$!
  # A trial's start is journaled beside the fragment (docs/running.md).
  journal="$work/runs/sweep/shard/manifest-shard-0.journal"
  started=""
  for _ in $(seq 600); do
    started=$(grep -m1 -o '"started_at_unix_ns":[0-9][0-9]*' "$journal" 2>/dev/null | grep -o '[0-9]*$' || true)
    [ -n "$started" ] && break
    sleep 0.05
  done
  kill -INT "$runner" 2>/dev/null || true
  wait "$runner" || true
  [ -n "$started" ] || { cat "$work/run.log"; echo "shard 0/4 never started a trial" >&2; exit 1; }
  echo "  run --shard 0/4: $(( trials / 4 )) trials, the first starts $(( (started - start) / 1000000 )) ms after the runner"
  rm -rf "$work/runs"
done
