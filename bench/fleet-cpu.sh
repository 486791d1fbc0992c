#!/usr/bin/env bash
# The fleet runner's CPU per message, compared across builds: runs
# bench/fleet-scale.exp (5 QoS 1 msg/s per device, 100 B and 2 KiB) at
# 4,000 and 2,000 devices against a Mosquitto started here on a free
# loopback port (so the broker's CPU is not the runner's), ROUNDS times for
# each binary, interleaved: every round runs each binary once at each fleet
# size, and the order of the binaries rotates from round to round, so a
# drift of the machine does not land on one build.
#
# Each run prints, per payload size, the fleet's `runner_cpu_per_message`
# (the expc process's CPU over the whole trial, connecting included,
# divided by the messages sent), send lateness p99, ack latency p99 and
# messages lost; the summary gives min / median / max of the CPU per message
# for each binary, fleet size and payload, and the load (`uptime`) before
# and after. Connecting is counted and does not shrink with TIME_SCALE, so
# compare runs at the same scale only (at 0.1 it is most of the figure).
#
#   bench/fleet-cpu.sh                                  # 3 rounds, this tree's release build
#   EXPC="/tmp/expc-old target/release/expc" bench/fleet-cpu.sh 5
#   TIME_SCALE=0.25 DEVICES="4000" bench/fleet-cpu.sh 3  # shorter runs, one size
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. bench/lib/mosquitto.sh
rounds=${1:-3}
devices=${DEVICES:-4000 2000}
time_scale=${TIME_SCALE:-0.5}

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
if [ -z "${EXPC:-}" ]; then
  cargo build --release -p expc
fi
read -r -a binaries <<<"${EXPC:-$CARGO_TARGET_DIR/release/expc}"
ulimit -n "$(ulimit -Hn)"

work=$(mktemp -d)
broker_pid=""
cleanup() {
  [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

port=$(free_port 18830)
fleet_mosquitto_conf "$port" >"$work/mosquitto.conf"

echo "load before: $(uptime)"
: >"$work/results"
for round in $(seq 1 "$rounds"); do
  n=${#binaries[@]}
  for i in $(seq 0 $((n - 1))); do
    bin=${binaries[$(((i + round - 1) % n))]}
    for d in $devices; do
      # A fresh broker per run: no sessions or queues carried over.
      /usr/sbin/mosquitto -c "$work/mosquitto.conf" &
      broker_pid=$!
      sleep 0.5
      sed -e "s#mqtt://127.0.0.1:1883#mqtt://127.0.0.1:$port#" \
        -e "s#devices      = 4000#devices      = $d#" bench/fleet-scale.exp >"$work/fleet.exp"
      rm -rf "$work/runs"
      if ! "$bin" run "$work/fleet.exp" --out "$work/runs" --force --time-scale "$time_scale" >/dev/null 2>"$work/run.err"; then
        cat "$work/run.err" >&2
        exit 1
      fi
      kill "$broker_pid"
      wait "$broker_pid" 2>/dev/null || true
      broker_pid=""
      manifest=$(ls "$work"/runs/*/*/manifest.json)
      jq -r --arg bin "$bin" --arg d "$d" '.trials[] | [$bin, $d, (.sweep.size | tostring),
          (.metrics.runner_cpu_per_message / 1000), (.metrics.send_lateness_p99 / 1e6),
          (.metrics.ack_latency_p99 / 1e6), .metrics.messages_lost] | @tsv' "$manifest" |
        tee -a "$work/results" |
        awk -F'\t' -v r="$round" '{ printf "round %d  %s  %s devices  %s: %.1f µs/msg, lateness p99 %.2f ms, ack p99 %.2f ms, lost %d\n", r, $1, $2, $3, $4, $5, $6, $7 }'
    done
  done
done
echo "load after: $(uptime)"
echo "runner CPU per message (µs), min / median / max over $rounds rounds:"
sort -t$'\t' -k1,1 -k2,2nr -k3,3 -k4,4n "$work/results" |
  awk -F'\t' '
    { key = $1 "  " $2 " devices  " $3; v[key, ++n[key]] = $4; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
    END { for (i = 1; i <= k; i++) { key = order[i]; c = n[key]
      printf "  %s: %.1f / %.1f / %.1f\n", key, v[key, 1], (c % 2 ? v[key, (c + 1) / 2] : (v[key, c / 2] + v[key, c / 2 + 1]) / 2), v[key, c] } }'
