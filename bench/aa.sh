#!/usr/bin/env bash
# A/A benchmark of the trial order (issue 34): one spec with two identical
# points (they differ only in the devices' client-id template, which changes
# nothing measurable) x N repetitions of a short fleet trial against a local
# Mosquitto, run twice: `order = randomized` and `order = sequential`. Beside
# each run a bounded CPU interferer drifts the machine: one busy loop per
# core for the FIRST HALF of the run's planned time, then nothing. That is
# the drift sequential order is exposed to (every repetition of point 0 runs
# in the hogged half, every repetition of point 1 in the quiet one), while
# randomized rounds put both points in both halves alike. Then `expc report
# RUN --points 0 1 --json` compares the points per metric (Welch + TOST at
# the default ±5 % margin, 95 %), and the script prints, per order, the share
# of metrics it calls "different": with invalid trials left out (the
# default) and with them counted (--include-invalid).
#
#   bench/aa.sh                 # N = 8: each run about 2 min 30 s
#   bench/aa.sh --reps 6        # shorter
#
# Bounded: each run is stopped by `timeout` after 200 s, the interferer by
# `timeout` too; the whole script (release build done) takes under 6 min,
# stops its hog and its broker itself (also on Ctrl-C), and removes its
# scratch directory. Release build: `cargo build --release -p expc` first
# (the script builds it if missing). On a busy machine the figures include
# the other load; the comparison is meant for a quiet one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=8
while [ $# -gt 0 ]; do
  case $1 in
    --reps) reps=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
case $reps in ''|*[!0-9]*) echo "--reps takes a count" >&2; exit 2 ;; esac
if [ "$reps" -lt 3 ] || [ "$reps" -gt 10 ]; then echo "--reps from 3 to 10 (the 6-minute bound)" >&2; exit 2; fi

target=${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}
expc=${EXPC:-$target/release/expc}  # EXPC: another build, to try the script
if [ ! -x "$expc" ]; then
  (cd "$root" && CARGO_TARGET_DIR=$target cargo build --release -p expc)
fi
command -v mosquitto >/dev/null || { echo "mosquitto not found (apt-get install mosquitto)" >&2; exit 1; }

work=$(mktemp -d -t expc-aa.XXXXXX)
broker_pid=""
hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
  hogs=()
}
cleanup() {
  stop_hogs
  if [ -n "$broker_pid" ]; then kill "$broker_pid" 2>/dev/null || true; wait "$broker_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest none\n' "$port" > "$work/mosquitto.conf"
mosquitto -c "$work/mosquitto.conf" &
broker_pid=$!
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

duration_s=6
pause_s=1
# Planned time of one run: every trial and the pauses between them.
run_s=$(( 2 * reps * (duration_s + pause_s) ))
half_s=$(( run_s / 2 ))

spec() { # $1: order
  cat <<SPEC
experiment "aa-$1" {
  description = "A/A: two identical points, $reps repetitions, $1 order"
  seed        = 34
  duration    = ${duration_s}s
  repeat      = $reps
  pause       = ${pause_s}s
  order       = $1

  sweep {
    // Two client-id templates: the points differ in nothing measurable.
    id = ["{fleet}-{index}", "aa-{fleet}-{index}"]
  }

  fleet "f" {
    devices        = 20
    gap            = 50ms
    client_id      = id
    warmup         = 1s
    // Loose enough that the hogged half is measured, not thrown out as
    // contended (V0101): the drift is what the benchmark is about.
    lateness_bound = 25ms
    broker { url = "mqtt://127.0.0.1:$port" }
  }
}
SPEC
}

share() { # $1: run dir, $2: extra report flag
  "$expc" report "$1" --points 0 1 --json $2 | python3 -c '
import json, sys
c = json.load(sys.stdin)
verdicts = [m["verdict"] for m in c["metrics"] if m["verdict"] is not None]
different = sum(v == "different" for v in verdicts)
untested = len(c["metrics"]) - len(verdicts)
left = c["left_out_baseline"]["trials"] + c["left_out_compared"]["trials"]
share = 100 * different / len(verdicts) if verdicts else float("nan")
print(f"{different:3d} of {len(verdicts):3d} metrics different ({share:5.1f} %), {untested} untested, {left} invalid trials left out")
'
}

declare -A results
for order in randomized sequential; do
  spec "$order" > "$work/aa-$order.exp"
  echo "== $order: $((2 * reps)) trials of ${duration_s} s; CPU hog on every core for the first ${half_s} s of ${run_s} s" >&2
  cores=$(nproc)
  for _ in $(seq "$cores"); do
    timeout "$half_s" sh -c 'while :; do :; done' &
    hogs+=($!)
  done
  timeout 200 "$expc" run "$work/aa-$order.exp" --out "$work/runs-$order" > "$work/$order.log" 2>&1 \
    || { echo "the $order run failed:" >&2; tail -20 "$work/$order.log" >&2; exit 1; }
  stop_hogs
  dir=$(ls -d "$work/runs-$order"/*/*/ | head -1)
  results[$order]="$(share "$dir" "")"
  results[$order-all]="$(share "$dir" --include-invalid)"
done

echo "A/A: two identical points x $reps repetitions, hog on all cores for the first half of each run"
for order in randomized sequential; do
  printf '%-11s invalid left out: %s\n' "$order" "${results[$order]}"
  printf '%-11s invalid counted:  %s\n' "" "${results[$order-all]}"
done
