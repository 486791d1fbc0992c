#!/usr/bin/env bash
# Closed-loop MQTT throughput table: 10, 100 and 1,000 devices against Mosquitto
# and the embedded broker, one process per run.
#
#   bench/mqtt-throughput.sh [--seconds 10] [--repeat 1] [any other flag of the example]
#
# Every run is bounded: --seconds of measurement, plus connecting and draining.
# Runs compete for CPU with everything else on the machine; the `other%`
# column is CPU used by other processes during the run: distrust rows where
# it is high.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
seconds=10
repeat=1
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        *) extra+=("$1"); shift ;;
    esac
done

cargo build --release --quiet -p exp-mqtt --example throughput
bin="$CARGO_TARGET_DIR/release/examples/throughput"
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT

for broker in mosquitto embedded; do
    for devices in 10 100 1000; do
        for _ in $(seq "$repeat"); do
            # A hung run must not hang the sweep: connect + measure + drain stay far below this.
            timeout $((seconds + 60)) "$bin" "--$broker" --devices "$devices" --seconds "$seconds" \
                ${extra[@]+"${extra[@]}"} | tee -a "$lines"
        done
    done
done

echo
awk '
function v(k,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "-" }
BEGIN { printf "%-10s %7s %6s %9s %9s %9s %10s %10s %7s %7s %7s %6s %s\n", "broker", "devices", "window", "msg/s",
        "p50_us", "p99_us", "runner_us", "broker_us", "runner%", "broker%", "other%", "lost", "check" }
{ printf "%-10s %7s %6s %9s %9s %9s %10s %10s %7s %7s %7s %6s %s\n", v("broker"), v("devices"), v("window"),
        v("msg_per_s"), v("ack_p50_us"), v("ack_p99_us"), v("runner_cpu_us_per_msg"), v("broker_cpu_us_per_msg"),
        v("runner_cpu_pct"), v("broker_cpu_pct"), v("other_cpu_pct"), v("lost"), v("check") }
' "$lines"
