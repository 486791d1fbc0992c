#!/usr/bin/env bash
# What watching a run costs the runner: a fleet of 1,000 devices at RATE
# QoS 1 messages/s in all (default 20,000) against a Mosquitto started here
# on a free loopback port (so the broker's CPU is not the runner's), run N
# times in each of three ways:
#
#   plain   expc run SPEC
#   served  expc run SPEC --metrics PORT --watch     (nobody asks)
#   polled  the same, with /metrics scraped every second and the watch
#           page's state fetched every 3 s (as Prometheus and an open page do)
#
# The order rotates every round (plain served polled, served polled plain,
# polled plain served, …) so that a drift of the machine over a round does
# not land on one way. Each run prints the runner's CPU (the fleet's
# `runner_cpu_ratio`: the expc process's CPU, every thread, over the
# fleet's wall time, in cores), its CPU per message, and, for served and
# polled, the CPU of the watch process (`expc watch --for-run`, nice 19)
# over the same run. The summary gives min / median / max of each way and
# the median of the per-round differences from plain, in % of a core.
# Runs land in a temporary directory, removed after.
#
#   bench/watch-cost.sh            # 3 rounds at 20,000 msg/s
#   bench/watch-cost.sh 5 10000    # 5 rounds at 10,000 msg/s
#   EXPC=target/debug/expc bench/watch-cost.sh 1   # a quick try of the script
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds=${1:-3}
rate=${2:-20000}

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
    gap          = constant($((1000000000 / rate))us)
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

# Prints, when the watch process of the run logging to $1 ends, the CPU it
# used (utime + stime, in seconds) as last seen in /proc.
watch_cpu() {
  local log=$1 pid="" ticks=0 hz
  hz=$(getconf CLK_TCK)
  for _ in $(seq 200); do
    pid=$(pgrep -f -- "watch $work/runs-.*--for-run" | head -1 || true)
    [ -n "$pid" ] && break
    sleep 0.1
  done
  while [ -n "$pid" ] && [ -r "/proc/$pid/stat" ]; do
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo "$ticks")
    sleep 0.5
  done
  awk -v t="$ticks" -v hz="$hz" 'BEGIN { printf "%.3f\n", t / hz }' >"$log.watch"
}

run() { # WAY: one run; prints its runner CPU ratio, CPU per message, throughput, watch CPU (s)
  local way=$1 out="$work/runs-$1" log="$work/log-$1" args=() watcher=""
  rm -rf "$out" "$log.watch"
  if [ "$way" != plain ]; then
    metrics=$(free_port 19184)
    args=(--metrics "$metrics" --watch)
  fi
  "$expc" run "$work/cost.exp" --out "$out" ${args[@]+"${args[@]}"} >"$log.out" 2>"$log" &
  local pid=$!
  if [ "$way" != plain ]; then
    watch_cpu "$log" &
    watcher=$!
  fi
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
  local watch="-"
  if [ -n "$watcher" ]; then
    wait "$watcher" || true
    watch=$(cat "$log.watch")
  fi
  jq -r --arg watch "$watch" '.trials[0].metrics | "\(.["sensors.runner_cpu_ratio"]) \(.["sensors.runner_cpu_per_message"]) \(.["sensors.throughput"]) \($watch)"' \
    "$out"/watch-cost/*/manifest.json
}

# min / median / max of the numbers on stdin
stats() { sort -g | awk '{v[NR] = $1} END { printf "%.4f / %.4f / %.4f", v[1], (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR] }'; }

ways=(plain served polled)
declare -A ratios
printf '%-7s %-6s %14s %18s %12s %12s\n' way round "runner CPU" "CPU per message" "msg/s" "watch CPU"
for round in $(seq "$rounds"); do
  for i in 0 1 2; do
    way=${ways[$(((round - 1 + i) % 3))]}
    read -r ratio per_message throughput watch < <(run "$way")
    printf '%-7s %-6s %11.4f cores %15.2f µs %12.0f %10s s\n' "$way" "$round" "$ratio" \
      "$(awk -v n="$per_message" 'BEGIN { print n / 1000 }')" "$throughput" "$watch"
    ratios[$way,$round]=$ratio
  done
done
echo
echo "$rounds rounds at $rate msg/s, load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
for way in plain served polled; do
  values=$(for round in $(seq "$rounds"); do echo "${ratios[$way,$round]}"; done)
  extra=$(for round in $(seq "$rounds"); do
    awk -v a="${ratios[$way,$round]}" -v p="${ratios[plain,$round]}" 'BEGIN { print (a - p) * 100 }'
  done | stats)
  printf '%-7s runner CPU min/median/max %s cores; against plain, per round: %s %% of a core\n' \
    "$way" "$(stats <<<"$values")" "$extra"
done
