#!/usr/bin/env bash
# False flags of the validity audit (issue 34: "20 quiet runs of the
# examples give at most one false flag"): 20 runs of the examples, each
# shortened, on a machine left alone; counts the trials whose verdict is not
# `valid` and prints every finding's code, workload and message.
#
#   bench/quiet-flags.sh             # 20 runs, about 7 min
#   bench/quiet-flags.sh --runs 7    # one of each case
#
# The cases, in turn (time scales keep every trial near 15 s; each case's
# first trial only where an example has several):
#   01-first-fleet      --time-scale 0.5
#   02-sweep-and-repeat --trials 0 --time-scale 0.5
#   03-distributions    --trials 0 --time-scale 0.25
#   04-anomaly-schedule --time-scale 0.05
#   05-imports          --trials 0 --time-scale 0.25
#   06-connection-structures --trials 0 --time-scale 0.2 (network namespaces:
#                       needs root; left out, and said, without it)
#   quickstart          --time-scale 0.5
# The fleets use the embedded broker. A run is stopped by `timeout` after
# 90 s (counted as a failed run, not as flags); everything is written to a
# scratch directory that is removed at the end. Release build: `cargo build
# --release -p expc` first (built if missing). A flag on a busy machine may
# be true (a neighbour took the cores): the figure is meant for a quiet one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=20
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
case $runs in ''|*[!0-9]*) echo "--runs takes a count" >&2; exit 2 ;; esac
if [ "$runs" -lt 1 ] || [ "$runs" -gt 30 ]; then echo "--runs from 1 to 30 (the 10-minute bound)" >&2; exit 2; fi

target=${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}
expc=${EXPC:-$target/release/expc}  # EXPC: another build, to try the script
if [ ! -x "$expc" ]; then
  (cd "$root" && CARGO_TARGET_DIR=$target cargo build --release -p expc)
fi
work=$(mktemp -d -t expc-quiet.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

cases=(
  "01-first-fleet.exp --time-scale 0.5"
  "02-sweep-and-repeat.exp --trials 0 --time-scale 0.5"
  "03-distributions.exp --trials 0 --time-scale 0.25"
  "04-anomaly-schedule.exp --time-scale 0.05"
  "05-imports.exp --trials 0 --time-scale 0.25"
  "06-connection-structures.exp --trials 0 --time-scale 0.2"
  "quickstart.exp --time-scale 0.5"
)
if [ "$(id -u)" != 0 ]; then
  echo "not root: 06-connection-structures (network namespaces) left out" >&2
  unset 'cases[5]'
  cases=("${cases[@]}")
fi

trials=0
flagged=0
failed=0
started=$(date +%s)
for i in $(seq 0 $((runs - 1))); do
  read -r -a args <<< "${cases[$((i % ${#cases[@]}))]}"
  spec=${args[0]}
  out="$work/run-$i"
  if ! (cd "$root/examples" && timeout 90 "$expc" run "$spec" "${args[@]:1}" --out "$out" > "$work/log-$i" 2>&1); then
    echo "run $((i + 1)) $spec: failed (log below)"
    tail -5 "$work/log-$i" | sed 's/^/    /'
    failed=$((failed + 1))
    continue
  fi
  summary=$(python3 - "$out" "$spec" "$((i + 1))" <<'PY'
import glob, json, sys
out, spec, n = sys.argv[1:]
manifest = json.load(open(glob.glob(f"{out}/*/*/manifest.json")[0]))
ran = [t for t in manifest["trials"] if t.get("validity")]
flags = [t for t in ran if t["validity"]["verdict"] != "valid"]
print(len(ran), len(flags))
line = f"run {n:>2} {spec}: {len(ran)} trial(s), "
line += "valid" if not flags else f"{len(flags)} flagged"
print(line)
for t in flags:
    for f in t["validity"]["findings"]:
        print(f"    trial {t['trial']} {f['verdict']:<8} {f['code']} {f.get('workload') or '-'}: {f['message']}")
PY
)
  read -r ran flags <<< "$(head -1 <<< "$summary")"
  tail -n +2 <<< "$summary"
  trials=$((trials + ran))
  flagged=$((flagged + flags))
  rm -rf "$out"
done
echo "quiet flags: $flagged of $trials trials flagged in $runs runs ($failed failed), $(( $(date +%s) - started )) s"
