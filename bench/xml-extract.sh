#!/usr/bin/env bash
# XML extraction end to end, fitting included (issue 17): `expc xml extract`
# on two generated corpora (`cargo run -p exp-xml --example xml_corpus`):
#   - eventlog: a 52.8 MB Windows System event-log export, split at Event;
#   - devices:  7.5 MB of device telemetry with 72 numeric paths, split at
#     reading.
# Each is extracted RUNS times (default 5) into a fresh set; the figure is
# the command's own end-to-end line (corpus MB per CPU-second of the whole
# process: extraction, fitting, writing), printed per run with its phases,
# then as min / median / max. Target: ≥ 150 MB per CPU-second on both.
#
#   bench/xml-extract.sh            # both corpora, 5 runs each
#   RUNS=9 bench/xml-extract.sh devices
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

corpora=("$@")
[ ${#corpora[@]} -gt 0 ] || corpora=(eventlog devices)
runs=${RUNS:-5}

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
cargo build --release -p expc
cargo build --release -p exp-xml --example xml_corpus
expc="$CARGO_TARGET_DIR/release/expc"
generate="$CARGO_TARGET_DIR/release/examples/xml_corpus"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for corpus in "${corpora[@]}"; do
  case $corpus in
    eventlog) mb=52.8 split=Event ;;
    devices) mb=7.5 split=reading ;;
    *) echo "unknown corpus $corpus (eventlog or devices)" >&2; exit 2 ;;
  esac
  "$generate" "$corpus" "$mb" "$work/$corpus.xml"
  echo "== $corpus: $(du -h "$work/$corpus.xml" | cut -f1), split at $split"
  rates=()
  for _ in $(seq "$runs"); do
    rm -rf "$work/set"
    out=$("$expc" xml extract "$work/$corpus.xml" --split-at "$split" -o "$work/set")
    grep -E "^structures|^end to end|^  phases" <<<"$out" | sed 's/^/  /'
    rates+=("$(sed -n 's/.*, \([0-9.]*\) MB per CPU-second.*/\1/p' <<<"$out")")
  done
  sorted=$(printf '%s\n' "${rates[@]}" | sort -g)
  echo "  MB per CPU-second over $runs runs: min $(head -1 <<<"$sorted"), median $(sed -n "$(((runs + 1) / 2))p" <<<"$sorted"), max $(tail -1 <<<"$sorted")"
done
