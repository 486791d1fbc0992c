#!/usr/bin/env bash
# Replay benchmarks on loopback (crates/exp-traffic/examples/replay_bench.rs,
# release build, initiator and acceptor in one process):
#
#   1. start accuracy: RATE new connections/s for SECONDS, p50/p99/max of
#      actual − planned start;
#   2. HOLD connections open at once (each holds HOLD_SECONDS between two
#      exchanges; needs 2 descriptors per connection, the example raises the
#      limit itself and says so when it cannot);
#   3. one bulk connection's throughput against iperf3 on the same machine:
#      interleaved pairs moving the same bytes, timed alike; prints each
#      pair's ratio and their min/median/max.
#
#   bench/traffic-replay.sh [--rate 1000] [--seconds 10] [--hold 10000] [--hold-seconds 5]
#                           [--pairs 6] [--bulk-bytes 8589934592] [--separate] [--bulk-only]
#
# Every step is bounded by its arguments (and iperf3 by `-1` and timeouts).
# iperf3 comes from the Debian package (`apt-get install -y iperf3`).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"

rate=1000
seconds=10
hold=10000
hold_seconds=5
pairs=6
bulk_bytes=$((8 << 30))
separate=0
only_bulk=0
while [ $# -gt 0 ]; do
  case $1 in
    --pairs) pairs=$2; shift ;;
    --bulk-bytes) bulk_bytes=$2; shift ;;
    --separate) separate=1 ;;
    --bulk-only) only_bulk=1 ;;
    --rate) rate=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --hold) hold=$2; shift ;;
    --hold-seconds) hold_seconds=$2; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

cargo build --release -q -p exp-traffic --example replay_bench
bench="$CARGO_TARGET_DIR/release/examples/replay_bench"

if [ "$only_bulk" = 0 ]; then
echo "== start accuracy: $rate connections/s for ${seconds}s"
timeout $((seconds + 60)) "$bench" start "$rate" "$seconds"

echo "== $hold connections held open for ${hold_seconds}s, both sides in-process"
# Needs 2 descriptors per connection; when the hard limit is too low (and
# cannot be raised without CAP_SYS_RESOURCE) the preflight refuses, saying so.
timeout $((hold_seconds + 120)) "$bench" hold "$hold" "$hold_seconds" || true
echo "== $hold connections held open for ${hold_seconds}s, acceptor in a second process"
serve_out=$(mktemp)
timeout $((hold_seconds + 120)) "$bench" serve 127.0.0.1:0 $((hold_seconds + 60)) >"$serve_out" &
serve_pid=$!
for _ in $(seq 50); do grep -q listening= "$serve_out" && break; sleep 0.1; done
target=$(sed -n 's/listening=//p' "$serve_out")
timeout $((hold_seconds + 120)) "$bench" hold "$hold" "$hold_seconds" "$target"
kill "$serve_pid" 2>/dev/null || true
wait "$serve_pid" 2>/dev/null || true
rm -f "$serve_out"
fi

echo "== single bulk connection vs iperf3: $pairs interleaved pairs of $bulk_bytes bytes"
# Equal terms: both move exactly the same bytes over one loopback TCP
# connection, each timed from its first byte to the receiver's last
# (iperf3 -n: the receiver's report; the replay: first byte sent to last
# byte received). iperf3 always runs client and server as two processes;
# with --separate the replay's acceptor runs in a second process too.
# Pairs alternate which goes first, so drift in the machine's state does
# not favour one side.
if ! command -v iperf3 >/dev/null; then
  echo "iperf3 is missing: apt-get install -y iperf3" >&2
  exit 1
fi
iperf_once() {
  local port report
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  timeout 120 iperf3 -s -1 -B 127.0.0.1 -p "$port" >/dev/null &
  local server=$!
  sleep 0.3
  report=$(timeout 100 iperf3 -c 127.0.0.1 -p "$port" -n "$bulk_bytes" -J)
  wait "$server" || true
  jq '.end.sum_received.bits_per_second / 1e9' <<<"$report"
}
replay_once() {
  local line target="" serve_pid="" serve_out
  if [ "$separate" = 1 ]; then
    serve_out=$(mktemp)
    timeout 150 "$bench" serve 127.0.0.1:0 120 >"$serve_out" &
    serve_pid=$!
    for _ in $(seq 50); do grep -q listening= "$serve_out" && break; sleep 0.1; done
    target=$(sed -n 's/listening=//p' "$serve_out")
  fi
  line=$(timeout 100 "$bench" bulk "$bulk_bytes" $target)
  if [ -n "$serve_pid" ]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    rm -f "$serve_out"
  fi
  sed -n 's/.*gbit_per_s=\([0-9.]*\).*/\1/p' <<<"$line"
}
ratios=()
for pair in $(seq "$pairs"); do
  if [ $((pair % 2)) = 1 ]; then
    iperf=$(iperf_once); replay=$(replay_once)
  else
    replay=$(replay_once); iperf=$(iperf_once)
  fi
  ratio=$(python3 -c "print(f'{$replay / $iperf:.3f}')")
  ratios+=("$ratio")
  printf 'pair %d: replay %.2f Gbit/s, iperf3 %.2f Gbit/s, ratio %s\n' "$pair" "$replay" "$iperf" "$ratio"
done
sorted=$(printf '%s\n' "${ratios[@]}" | sort -g)
echo "ratio replay/iperf3 over $pairs pairs: min $(head -1 <<<"$sorted"), median $(sed -n "$(((pairs + 1) / 2))p" <<<"$sorted"), max $(tail -1 <<<"$sorted") (target: median >= 0.9)"
