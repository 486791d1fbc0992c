#!/usr/bin/env bash
# `expc report` at scale: the report of a 90-minute fleet run of 5,000
# devices × 1 msg/s (bench/report-scale.exp: 27,000,000 `mqtt_messages`
# rows, a CPU anomaly from 30 to 45 min, the monitor at 1 s). The run is
# not run: its plan is compiled from the spec and the synthetic_fleet_run
# example of exp-report writes the run directory through the runtime's
# writers (rows drawn from a seeded generator, so every machine reports on
# the same data). Then each of
#   text  `expc report RUN > /dev/null`
#   html  `expc report RUN --html OUT.html`
#   json  `expc report RUN --json > /dev/null`
# runs RUNS times (default 3), from the page cache, each timed for wall
# time, maximum resident set size and CPU time (user + system; GNU time, or
# Python's getrusage), and is summarised as min / median / max. Target:
# ≤ 10 s wall and ≤ 1 GB max RSS for each. The load average is printed
# first: other work on the machine stretches the wall time, less so the CPU
# time.
#
#   bench/report-scale.sh                     # 27 M rows, 3 runs of each
#   RUNS=5 ROWS=5000000 bench/report-scale.sh
#   KEEP=1 bench/report-scale.sh              # keep the generated run (and the page)
#   RUN_DIR=/tmp/…/report-scale/synthetic-27000000 bench/report-scale.sh   # reuse a kept run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

runs=${RUNS:-3}
rows=${ROWS:-27000000}
max_wall_s=10
max_rss_kb=$((1000 * 1000)) # 1 GB

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
cargo build --release -p expc
cargo build --release -p exp-report --example synthetic_fleet_run
expc="$CARGO_TARGET_DIR/release/expc"
generate="$CARGO_TARGET_DIR/release/examples/synthetic_fleet_run"

work=$(mktemp -d)
cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then
    echo "kept $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# `measure FILE CMD…` runs CMD and writes "WALL_S MAX_RSS_KB CPU_S" to FILE.
if /usr/bin/time -f '%e %M %U %S' -o /dev/null true 2>/dev/null; then
  measure() {
    local out=$1
    shift
    /usr/bin/time -f '%e %M %U %S' -o "$out" "$@"
    read -r wall kb user sys <"$out"
    echo "$wall $kb $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')" >"$out"
  }
elif command -v python3 >/dev/null; then
  measure() {
    python3 -c '
import resource, subprocess, sys, time
start = time.monotonic()
rc = subprocess.call(sys.argv[2:])
wall = time.monotonic() - start
with open(sys.argv[1], "w") as out:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    out.write("%.2f %d %.2f\n" % (wall, use.ru_maxrss, use.ru_utime + use.ru_stime))
sys.exit(rc)' "$@"
  }
else
  echo "need GNU time (apt-get install time) or python3 to measure the maximum RSS" >&2
  exit 2
fi

if [ -n "${RUN_DIR:-}" ]; then
  [ -f "$RUN_DIR/manifest.json" ] || { echo "RUN_DIR=$RUN_DIR is not a run directory" >&2; exit 2; }
  run=$RUN_DIR
  echo "== reusing $run"
else
  "$expc" plan bench/report-scale.exp --format json -o "$work/plan.json"
  echo "== writing a run of $rows mqtt_messages rows"
  run=$("$generate" "$work/runs" "$rows" --plan "$work/plan.json" | tail -1)
fi
echo "   $(du -sh "$run" | cut -f1) in $run"
# From the page cache, whoever wrote the files and when.
cat "$run"/tables/*/trial=*/*.parquet >/dev/null

echo "== $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before measuring"
# `summary NAME VALUES…`: min, median and max of the values.
summary() {
  local name=$1
  shift
  local sorted
  sorted=$(printf '%s\n' "$@" | sort -g)
  echo "min $(head -1 <<<"$sorted"), median $(sed -n "$((($# + 1) / 2))p" <<<"$sorted"), max $(tail -1 <<<"$sorted") $name"
}
# `verdict VALUE TARGET`: whether VALUE is within TARGET.
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t ? "within" : "OVER") }'; }

for mode in text html json; do
  case $mode in
    text) cmd=("$expc" report "$run") ;;
    html) cmd=("$expc" report "$run" --html "$work/report.html") ;;
    json) cmd=("$expc" report "$run" --json) ;;
  esac
  echo "== $mode: ${cmd[*]#"$CARGO_TARGET_DIR/release/"}"
  walls=()
  rss=()
  cpus=()
  for i in $(seq "$runs"); do
    measure "$work/time" "${cmd[@]}" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
    read -r wall kb cpu <"$work/time"
    echo "   run $i: $wall s wall, $((kb / 1000)) MB max RSS, $cpu s CPU"
    walls+=("$wall")
    rss+=("$((kb / 1000))")
    cpus+=("$cpu")
  done
  # Warnings would mean the run is not read as a real one.
  grep -v '^wrote ' "$work/stderr" | sed 's/^/   stderr: /' || true
  wall_line=$(summary s "${walls[@]}")
  rss_line=$(summary MB "${rss[@]}")
  max_wall=$(printf '%s\n' "${walls[@]}" | sort -g | tail -1)
  max_rss=$(printf '%s\n' "${rss[@]}" | sort -g | tail -1)
  echo "   wall:    $wall_line   ($(verdict "$max_wall" "$max_wall_s") the ≤ $max_wall_s s target)"
  echo "   max RSS: $rss_line   ($(verdict "$max_rss" $((max_rss_kb / 1000))) the ≤ 1 GB target)"
  echo "   CPU:     $(summary s "${cpus[@]}")"
done
