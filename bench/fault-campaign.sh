#!/usr/bin/env bash
# Fault campaign from outside (issue 39 classes: writers, readers, report,
# compiler, resume): each case runs the real binary under a 60 s kill
# timeout and /usr/bin/time, then checks exit code, files and device nodes
# afterwards. Prints: id | case | exit | seconds | max RSS KiB | result.
# Usage: EXPC=target/release/expc bash bench/fault-campaign.sh
# Needs mkfifo, truncate, bc, /usr/bin/time; the embedded broker for its runs.
set -u
EXPC=$(realpath "${EXPC:?set EXPC to the expc binary}")
W=$(mktemp -d /tmp/expc-campaign.XXXX); cd "$W"
ok=0; bad=0
row() { printf '%s | %s | %s | %s | %s | %s\n' "$@"; }
# case ID DESC EXPECTED_EXIT CHECK -- CMD...   (CHECK: a shell expression run afterwards; output in $W/out)
case_() {
  local id=$1 desc=$2 want=$3 check=$4; shift 5
  local t0=$(date +%s.%N)
  /usr/bin/time -f %M -o "$W/rss" timeout -s KILL 60 "$@" >"$W/out" 2>&1 </dev/null
  local rc=$?; local t1=$(date +%s.%N)
  local secs=$(printf '%.1f' "$(echo "$t1 - $t0" | bc)")
  local rss=$(tail -1 "$W/rss" 2>/dev/null)
  local res=OK
  if [ "$rc" = 137 ]; then res="HANG (killed at 60 s)"; elif [ "$rc" -ge 100 ]; then res="CRASH rc=$rc";
  elif [ "$want" != any ] && [ "$rc" != "$want" ]; then res="exit $rc, wanted $want: $(head -c 200 "$W/out" | tr '\n' ' ')";
  elif ! (eval "$check") >/dev/null 2>&1; then res="check failed [$check]: $(head -c 200 "$W/out" | tr '\n' ' ')"; fi
  [ "$res" = OK ] && ok=$((ok+1)) || bad=$((bad+1))
  row "$id" "$desc" "$rc" "$secs" "$rss" "$res"
}
has() { grep -q -- "$1" "$W/out"; }

cat > spec.exp <<'S'
experiment "camp" {
  seed = 1
  duration = 3s
  fleet "s" {
    devices = 4
    gap = 500ms
    payload = json(size = 128B, fields = [temperature])
    qos = 1
  }
}
S
$EXPC run spec.exp --out runs >/dev/null 2>&1
RUN=$(ls -d runs/camp/*/ | head -1); RUN=${RUN%/}
cp -a "$RUN" run2
mkfifo fifo
echo "== writers"
case_ W01 "report --html /dev/null" 0 '[ -c /dev/null ]' -- $EXPC report "$RUN" --html /dev/null
case_ W02 "report --html /dev/full" 1 '[ -c /dev/full ] && has "No space"' -- $EXPC report "$RUN" --html /dev/full
ln -s target.html link.html
case_ W03 "report --html symlink to missing target" 0 '[ -L link.html ] && [ -s target.html ]' -- $EXPC report "$RUN" --html link.html
mkdir adir
case_ W04 "report --html a directory" 1 '[ -d adir ] && has directory' -- $EXPC report "$RUN" --html adir
case_ W05 "report --html FIFO with no reader" 1 '[ -p fifo ]' -- $EXPC report "$RUN" --html fifo
echo x > afile
case_ W06 "report --svg a regular file" 1 '[ "$(cat afile)" = x ]' -- $EXPC report "$RUN" --svg afile
case_ W07 "plan -o /dev/full" 1 '[ -c /dev/full ]' -- $EXPC plan spec.exp -o /dev/full
ln -s plan-target.json plan-link.json
case_ W08 "plan -o symlink" 0 '[ -L plan-link.json ] && [ -s plan-target.json ]' -- $EXPC plan spec.exp -o plan-link.json
case_ W09 "plan -o a directory" 1 '[ -d adir ]' -- $EXPC plan spec.exp -o adir
case_ W10 "plan -o FIFO with no reader" 1 '[ -p fifo ]' -- $EXPC plan spec.exp -o fifo
case_ W11 "plan -o under a file (afile/x.json)" 1 '[ "$(cat afile)" = x ]' -- $EXPC plan spec.exp -o afile/x.json
cp -a afile ro; chmod 444 ro
case_ W12 "plan -o a read-only file (root may write it)" 0 'true' -- $EXPC plan spec.exp -o ro
mkdir lib; cp spec.exp lib/a.exp; (cd lib && $EXPC plan a.exp -o __snap.json >/dev/null 2>&1; rm -f __snap.json)
case_ W13 "test --junit /dev/full" 1 '[ -c /dev/full ]' -- $EXPC test lib --junit /dev/full
case_ W14 "test --junit /dev/null" 'any' 'true' -- $EXPC test lib --junit /dev/null
case_ W15 "report --html existing file keeps mode 640" 0 '[ "$(stat -c %a keep.html)" = 640 ]' -- sh -c "echo old > keep.html; chmod 640 keep.html; $EXPC report $RUN --html keep.html"
ln -s nowhere/dangling.html dang.html
case_ W16 "report --html symlink into a missing dir" 'any' '[ -L dang.html ]' -- $EXPC report "$RUN" --html dang.html
case_ W17 "report --html into a missing directory (made)" 0 '[ -s newdir/sub/r.html ]' -- $EXPC report "$RUN" --html newdir/sub/r.html
case_ W18 "report --svg into a new directory" 0 'ls svgs/*.svg' -- $EXPC report "$RUN" --svg svgs
mkdir realdir; ln -s realdir linkdir
case_ W19 "report --svg into a symlink to a directory" 0 '[ -L linkdir ] && ls realdir/*.svg' -- $EXPC report "$RUN" --svg linkdir
case_ W20 "plan -o /dev/stdout" 0 'has plan_version' -- $EXPC plan spec.exp -o /dev/stdout
case_ W21 "report --svg a FIFO" 1 '[ -p fifo ]' -- $EXPC report "$RUN" --svg fifo
echo "== readers"
case_ R01 "check /dev/zero" 1 'true' -- $EXPC check /dev/zero
case_ R02 "check a FIFO" 1 'true' -- $EXPC check fifo
truncate -s 17M big.exp
case_ R03 "check a 17 MiB spec" 1 'has MiB' -- $EXPC check big.exp
case_ R04 "check a directory" 1 'true' -- $EXPC check adir
case_ R05 "check a missing file" 1 'true' -- $EXPC check missing.exp
ln -s /dev/zero zero.exp
printf 'import "zero.exp"\n' > imp-zero.exp; cat spec.exp >> imp-zero.exp
case_ R06 "check a spec importing a link to /dev/zero" 1 'true' -- $EXPC check imp-zero.exp
ln -s fifo fifo.exp
printf 'import "fifo.exp"\n' > imp-fifo.exp; cat spec.exp >> imp-fifo.exp
case_ R07 "check a spec importing a FIFO" 1 'true' -- $EXPC check imp-fifo.exp
truncate -s 2G huge.json
case_ R08 "run a 2 GB plan.json" 1 'true' -- $EXPC run huge.json --out runs
case_ R09 "xml extract /dev/zero" 1 'true' -- $EXPC xml extract /dev/zero -o xset
case_ R10 "xml extract a FIFO" 1 'true' -- $EXPC xml extract fifo -o xset2
printf '\xff\xfe<\x00a\x00>\x00<\x00/\x00a\x00>\x00' > u16.xml
case_ R11 "xml extract a UTF-16 file" 1 'has UTF-16' -- $EXPC xml extract u16.xml -o xset3
case_ R12 "serve --secret-file FIFO" 1 'true' -- $EXPC serve --secret-file fifo --for 2s
case_ R13 "serve --secret-file /dev/zero" 1 '! has chmod' -- $EXPC serve --secret-file /dev/zero --for 2s
truncate -s 300M bigsecret; chmod 600 bigsecret
case_ R14 "serve --secret-file 300 MB" 1 'true' -- $EXPC serve --secret-file bigsecret --for 2s
case_ R15 "fmt /dev/zero" 1 'true' -- $EXPC fmt /dev/zero
case_ R16 "fmt a FIFO" 1 'true' -- $EXPC fmt fifo
case_ R17 "traffic convert /dev/zero" 1 '[ ! -e conv.cvec ]' -- $EXPC traffic convert /dev/zero conv.cvec
case_ R18 "report a FIFO as run" 1 'true' -- $EXPC report fifo
case_ R19 "plan /dev/zero" 1 'true' -- $EXPC plan /dev/zero
case_ R20 "check a spec with a NUL byte" 1 'true' -- sh -c "printf 'experiment \"a\" {\0}' > nul.exp; $EXPC check nul.exp"
ln -s loop1.exp loop2.exp; ln -s loop2.exp loop1.exp
case_ R21 "check a symlink loop" 1 'true' -- $EXPC check loop1.exp
python3 -c "print('experiment \"p\" {\n  seed = ' + '('*5000 + '1' + ')'*5000 + '\n  duration = 1s\n}')" > parens.exp
case_ R22 "check 5,000 nested parentheses" 1 'true' -- $EXPC check parens.exp
head -c 65536 /dev/urandom > random.exp
case_ R23 "check 64 KiB of random bytes" 1 'true' -- $EXPC check random.exp
printf 'import "self.exp"\n' > self.exp; cat spec.exp >> self.exp
case_ R24 "check a spec importing itself" 1 'true' -- $EXPC check self.exp
printf 'import "adir"\n' > impdir.exp; cat spec.exp >> impdir.exp
case_ R25 "check a spec importing a directory" 1 'true' -- $EXPC check impdir.exp
case_ R26 "run --resume a FIFO" 1 '[ -p fifo ]' -- $EXPC run --resume fifo
: > empty.xml
case_ R27 "xml extract an empty file" 'any' 'true' -- $EXPC xml extract empty.xml -o xset4
printf '<a><b>1</b></a>' | gzip | head -c 20 > trunc.xml.gz
case_ R28 "xml extract a truncated .gz" 'any' 'true' -- $EXPC xml extract trunc.xml.gz -o xset5
case_ R29 "traffic convert a FIFO" 1 '[ -p fifo ] && [ ! -e conv2.cvec ]' -- $EXPC traffic convert fifo conv2.cvec
printf 'experiment "\xff\xfe" {\n  duration = 1s\n}\n' > badutf8.exp
case_ R30 "check a spec that is not UTF-8" 1 'true' -- $EXPC check badutf8.exp
echo "== report"
cp -a "$RUN" nomsg; rm -rf nomsg/tables/mqtt_messages
case_ P01 "report of a fleet run without mqtt_messages" 0 'has mqtt_messages' -- $EXPC report nomsg
sed 's/"camp"/"other"/' spec.exp > other.exp; $EXPC run other.exp --out runs >/dev/null 2>&1
OTHER=$(ls -d runs/other/*/ | head -1); OTHER=${OTHER%/}
case_ P02 "report A B of different experiments" 0 'has experiment' -- $EXPC report "$RUN" "$OTHER"
cp -a "$RUN" garb; sed -i '1s/^/garbage\n/' garb/manifest.journal 2>/dev/null || printf 'garbage\n' > garb/manifest.journal
case_ P03 "report a run with a garbage journal line" 0 'true' -- $EXPC report garb
case_ P04 "report a directory that is no run" 1 'true' -- $EXPC report adir
case_ P05 "report --json of a run" 0 'python3 -c "import json,sys; json.load(open(\"$W/out\"))"' -- $EXPC report "$RUN" --json
cp -a "$RUN" noplan; rm noplan/plan.json
case_ P06 "report a run without plan.json" 'any' 'true' -- $EXPC report noplan
cp -a "$RUN" corrupt; f=$(find corrupt/tables/mqtt_messages -name '*.parquet' | head -1); head -c 100 "$f" > "$f.cut" && mv "$f.cut" "$f"
case_ P07 "report a run with a truncated Parquet file" 'any' 'true' -- $EXPC report corrupt
cp -a "$RUN" badmanifest; echo garbage > badmanifest/manifest.json
case_ P08 "report a run whose manifest.json is garbage" 1 'true' -- $EXPC report badmanifest
cp -a "$RUN" notables; rm -rf notables/tables
case_ P09 "report a run without its tables directory" 'any' 'true' -- $EXPC report notables
case_ P10 "report the same run twice (A A)" 0 'true' -- $EXPC report "$RUN" "$RUN"
echo "== compiler"
printf '// a \xe2\x80\xae b\n' > bidi.exp; cat spec.exp >> bidi.exp
case_ C01 "U+202E in a comment" 1 'has E0108' -- $EXPC check bidi.exp
python3 - <<'P'
s = 'experiment "n" {\n  seed = 1\n  duration = 3s\n' + ''.join('  '*(i+1)+'monitor {\n' for i in range(40)) + ''.join('  '*(i+1)+'}\n' for i in reversed(range(40))) + '}\n'
open('nest.exp','w').write(s)
s = 'experiment "o" {\n  seed = 1\n  duration = 10s\n' + ''.join(f'  anomaly "c{i}" {{\n    kind = cpuoccupy\n    utilization = 1%\n    cores = [0]\n    at = 0s\n    for = 5s\n  }}\n' for i in range(200)) + '}\n'
open('over.exp','w').write(s)
P
case_ C02 "40 nested monitor blocks" 1 'has E0106 && ! has "not allowed in monitor"' -- $EXPC check nest.exp
case_ C03 "200 cpuoccupy at 1 % on core 0" 1 'has E0602' -- $EXPC check over.exp
case_ C04 "slurm --partition with a newline" 1 '! ls runs/camp/*.slurm/job.sbatch' -- $EXPC slurm spec.exp --shards 1 --partition $'a\nb' --out runs
case_ C05 "run --shard 0/4294967296" 2 'true' -- $EXPC run spec.exp --shard 0/4294967296 --out runs
case_ C06 "run --out a dangling symlink" 1 '! has "File exists"' -- sh -c "ln -sf /nonexistent/x dangout; $EXPC run spec.exp --out dangout"
printf 'experiment "\xe2\x80\xae" {\n  duration = 1s\n}\n' > bidilabel.exp
case_ C07 "U+202E in a label" 1 'has E0108' -- $EXPC check bidilabel.exp
python3 -c "print('experiment \"l\" {\n  duration = 1s\n' + ''.join(f'  let v{i} = {i}\n' for i in range(100000)) + '}')" > manylets.exp
case_ C08 "100,000 let bindings" 'any' 'true' -- $EXPC check manylets.exp
cat spec.exp spec.exp > twice.exp
case_ C09 "two experiments in one file" 1 'true' -- $EXPC check twice.exp
case_ C10 "run --shard 2/2" 2 'true' -- $EXPC run spec.exp --shard 2/2 --out runs
echo "== resume"
case_ S01 "resume a complete run by bare name" 0 '[ -d run2 ] && [ ! -e .run2.partial ] && [ ! -e run2/runner.lock ]' -- $EXPC run --resume run2
case_ S02 "resume ./NAME/" 0 '[ -d run2 ]' -- $EXPC run --resume ./run2/
ln -s run2 run2link
case_ S03 "resume a symlink to a run" 0 '[ -L run2link ] && [ -d run2 ]' -- $EXPC run --resume run2link
case_ S04 "resume a missing run" 1 'true' -- $EXPC run --resume nope
case_ S05 "resume a directory that is no run" 1 'true' -- $EXPC run --resume adir
case_ S06 "resume a whole run as --shard 0/2" 1 'true' -- $EXPC run --resume run2 --shard 0/2
cp -a run2 nomanifest; rm nomanifest/manifest.json
case_ S07 "resume a run without manifest.json" 1 'true' -- $EXPC run --resume nomanifest
rm -rf "$W"
echo "total: $ok OK, $bad not OK"
[ "$bad" = 0 ]
