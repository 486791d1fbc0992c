#!/usr/bin/env bash
# XML extraction end to end, fitting included (issues 17 and 36):
# `expc xml extract` on generated corpora
# (`cargo run -p exp-xml --example xml_corpus`):
#   - eventlog: a 52.8 MB Windows System event-log export, split at Event;
#   - devices:  7.5 MB of device telemetry with 72 numeric paths, split at
#     reading;
#   - fleet:    7.5 MB of device-fleet reports (8 numeric fields, about
#     20,000 documents), split at reading.
# Each corpus is extracted in two layouts holding the same documents under
# the same root: one file, and a directory of one file per document
# (FILES_LAYOUT=0 skips the directory; it is on by default for fleet only).
# Each layout runs on 1 thread and on THREADS threads (`--threads`, the
# extraction's and fitting's thread count; default 2), RUNS times each
# (default 5), the runs of all cases interleaved so that load drifts hit
# every case alike. Printed per case as min / median / max:
#   - MB per CPU-second, the command's own end-to-end line (extraction,
#     fitting, writing: the CPU of the whole process over those phases);
#   - MB per CPU-second of the whole process as `time` sees it (start-up,
#     input listing and stat calls included), on the one file's bytes for
#     both layouts (the command's own line counts the bytes of the files it
#     read: the directory's per-file declaration and root add some 15 %);
#   - wall seconds, and the wall-clock speedup of THREADS threads over 1
#     (median over median).
# The load (`uptime`) is printed before and after. Target: ≥ 150 MB per
# CPU-second on every case, and ≥ 1.7× on THREADS = 2 for large inputs.
# EXPC may name several builds ("old new"): every round runs each once per
# case, their order rotating from round to round (as bench/fleet-cpu.sh),
# and each is summarised on its own.
# Beside each directory layout, once per round, its floor: the same files
# listed, opened, read and closed by bench/xml-read-floor.c (C, no
# parsing), the fastest any reader through the kernel can go here.
#
#   bench/xml-extract.sh                  # all corpora, 5 runs each
#   RUNS=9 bench/xml-extract.sh fleet
#   EXPC=path/to/expc GENERATE=path/to/xml_corpus bench/xml-extract.sh fleet
#   EXPC="/tmp/expc-old /tmp/expc-new" RUNS=15 bench/xml-extract.sh fleet
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

corpora=("$@")
[ ${#corpora[@]} -gt 0 ] || corpora=(eventlog devices fleet)
runs=${RUNS:-5}
threads=${THREADS:-2}

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
if [ -z "${EXPC:-}" ]; then
  cargo build --release -p expc
  cargo build --release -p exp-xml --example xml_corpus
fi
read -r -a binaries <<<"${EXPC:-$CARGO_TARGET_DIR/release/expc}"
generate="${GENERATE:-$CARGO_TARGET_DIR/release/examples/xml_corpus}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
floor="$work/xml-read-floor"
cc -O2 -o "$floor" bench/xml-read-floor.c

# min / median / max of the numbers on stdin.
stats() {
  sort -g | awk '{ v[NR] = $1 } END { printf "min %s, median %s, max %s", v[1], v[int((NR + 1) / 2)], v[NR] }'
}
median() {
  sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

echo "load before: $(uptime)"
for corpus in "${corpora[@]}"; do
  case $corpus in
    eventlog) mb=52.8 split=Event files=0 ;;
    devices) mb=7.5 split=reading files=0 ;;
    fleet) mb=7.5 split=reading files=1 ;;
    *) echo "unknown corpus $corpus (eventlog, devices or fleet)" >&2; exit 2 ;;
  esac
  files=${FILES_LAYOUT:-$files}
  layouts=("$work/$corpus.xml")
  if [ "$files" = 1 ]; then
    "$generate" "$corpus" "$mb" "$work/$corpus.xml" "$work/$corpus.d"
    layouts+=("$work/$corpus.d")
  else
    "$generate" "$corpus" "$mb" "$work/$corpus.xml"
  fi
  echo "== $corpus, split at $split: one file of $(du -h "$work/$corpus.xml" | cut -f1)$(
    [ "$files" = 1 ] && echo ", and $(find "$work/$corpus.d" -type f | wc -l) files of one document")"
  mb_in=$(du -b "$work/$corpus.xml" | cut -f1)
  declare -A own=() whole=() wall=() floors=()
  n=${#binaries[@]}
  for round in $(seq "$runs"); do
    for input in "${layouts[@]}"; do
      if [ -d "$input" ]; then
        floors[$input]+="$("$floor" "$input" | sed -n 's/.*, \([0-9.]*\) MB per CPU-second/\1/p') "
      fi
      for i in $(seq 0 $((n - 1))); do
        b=$(((i + round - 1) % n))
        for t in 1 "$threads"; do
          key="$b $(basename "$input") $t"
          rm -rf "$work/set"
          out=$({ TIMEFORMAT='%R %U %S'; time "${binaries[$b]}" xml extract "$input" --split-at "$split" \
            --threads "$t" -o "$work/set"; } 2>"$work/time")
          own[$key]+="$(sed -n 's/.*, \([0-9.]*\) MB per CPU-second.*/\1/p' <<<"$out") "
          read -r real user sys < <(tail -1 "$work/time")
          whole[$key]+="$(awk -v b="$mb_in" -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", b / 1e6 / (u + s) }') "
          wall[$key]+="$real "
        done
      done
    done
  done
  for input in "${layouts[@]}"; do
    name=$(basename "$input")
    for b in $(seq 0 $((n - 1))); do
      [ "$n" = 1 ] || echo "  -- ${binaries[$b]}"
      for t in 1 "$threads"; do
        key="$b $name $t"
        echo "  $name, $t thread(s), $runs runs:"
        echo "    MB per CPU-second, end-to-end line: $(tr ' ' '\n' <<<"${own[$key]}" | grep . | stats)"
        echo "    MB per CPU-second, whole process:   $(tr ' ' '\n' <<<"${whole[$key]}" | grep . | stats)"
        echo "    wall seconds:                       $(tr ' ' '\n' <<<"${wall[$key]}" | grep . | stats)"
      done
      one=$(tr ' ' '\n' <<<"${wall[$b $name 1]}" | grep . | median)
      many=$(tr ' ' '\n' <<<"${wall[$b $name $threads]}" | grep . | median)
      echo "  $name: wall-clock speedup of $threads threads over 1: $(awk -v a="$one" -v b="$many" 'BEGIN { printf "%.2f", a / b }')x (median over median)"
    done
    if [ -n "${floors[$input]:-}" ]; then
      echo "  $name, floor (list, open, read, close; C, no parsing), MB per CPU-second: $(tr ' ' '\n' <<<"${floors[$input]}" | grep . | stats)"
    fi
  done
  unset own whole wall floors
done
echo "load after: $(uptime)"
