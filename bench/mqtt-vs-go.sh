#!/usr/bin/env bash
# expc's closed-loop MQTT client against the Go tool's: the throughput example
# (crates/exp-mqtt/examples/throughput.rs, `Device`s) and bench/mqtt-go-peer
# (mqtt-benchmark's publish loop on paho.mqtt.golang; its header says why it
# is not the original), at equal window (1), payload (100 B) and QoS (1),
# against one Mosquitto started here on a free loopback port and stopped at
# the end, at 10, 100 and 1,000 devices. Every round runs both clients at
# every size; which goes first alternates from round to round, so a drift of
# the machine does not land on one client.
#
#   bench/mqtt-vs-go.sh [ROUNDS (3)] [SECONDS (10)]
#   DEVICES="10 100" bench/mqtt-vs-go.sh 5 5
#
# Needs Go (GO=/path/to/go, else `go` on the PATH or /usr/local/go/bin/go);
# the peer's module and its dependencies come from the Go module proxy.
#
# Prints every run's line, then per size and client min / median / max of
# msg/s, the client's CPU per message (µs), the broker's CPU per message and
# the broker's share of a core over the measured window. A broker near 100 %
# is the limit that binds: a faster client cannot raise msg/s, only spend
# less CPU per message. `other%` is CPU used by everything else meanwhile
# (distrust runs where it is high); the load (`uptime`) is printed before
# and after. Every run is bounded: SECONDS of measurement, plus connecting
# and draining, inside a timeout of SECONDS + 90.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. bench/lib/mosquitto.sh
rounds=${1:-3}
seconds=${2:-10}
devices=${DEVICES:-10 100 1000}

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
work=$(mktemp -d)
broker_pid=""
cleanup() {
  if [ -n "$broker_pid" ]; then
    kill "$broker_pid" 2>/dev/null || true
    wait "$broker_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

cargo build --release --quiet -p exp-mqtt --example throughput
expc_client="$CARGO_TARGET_DIR/release/examples/throughput"
(cd bench/mqtt-go-peer && "$go" build -o "$work/mqtt-go-peer" .)
go_client="$work/mqtt-go-peer"
ulimit -n "$(ulimit -Hn)"

port=$(free_port 18930)
# As the throughput example's own Mosquitto: no in-flight or queue limits, so
# the broker never throttles a client; `$SYS` every second for expc's
# cross-check of what it published; `user root` keeps it from switching users.
cat >"$work/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
user root
max_inflight_messages 0
max_queued_messages 1000000
sys_interval 1
log_dest stderr
log_type error
CONF
/usr/sbin/mosquitto -c "$work/mosquitto.conf" 2>"$work/mosquitto.log" &
broker_pid=$!
for _ in $(seq 100); do
  ss -ltnH "sport = :$port" | grep -q . && break
  sleep 0.1
done
ss -ltnH "sport = :$port" | grep -q . || { echo "mosquitto does not listen on $port" >&2; exit 1; }

bound=$((seconds + 90))
echo "load before: $(uptime)"
: >"$work/lines"
for round in $(seq 1 "$rounds"); do
  for d in $devices; do
    if ((round % 2)); then order="expc go"; else order="go expc"; fi
    for client in $order; do
      case $client in
        expc) cmd=("$expc_client" --broker "mqtt://127.0.0.1:$port" --mosquitto-pid "$broker_pid"
          --devices "$d" --seconds "$seconds" --window 1 --payload 100 --qos 1) ;;
        go) cmd=("$go_client" -broker "tcp://127.0.0.1:$port" -broker-pid "$broker_pid"
          -clients "$d" -seconds "$seconds" -size 100 -qos 1) ;;
      esac
      if ! line=$(timeout "$bound" "${cmd[@]}"); then
        echo "round $round: $client at $d devices failed or exceeded ${bound} s" >&2
        exit 1
      fi
      echo "client=$client round=$round $line" | tee -a "$work/lines"
    done
  done
done
echo "load after: $(uptime)"

echo
echo "min / median / max over $rounds rounds (window 1, 100 B, QoS 1, one Mosquitto):"
awk '
function v(k,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
function mmm(key,   c, i, j, t, a, med) {
  c = n[key]
  for (i = 1; i <= c; i++) a[i] = val[key, i] + 0
  for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  med = c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
  median[key] = med
  return sprintf(fmt[metric[key]], a[1]) "/" sprintf(fmt[metric[key]], med) "/" sprintf(fmt[metric[key]], a[c])
}
BEGIN {
  split("msg_per_s runner_cpu_us_per_msg broker_cpu_us_per_msg broker_cpu_pct other_cpu_pct", metrics, " ")
  fmt["msg_per_s"] = "%.0f"; fmt["runner_cpu_us_per_msg"] = "%.2f"; fmt["broker_cpu_us_per_msg"] = "%.2f"
  fmt["broker_cpu_pct"] = "%.0f"; fmt["other_cpu_pct"] = "%.0f"
}
{
  c = v("client"); d = v("devices")
  if (!((d, c) in seen)) { seen[d, c] = 1; if (!(d in dseen)) { dseen[d] = 1; sizes[++ns] = d } }
  for (m in metrics) { key = d SUBSEP c SUBSEP metrics[m]; val[key, ++n[key]] = v(metrics[m]); metric[key] = metrics[m] }
}
END {
  printf "%7s %-6s %22s %18s %18s %12s %10s\n", "devices", "client", "msg/s", "client_us/msg", "broker_us/msg", "broker%", "other%"
  for (s = 1; s <= ns; s++) {
    d = sizes[s]
    for (ci = 1; ci <= 2; ci++) {
      c = ci == 1 ? "expc" : "go"
      if (!((d, c) in seen)) continue
      printf "%7s %-6s", d, c
      w[1] = 22; w[2] = 18; w[3] = 18; w[4] = 12; w[5] = 10
      for (m = 1; m <= 5; m++) printf " %" w[m] "s", mmm(d SUBSEP c SUBSEP metrics[m])
      printf "\n"
    }
    e = d SUBSEP "expc" SUBSEP; g = d SUBSEP "go" SUBSEP
    if ((d, "expc") in seen && (d, "go") in seen && median[e "runner_cpu_us_per_msg"] > 0)
      printf "%7s expc/go: throughput x%.2f, client CPU per message x%.2f (medians)\n", d,
        median[e "msg_per_s"] / median[g "msg_per_s"], median[e "runner_cpu_us_per_msg"] / median[g "runner_cpu_us_per_msg"]
  }
}' "$work/lines"
if grep -q "check=MISMATCH" "$work/lines"; then
  echo "warning: Mosquitto's \$SYS count differs from what expc published in some runs (check=MISMATCH above)"
fi
if grep -q . "$work/mosquitto.log"; then
  echo "mosquitto said:"
  grep -v "should not be run as root" "$work/mosquitto.log" || true
fi
