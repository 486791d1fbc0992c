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
# polled, the CPU of the runner's serving threads (`expc-metrics`,
# `expc-watch-start`) and of the watch process (`expc watch --for-run`,
# nice 19, a process of its own) over the same run. The summary gives
# min / median / max of each way, of the per-round differences from plain
# (the whole process, with its run-to-run spread) and of the serving
# threads' own CPU (the extra measured where it is spent), in % of a core.
# Runs land in a temporary directory, removed after.
#
#   bench/watch-cost.sh            # 3 rounds at 20,000 msg/s
#   bench/watch-cost.sh 5 10000    # 5 rounds at 10,000 msg/s
#   EXPC=target/debug/expc bench/watch-cost.sh 1   # a quick try of the script
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. bench/lib/mosquitto.sh
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

broker_port=$(free_port 18830)
fleet_mosquitto_conf "$broker_port" >"$work/mosquitto.conf"
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

# Follows the run whose runner is $2 until it ends, then writes to $1.watch
# the CPU seconds (utime + stime, as last seen in /proc) of (1) the runner's
# serving threads (`expc-metrics`, `expc-watch-start`: what --metrics and
# --watch add to the runner itself) and (2) the watch process
# (`expc watch --for-run`, nice 19, a process of its own).
serving_cpu() {
  local log=$1 runner=$2 child="" threads=0 watch=0 hz
  hz=$(getconf CLK_TCK)
  while kill -0 "$runner" 2>/dev/null; do
    local sum=0
    for task in /proc/"$runner"/task/*; do
      case $(cat "$task/comm" 2>/dev/null) in
        expc-metrics | expc-watch-star) sum=$((sum + $(awk '{print $14 + $15}' "$task/stat" 2>/dev/null || echo 0))) ;;
      esac
    done
    [ "$sum" -gt "$threads" ] && threads=$sum
    [ -n "$child" ] || child=$(pgrep -f -- "watch $work/runs-.*--for-run" | head -1 || true)
    if [ -n "$child" ] && [ -r "/proc/$child/stat" ]; then
      watch=$(awk '{print $14 + $15}' "/proc/$child/stat" 2>/dev/null || echo "$watch")
    fi
    sleep 0.5
  done
  awk -v t="$threads" -v w="$watch" -v hz="$hz" 'BEGIN { printf "%.3f %.3f\n", t / hz, w / hz }' >"$log.watch"
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
    serving_cpu "$log" "$pid" &
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
  local serving="- -"
  if [ -n "$watcher" ]; then
    wait "$watcher" || true
    serving=$(cat "$log.watch")
  fi
  jq -r --arg serving "$serving" '.trials[0].metrics | "\(.["sensors.runner_cpu_ratio"]) \(.["sensors.runner_cpu_per_message"]) \(.["sensors.throughput"]) \($serving)"' \
    "$out"/watch-cost/*/manifest.json
}

# min / median / max of the numbers on stdin
stats() { sort -g | awk '{v[NR] = $1} END { printf "%.4f / %.4f / %.4f", v[1], (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR] }'; }

ways=(plain served polled)
declare -A ratios threads
printf '%-7s %-6s %14s %16s %8s %16s %12s\n' way round "runner CPU" "CPU per message" "msg/s" "serving threads" "watch proc."
for round in $(seq "$rounds"); do
  for i in 0 1 2; do
    way=${ways[$(((round - 1 + i) % 3))]}
    read -r ratio per_message throughput thread_s watch_s < <(run "$way")
    printf '%-7s %-6s %11.4f cores %13.2f µs %8.0f %14s s %10s s\n' "$way" "$round" "$ratio" \
      "$(awk -v n="$per_message" 'BEGIN { print n / 1000 }')" "$throughput" "$thread_s" "$watch_s"
    ratios[$way,$round]=$ratio
    threads[$way,$round]=$thread_s
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
# What the serving threads themselves took: the runner's extra CPU measured
# where it is spent, free of the run-to-run spread of the whole process.
for way in served polled; do
  share=$(for round in $(seq "$rounds"); do
    awk -v t="${threads[$way,$round]}" 'BEGIN { print t / 20 * 100 }'
  done | stats)
  printf '%-7s serving threads min/median/max %s %% of a core (their CPU over the 20 s trial; the kernel counts it in ticks of %s ms)\n' \
    "$way" "$share" "$((1000 / $(getconf CLK_TCK)))"
done
