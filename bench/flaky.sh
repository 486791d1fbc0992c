#!/usr/bin/env bash
# Flakiness stress: runs the whole test suite (the README's test command,
# with --no-fail-fast) several times in a row and prints every failure with
# its test binary and name, the time of each run and the load it ran under.
#
#   bench/flaky.sh                          # 5 runs, the last 2 under load
#   bench/flaky.sh --runs 3 --loaded 3      # every run under load
#   bench/flaky.sh --fresh                  # from a fresh clone of HEAD and an
#                                           # empty target directory (the first
#                                           # run includes the whole build)
#
# Load, during the last --loaded runs: one CPU hog per core (busy loops at
# nice 0, like a neighbour's build) and a disk writer that writes and fsyncs
# 64 MiB files in a loop in the target directory's file system. Both stop
# with the script. A run that takes over an hour is stopped and counted as a
# failure. Logs stay in $FLAKY_LOGS (default: a temporary directory, printed
# at the end).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

runs=5
loaded=2
fresh=false
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    --loaded) loaded=$2; shift ;;
    --fresh) fresh=true ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

logs=${FLAKY_LOGS:-$(mktemp -d -t expc-flaky.XXXXXX)}
mkdir -p "$logs"
hogs=()
stop_load() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
  hogs=()
  rm -f "${CARGO_TARGET_DIR:-/nonexistent}"/flaky-disk-writer.*
}
cleanup() {
  stop_load
  if $fresh && [ -n "${work:-}" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if $fresh; then
  work=$(mktemp -d -t expc-flaky-clone.XXXXXX)
  git clone --quiet "$root" "$work/expc"
  cd "$work/expc"
  export CARGO_TARGET_DIR="$work/target"
  # What .ci/run installs for the TextMate grammar test.
  npm ci --prefix editors --no-audit --no-fund --silent
else
  cd "$root"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/expc/target}"
fi
export CARGO_TERM_COLOR=never

start_load() {
  local cores
  cores=$(nproc)
  for _ in $(seq "$cores"); do
    bash -c 'while :; do :; done' &
    hogs+=($!)
  done
  # In the target directory's file system, where the tests write.
  mkdir -p "$CARGO_TARGET_DIR"
  bash -c 'while :; do dd if=/dev/zero of="$1" bs=1M count=64 conv=fsync status=none; rm -f "$1"; done' \
    _ "$CARGO_TARGET_DIR/flaky-disk-writer.$$" &
  hogs+=($!)
  echo "load: $cores CPU hogs and a disk writer (64 MiB + fsync, in a loop)"
}

printf '%-4s %-7s %8s %7s %7s %8s\n' run load seconds passed failed ignored > "$logs/summary"
total_failures=0
for run in $(seq "$runs"); do
  load=quiet
  if [ "$run" -gt $((runs - loaded)) ]; then
    load=loaded
    [ ${#hogs[@]} -gt 0 ] || start_load
  fi
  log="$logs/run-$run.log"
  echo "== run $run of $runs ($load)"
  began=$(date +%s)
  status=0
  timeout --kill-after=30 3600 cargo test --workspace --locked --no-fail-fast > "$log" 2>&1 || status=$?
  seconds=$(( $(date +%s) - began ))
  # "test result: ok. 8 passed; 0 failed; 1 ignored; ..." per test binary.
  read -r passed failed ignored < <(awk '/^test result:/ {p += $4; f += $6; i += $8} END {print p+0, f+0, i+0}' "$log")
  printf '%-4s %-7s %8s %7s %7s %8s\n' "$run" "$load" "$seconds" "$passed" "$failed" "$ignored" >> "$logs/summary"
  # Failures with their binary: "Running tests/x.rs (...)" precedes its tests.
  awk '/^     Running / {bin = $2 " " $3 " " $4} / \.\.\. FAILED$/ {print "  FAILED " bin " " $2}' "$log" | tee -a "$logs/failures"
  # A build error, a test binary killed by a signal (no summary line), or
  # the hour's bound.
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "  run $run did not end within an hour, see $log"
    failed=$((failed + 1))
  elif grep -qE '^error(\[E[0-9]+\])?: could not compile|\(signal: [0-9]+' "$log"; then
    echo "  build or harness error, see $log"
    failed=$((failed + 1))
  fi
  total_failures=$((total_failures + failed))
done
stop_load

echo
cat "$logs/summary"
echo "logs: $logs"
if [ "$total_failures" -gt 0 ]; then
  echo "$total_failures failures"
  exit 1
fi
echo "no failures"
