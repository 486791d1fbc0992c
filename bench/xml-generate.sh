#!/usr/bin/env bash
# XML generation throughput (issue 36): `expc xml generate SET --size 1GiB
# -o - > /dev/null` from the set that `expc xml extract specs/xml/corpus
# --split-at event` writes (small event documents, ~180 bytes, 8 values
# each: the per-document and per-value costs dominate). The figure is the
# command's own throughput line: output MB per CPU-second (user + system
# time of the whole process over the generation) and MB per wall second.
# Target: ≥ 1000 MB per CPU-second.
#
# The peer, XMark's xmlgen, is a C program shipped neither as a crate nor
# as a Debian package, so it cannot be built here; instead the script
# interleaves runs of BASELINE (another expc binary, e.g. one built from an
# older commit) with runs of this tree's expc when BASELINE is given, and
# checks both write the same bytes for the same seed — unless their
# generator versions differ (`generator version N` on stderr; a binary
# that does not print it is version 1), which change those bytes by design
# (docs/decisions/0022-generation-ziggurat-draws.md).
#
#   bench/xml-generate.sh                       # 5 runs, 1 GiB each
#   RUNS=9 SIZE=2GiB THREADS=1 bench/xml-generate.sh
#   BASELINE=/tmp/expc-before bench/xml-generate.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

runs=${RUNS:-5}
size=${SIZE:-1GiB}
threads=${THREADS:-0}
baseline=${BASELINE:-}

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
cargo build --release -p expc
expc="$CARGO_TARGET_DIR/release/expc"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$expc" xml extract specs/xml/corpus --split-at event -o "$work/set" >/dev/null

binaries=("$expc")
[ -z "$baseline" ] || binaries=("$baseline" "$expc")

# Same seed and generator version, same bytes: the first 64 MiB of each
# binary's output.
version_of() {
  "$1" xml generate "$work/set" --documents 1 -o - 2>&1 >/dev/null \
    | sed -n 's/.*generator version \([0-9]*\).*/\1/p' | grep . || echo 1
}
if [ -n "$baseline" ]; then
  versions=$(for b in "${binaries[@]}"; do version_of "$b"; done | uniq | wc -l)
  same=$(for b in "${binaries[@]}"; do
    "$b" xml generate "$work/set" --size 64MiB --seed 1 -o - 2>/dev/null | sha256sum | cut -c1-16
  done | uniq | wc -l)
  if [ "$versions" = 1 ]; then
    [ "$same" = 1 ] || { echo "BASELINE and this tree write different bytes" >&2; exit 1; }
    echo "same bytes for seed 1 (64 MiB checked)"
  else
    echo "generator versions $(version_of "$baseline") (BASELINE) and $(version_of "$expc"): bytes differ by design"
  fi
fi

echo "uptime: $(uptime)"
declare -A cpu_rates wall_rates
for _ in $(seq "$runs"); do
  for b in "${binaries[@]}"; do
    line=$("$b" xml generate "$work/set" --size "$size" --threads "$threads" -o - 2>&1 >/dev/null | grep '^throughput')
    echo "  $(basename "$b"): $line"
    cpu_rates[$b]+="$(sed -n 's/.*, \([0-9.]*\) MB per CPU-second.*/\1/p' <<<"$line") "
    wall_rates[$b]+="$(sed -n 's/.*: \([0-9.]*\) MB\/s,.*/\1/p' <<<"$line") "
  done
done
echo "uptime: $(uptime)"

summary() {
  local sorted
  sorted=$(tr ' ' '\n' <<<"$1" | grep . | sort -g)
  echo "min $(head -1 <<<"$sorted"), median $(sed -n "$(((runs + 1) / 2))p" <<<"$sorted"), max $(tail -1 <<<"$sorted")"
}
for b in "${binaries[@]}"; do
  echo "$b over $runs runs of $size:"
  echo "  MB per CPU-second: $(summary "${cpu_rates[$b]}")"
  echo "  MB/s wall:         $(summary "${wall_rates[$b]}")"
done
