#!/usr/bin/env bash
# Fleet-scale benchmark: runs bench/fleet-scale.exp (4,000 devices × 5 msg/s)
# and bench/fleet-scale-10k.exp (10,000 × 2 msg/s) with `expc run` against a
# Mosquitto started here on a free loopback port (or, with --embedded, the
# embedded broker), then prints `expc report` of each run and the broker's
# CPU time. Runs land in runs/bench/.
#
#   bench/fleet-scale.sh                      # both specs, Mosquitto
#   bench/fleet-scale.sh --embedded           # both specs, the embedded broker
#   bench/fleet-scale.sh bench/fleet-scale.exp --time-scale 0.2
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. bench/lib/mosquitto.sh

embedded=false
specs=()
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --embedded) embedded=true ;;
    --*) extra+=("$1" "$2"); shift ;;
    *) specs+=("$1") ;;
  esac
  shift
done
if [ ${#specs[@]} -eq 0 ]; then
  specs=(bench/fleet-scale.exp bench/fleet-scale-10k.exp)
fi

# The build cache .ci/run and bench/mqtt-throughput.sh use, unless told otherwise.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
cargo build --release -p expc
expc="$CARGO_TARGET_DIR/release/expc"

# One socket per device on each side.
ulimit -n "$(ulimit -Hn)"

work=$(mktemp -d)
broker_pid=""
cleanup() {
  [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

cpu_seconds() { # user+system seconds of a pid, from /proc/PID/stat
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}

for spec in "${specs[@]}"; do
  run_spec="$work/$(basename "$spec")"
  if $embedded; then
    # Without a broker block the fleet starts the embedded broker.
    sed '/broker {/,/}/d' "$spec" >"$run_spec"
  else
    port=$(free_port 18830)
    fleet_mosquitto_conf "$port" >"$work/mosquitto.conf"
    /usr/sbin/mosquitto -c "$work/mosquitto.conf" &
    broker_pid=$!
    sleep 0.5
    sed "s#mqtt://127.0.0.1:1883#mqtt://127.0.0.1:$port#" "$spec" >"$run_spec"
    broker_cpu=$(cpu_seconds "$broker_pid")
  fi
  echo "== $spec ($($embedded && echo embedded broker || echo "mosquitto on port $port"))"
  "$expc" run "$run_spec" --out runs/bench --force ${extra[@]+"${extra[@]}"}
  dir=$(ls -dt runs/bench/*/*/ | head -1)
  "$expc" report "$dir"
  if [ -n "$broker_pid" ]; then
    echo "mosquitto CPU: $(awk -v a="$broker_cpu" -v b="$(cpu_seconds "$broker_pid")" 'BEGIN { printf "%.1f", b - a }') s"
    kill "$broker_pid"
    wait "$broker_pid" 2>/dev/null || true
    broker_pid=""
  fi
done
