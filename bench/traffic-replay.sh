#!/usr/bin/env bash
# Replay benchmarks on loopback (crates/exp-traffic/examples/replay_bench.rs,
# release build, initiator and acceptor in one process):
#
#   1. start accuracy: RATE new connections/s for SECONDS, p50/p99/max of
#      actual − planned start;
#   2. HOLD connections open at once (each holds HOLD_SECONDS between two
#      exchanges; needs 2 descriptors per connection, the example raises the
#      limit itself and says so when it cannot);
#   3. one bulk connection's throughput against iperf3 on the same machine,
#      in the same run, moving the same number of bytes; prints the ratio.
#
#   bench/traffic-replay.sh [--rate 1000] [--seconds 10] [--hold 10000] [--hold-seconds 5]
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
while [ $# -gt 0 ]; do
  case $1 in
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

echo "== single bulk connection vs iperf3, ${seconds}s"
if ! command -v iperf3 >/dev/null; then
  echo "iperf3 is missing: apt-get install -y iperf3" >&2
  exit 1
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout $((seconds + 30)) iperf3 -s -1 -B 127.0.0.1 -p "$port" >/dev/null &
server=$!
sleep 0.5
report=$(timeout $((seconds + 20)) iperf3 -c 127.0.0.1 -p "$port" -t "$seconds" -J)
wait "$server" || true
iperf_bytes=$(jq '.end.sum_received.bytes' <<<"$report")
iperf_gbit=$(jq '.end.sum_received.bits_per_second / 1e9' <<<"$report")
echo "iperf3 bytes=$iperf_bytes gbit_per_s=$(printf '%.3f' "$iperf_gbit")"
line=$(timeout $((seconds * 4 + 30)) "$bench" bulk "$iperf_bytes")
echo "$line"
replay_gbit=$(sed -n 's/.*gbit_per_s=\([0-9.]*\).*/\1/p' <<<"$line")
python3 -c "print(f'ratio replay/iperf3 = {$replay_gbit / $iperf_gbit:.3f} (target >= 0.9)')"
