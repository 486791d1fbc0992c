#!/usr/bin/env bash
# What watching a run costs the runner: a fleet of 1,000 devices × 20
# msg/s (20,000 QoS 1 messages/s) against a Mosquitto started here on a
# free loopback port (so the broker's CPU is not the runner's), run N times
# in each of three ways, interleaved (plain, served, polled, plain, …):
#
#   plain   expc run SPEC
#   served  expc run SPEC --metrics PORT --watch     (nobody asks)
#   polled  the same, with /metrics scraped every second and the watch
#           page's state fetched every 3 s (as Prometheus and an open page do)
#
# and prints each run's runner CPU (the fleet's `runner_cpu_ratio`: the
# expc process's CPU, every thread, over the fleet's wall time, in cores)
# and CPU per message, then the mean of each way and its difference from
# plain, in % of a core. Runs land in a temporary directory, removed after.
#
#   bench/watch-cost.sh            # 3 rounds of 20 s trials
#   bench/watch-cost.sh 5          # 5 rounds
#   EXPC=target/debug/expc bench/watch-cost.sh 1   # a quick try of the script
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds=${1:-3}

# EXPC=path/to/expc measures that binary instead of a release build made here.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
if [ -z "${EXPC:-}" ]; then
  cargo build --release -p expc
fi
expc="${EXPC:-$CARGO_TARGET_DIR/release/expc}"
ulimit -n "$(ulimit -Hn)"

work=$(mktemp -d)
broker_pid=""
poller_pid=""
cleanup() {
  [ -n "$poller_pid" ] && kill "$poller_pid" 2>/dev/null
  [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  local port=$1
  while ss -ltnH "sport = :$port" | grep -q .; do port=$((port + 1)); done
  echo "$port"
}

broker_port=$(free_port 18830)
cat >"$work/mosquitto.conf" <<CONF
listener $broker_port 127.0.0.1
allow_anonymous true
persistence false
max_connections -1
max_inflight_messages 0
max_queued_messages 100000
set_tcp_nodelay true
log_dest none
CONF
/usr/sbin/mosquitto -c "$work/mosquitto.conf" &
broker_pid=$!
sleep 0.5

cat >"$work/cost.exp" <<SPEC
experiment "watch-cost" {
  seed     = 20261128
  duration = 20s
  fleet "sensors" {
    devices      = 1000
    gap          = constant(50ms)
    qos          = 1
    connect_rate = 1000/s
    warmup       = 10%
    broker { url = "mqtt://127.0.0.1:$broker_port" }
  }
}
SPEC

# Scrapes /metrics every second and the page's state every 3 s until killed.
poll() {
  local metrics=$1 watch_url=$2 n=0
  while true; do
    curl -s -o /dev/null "http://127.0.0.1:$metrics/metrics" || true
    if [ $((n % 3)) -eq 0 ] && [ -n "$watch_url" ]; then
      curl -s -o /dev/null "${watch_url/\/\?token=//state?token=}" || true
    fi
    n=$((n + 1))
    sleep 1
  done
}

run() { # WAY: one run, its runner CPU ratio and CPU per message on stdout
  local way=$1 out="$work/runs-$1" log="$work/log-$1" args=()
  rm -rf "$out"
  if [ "$way" != plain ]; then
    metrics=$(free_port 19184)
    args=(--metrics "$metrics" --watch)
  fi
  "$expc" run "$work/cost.exp" --out "$out" ${args[@]+"${args[@]}"} >"$log.out" 2>"$log" &
  local pid=$!
  if [ "$way" = polled ]; then
    local url=""
    for _ in $(seq 100); do
      url=$(sed -n 's/^watch: //p' "$log")
      [ -n "$url" ] && break
      sleep 0.1
    done
    poll "$metrics" "$url" &
    poller_pid=$!
  fi
  wait "$pid"
  if [ -n "$poller_pid" ]; then
    kill "$poller_pid" 2>/dev/null
    wait "$poller_pid" 2>/dev/null || true
    poller_pid=""
  fi
  jq -r '.trials[0].metrics | "\(.["sensors.runner_cpu_ratio"]) \(.["sensors.runner_cpu_per_message"]) \(.["sensors.throughput"])"' \
    "$out"/watch-cost/*/manifest.json
}

declare -A sum
for way in plain served polled; do sum[$way]=0; done
printf '%-7s %-6s %14s %18s %12s\n' way round "runner CPU" "CPU per message" "msg/s"
for round in $(seq "$rounds"); do
  for way in plain served polled; do
    read -r ratio per_message throughput < <(run "$way")
    printf '%-7s %-6s %11.4f cores %15.2f µs %12.0f\n' "$way" "$round" "$ratio" \
      "$(awk -v n="$per_message" 'BEGIN { print n / 1000 }')" "$throughput"
    sum[$way]=$(awk -v a="${sum[$way]}" -v b="$ratio" 'BEGIN { print a + b }')
  done
done
echo
for way in plain served polled; do
  mean=$(awk -v s="${sum[$way]}" -v n="$rounds" 'BEGIN { print s / n }')
  extra=$(awk -v s="${sum[$way]}" -v p="${sum[plain]}" -v n="$rounds" 'BEGIN { printf "%+.2f", (s - p) / n * 100 }')
  printf '%-7s mean runner CPU %.4f cores (%s %% of a core against plain)\n' "$way" "$mean" "$extra"
done
