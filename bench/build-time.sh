#!/usr/bin/env bash
# The release build from nothing, as a newcomer's first command waits for it:
# `cargo build --release -p expc --timings` into an empty target directory,
# RUNS times one after the other, each reporting its wall time, units,
# CPU-seconds (the sum of the units' times) and ten longest units.
#
#   bench/build-time.sh            # one build
#   RUNS=3 bench/build-time.sh     # three, for the spread
#
# Each build needs about 2.5 GB in a temporary directory, removed after it.
# Builds are CPU-bound on both cores all through: run it on a quiet machine,
# and compare CPU-seconds as well as wall time (they vary together).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${RUNS:-1}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for run in $(seq "$runs"); do
  rm -rf "$work/target"
  echo "== build $run of $runs (load $(cut -d' ' -f1-3 /proc/loadavg))"
  start=$(date +%s.%N)
  CARGO_INCREMENTAL=0 CARGO_TARGET_DIR="$work/target" cargo build --release -p expc --timings --quiet
  end=$(date +%s.%N)
  python3 - "$work/target/cargo-timings/cargo-timing.html" "$start" "$end" <<'EOF'
import json, re, sys
html = open(sys.argv[1]).read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))
wall = float(sys.argv[3]) - float(sys.argv[2])
cpu = sum(u["duration"] for u in units)
print(f"wall {int(wall // 60)} min {wall % 60:.0f} s   units {len(units)}   CPU-seconds {cpu:.0f}")
for u in sorted(units, key=lambda u: -u["duration"])[:10]:
    target = u.get("target", "").strip()
    print(f"  {u['duration']:6.1f} s  {u['name']} {target}".rstrip())
EOF
done
