//! Stable diagnostic codes and their long explanations (`expc explain CODE`).
//!
//! Codes are grouped by stage: E01 syntax, E02 names and imports, E03 blocks
//! and properties, E04 types and units, E05 values, E06 timing, E07 sweeps and
//! repetitions, W08 warnings, E09 compiler bugs, E10 run preflight (checks of the
//! machine before anything starts), E11 claims; then the validity findings of a trial
//! that ran (`exp_results::validity`, never diagnostics of a spec): V01
//! fleets, V02 traffic, V03 anomalies, V04 xml, V05 the monitor, V06 the host. A code, once
//! published, keeps its meaning.

macro_rules! codes {
    ($($code:ident => $title:literal, $text:literal;)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $($code),* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$code),*];

            pub fn as_str(self) -> &'static str {
                match self { $(Code::$code => stringify!($code)),* }
            }

            /// One line: what kind of problem this is.
            pub fn title(self) -> &'static str {
                match self { $(Code::$code => $title),* }
            }

            /// Several paragraphs with an example and its fix.
            pub fn explanation(self) -> &'static str {
                match self { $(Code::$code => $text),* }
            }

            /// Parses `E0302`, `e0302` or `0302`.
            pub fn parse(text: &str) -> Option<Code> {
                let text = text.trim().to_ascii_uppercase();
                Code::ALL.iter().copied().find(|c| {
                    let s = c.as_str();
                    s == text || s[1..] == text
                })
            }
        }
    };
}

codes! {
    E0101 => "syntax error",
"The text does not follow the grammar of the exp language at this point. The
message says what the parser expected in words (a property, `=`, a value, `}`).

The parser recovers at top-level items and at block members, so one pass reports
every syntax error of a file, not only the first.

Example:

    fleet \"plant\" {
      devices 10          // error: expected `=`
    }

Fix:

    fleet \"plant\" {
      devices = 10
    }
";
    E0102 => "unterminated string or comment",
"A string literal or a `/* ... */` comment is not closed before the end of the file.

Example:

    description = \"Broker latency

Fix: close the string on the same line: `description = \"Broker latency\"`.
";
    E0103 => "unknown unit",
"A number is followed by a unit the language does not know. Units:

    durations   ns us ms s min h
    sizes       B KB MB GB TB KiB MiB GiB TiB
    bandwidth   bit/s Kbit/s Mbit/s Gbit/s (also bps Kbps Mbps Gbps) B/s KB/s MB/s GB/s KiB/s MiB/s GiB/s
    rates       /s /min /h (events per unit of time)
    percent     %

Example:

    gap = 200msec

Fix:

    gap = 200ms
";
    E0104 => "number not representable",
"A number literal cannot be represented: a whole number outside the 64-bit
integer range (about ±9.2e18), or a number with a fraction or exponent that
overflows to infinity (`1e999`). This holds with a unit too (`99999999999999999999ms`).

A fraction where a whole number is expected is not this error but a type
mismatch, E0401 (`devices = 2.5`); a representable number outside a property's
range is E0501 (`seed` must lie between 0 and 2^53 − 1).

Example:

    experiment \"x\" {
      seed = 99999999999999999999
    }

Fix: a smaller number, `seed = 42`.
";
    E0105 => "invalid escape in string",
"Strings accept the escapes \\\\ \\\" \\n \\t \\r and \\u{XXXX}. Any other escape is an error.

Example:

    description = \"C:\\temp\"

Fix: double the backslash, `\"C:\\\\temp\"`.
";
    E0106 => "nesting too deep",
"Brackets, braces and parentheses (lists, records, calls and blocks together)
nest deeper than 32 levels. Real specs nest four to six levels; the limit keeps
every pass of the compiler (parsing, checking, formatting) within a small,
fixed stack, and plans within what JSON readers accept. The error points at the
first bracket past the limit; the statement holding it is not parsed further.

Example:

    let x = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]

Fix: flatten the value; name inner parts with `let`.
";
    E0107 => "too many diagnostics",
"A file has so many problems that listing them all would bury the first ones
(and take long): at most 100 diagnostics are shown, followed by how many more
there are, and the parser stops after 100 syntax errors in one file (this
error marks where it stopped; nothing after it is checked). This usually
means the file is not an exp spec at all, or a bracket or quote opened early
is never closed.

Fix: correct the first errors and check again.
";
    E0108 => "bidirectional control character",
"A comment or a string holds a bidirectional control character (U+202A to
U+202E, U+2066 to U+2069, U+200E, U+200F or U+061C). They are invisible and
reorder how the text around them is displayed, so an editor or a review can
show a spec that reads differently from what the compiler reads (the Trojan
Source attack, CVE-2021-42574): a comment that seems to end before a
property, a label that seems to be another. Diagnostics show them escaped,
`\\u{202E}`, never raw. Outside comments and strings they are syntax errors
(E0101), as every invisible character is.

Example, with U+202E written where it is:

    // the hog is off<U+202E> }  anomaly \"hog\" { kind = cpuoccupy

Fix: delete the character; in a string, write it as an escape (`\\u{202E}`)
if it is really meant, so that it stays visible.
";
    E0201 => "undefined name",
"A name is used that no `let`, sweep parameter or import defines, and it is not a
member of the enumeration the property expects. The compiler suggests the
closest defined name.

Example:

    let sizes = [512B, 2KiB]
    experiment \"x\" {
      sweep { size = sizez }
    }

Fix: `size = sizes`.
";
    E0202 => "duplicate definition",
"Two definitions share one name in the same scope: two `let`s, two imports under
one alias, or two workload blocks with the same label in an experiment. Every
workload label names its tables and seeds, so labels must be unique.

Example:

    let gap = 100ms
    let gap = 200ms

Fix: rename one of them.
";
    E0203 => "import cycle",
"Files import each other in a cycle. The message names the whole cycle. Move what
both files need into a third file that imports neither.

Example: `a.exp` has `import \"./b.exp\" as b` and `b.exp` has
`import \"./a.exp\" as a`.
";
    E0204 => "module not found",
"An import names a file or stdlib module that does not exist or cannot be read
(also the root spec itself). Only regular files of at most 16 MiB are read: a
FIFO, a device such as /dev/zero or a directory is refused, not read. Relative imports
(`./x.exp`, `../x.exp`) are resolved from the importing file's folder; `std/NAME`
names a module embedded in expc (see the stdlib list in docs/language.md).

Example:

    import \"std/iott\"

Fix: `import \"std/iot\"`.
";
    E0205 => "unknown module member",
"A qualified name `module.member` refers to a member the module does not define.

Example:

    import \"std/pareto\"
    let g = pareto.median_100ms_shape_9

Fix: use a member the module defines; the help line lists the closest one.
";
    E0206 => "property set twice",
"A property is given two values in the same block. Only one can hold.

Example:

    fleet \"a\" {
      devices = 10
      devices = 20
    }

Fix: remove one line.
";
    E0301 => "unknown block kind",
"A block's kind is not in the schema registry, at the top level or nested in
another block. The block kinds are `experiment` (the only top-level block);
inside an experiment `sweep`, `monitor` and the workloads `fleet`, `anomaly`,
`traffic` and `xml`; inside a `fleet` its `broker`. The help line suggests the
closest kind, preferring one the enclosing block accepts, and a note lists the
kinds allowed there. A known kind in the wrong place is E0304 instead.

Example:

    experiment \"x\" {
      anomly \"hog\" { kind = cpuoccupy }
    }

Fix: `anomaly \"hog\" { kind = cpuoccupy }`.
";
    E0302 => "unknown property",
"A block has a property that its schema does not define. The compiler suggests the
closest property name of that block.

Example:

    fleet \"plant\" { devces = 10 }

Fix: `devices = 10`.
";
    E0303 => "missing required property",
"A block lacks a property that has no default. The message names it and its type.

Example:

    anomaly \"a\" { utilization = 50% }

Fix: add the anomaly's kind: `kind = cpuoccupy`.
";
    E0304 => "block not allowed here",
"A block of a known kind appears where it cannot: a workload outside an experiment,
a `sweep` inside a workload, a second `monitor`.

Example:

    fleet \"plant\" { devices = 10 }     // at top level

Fix: move the block into an `experiment`.
";
    E0305 => "wrong block label",
"A block that needs a label has none, or one that takes none has one. Workloads
and experiments are labelled (`fleet \"plant\" { ... }`); `sweep` and `monitor` are not.

Example:

    fleet { devices = 10 }

Fix: `fleet \"plant\" { devices = 10 }`.
";
    E0306 => "no experiment",
"`expc plan` and `expc run` need exactly one `experiment` block in the root file
(imported files may not define experiments).

Fix: add `experiment \"name\" { ... }`, or plan the file that has it.
";
    E0401 => "type mismatch",
"A value has a different type than the property or argument expects, for example a
string where a number is needed or a list where a single value is needed.

Example:

    devices = \"ten\"

Fix: `devices = 10`.
";
    E0402 => "wrong unit",
"A quantity has a unit of the wrong dimension: a size where a duration is
expected, a rate where a bandwidth is expected.

Example:

    gap = 2KiB

Fix: `gap = 200ms`.
";
    E0403 => "number without a unit",
"A bare number is given where the value needs a unit. The compiler never guesses
a unit: `200` might mean 200 ms or 200 s. The help line shows the fix with the
property's usual unit.

Example:

    for = 60

Fix: `for = 60s`.
";
    E0404 => "wrong distribution unit",
"A distribution produces values of another dimension than expected: a size
distribution where a duration distribution is needed, or a distribution whose
parameters mix units.

Example:

    gap = exponential(mean = 2KiB)

Fix: `gap = exponential(mean = 200ms)`.
";
    E0405 => "unknown function",
"A call names no distribution or constructor. Distributions: constant, uniform,
normal, lognormal, exponential, pareto, weibull, gamma, poisson, geometric,
empirical. Constructors: until, json, raw, paths, range and the workload-specific
ones listed in docs/language.md.

Example:

    gap = paretto(shape = 3, median = 100ms)

Fix: `pareto(shape = 3, median = 100ms)`.
";
    E0406 => "wrong arguments",
"A call has a missing, unknown, repeated or surplus argument. Arguments may be
positional in the documented order or named (`shape = 3`).

Example:

    gap = pareto(median = 100ms)

Fix: `pareto(shape = 3, median = 100ms)`.
";
    E0407 => "unknown enumeration member",
"A property takes one of a fixed set of names and the given name is not one of
them. The message lists the allowed members.

Example:

    kind = cpu_occupy

Fix: `kind = cpuoccupy`.
";
    E0501 => "value out of range",
"A value lies outside the range the property allows, for example a percentage
over 100 %, zero devices, or a QoS level of 3. The shape parameters of
`pareto`, `weibull`, `gamma` and `lognormal` lie in 0.01 to 100:
outside that range the distribution underflows or overflows (`pareto(shape =
1e-300, median = 1ms)` would have a scale of 0). `synthetic(connections = …)`
makes at most 10,000,000 connections: the replay holds each one's vector in
memory before the trial starts. A fleet's `warmup` given as a duration must
be shorter than each of its intervals, or no message would be measured. An
anomaly's child refuses what is checked here too: a `membw` buffer is split
over its cores, at least 4 KiB each; a netoccupy `peer` is `host:port`; an
I/O anomaly's `dir` names a directory (no NUL byte).

Example:

    utilization = 120%

Fix: `utilization = 100%`.
";
    E0502 => "invalid distribution parameters",
"A distribution's parameters do not define a distribution: a non-positive scale
or mean, a standard deviation below zero, a uniform whose minimum exceeds its
maximum, a probability outside (0, 1].

Example:

    gap = weibull(shape = 2, scale = -1s)

Fix: `weibull(shape = 2, scale = 1s)`.
";
    E0503 => "conflicting properties",
"Two properties or arguments that exclude each other are both given: `for` and
`until` on one workload, two of `scale`, `median` and `mean` in one Pareto
distribution (or a `mean` with a shape of at most 1, which has none),
`rtts` and `distribution` in one `paths(...)`, a `paths` whose `count`
differs from the number of `rtts` it lists, or a fleet's `first_send = uniform`
(the default: first sends spread over one mean gap) with a `gap` that has no
finite mean (a Pareto with a shape of at most 1).

Example:

    anomaly \"a\" { kind = cpuoccupy  for = 10s  until = 30s }

Fix: keep one of them.
";
    E0504 => "invalid list or range",
"A list is empty where values are needed (a sweep parameter's values, the
`cores` of an anomaly that runs one thread per listed core), or a range is
empty or its step is not positive.

Example:

    sweep { utilization = 100%..10% step 10% }

Fix: `10%..100% step 10%`.
";
    E0505 => "file not found",
"A file named in the spec (an empirical distribution, a connection-vector trace, an
XML synthesis set) does not exist or cannot be read. Files the compiler reads
(`empirical` values) must be regular files of at most 16 MiB. Paths are relative to the
spec's folder.

Example:

    gap = empirical(\"gaps.csv\")

Fix: give the path of an existing file.
";
    E0506 => "quantity out of range",
"A quantity is too large to be a value of the plan. Durations, sizes and
bandwidths are whole numbers of nanoseconds, bytes and bit/s in the plan, and
their magnitude may be at most 2^53 − 1 ns, B or bit/s (the largest integer every
JSON reader holds exactly, as for `seed`): about 104 days, 8 PiB or 9 Pbit/s.
The error points at the literal, wherever it is used (a property, a
distribution's parameter, a sweep).

Example:

    experiment \"x\" {
      duration = 1e308s
    }

Fix: `duration = 1h`.
";
    E0601 => "time window outside the trial",
"A workload's time window starts or ends after the trial's `duration`, so part of
it would never run.

Example:

    experiment \"x\" {
      duration = 60s
      anomaly \"a\" { kind = cpuoccupy  at = 50s  for = 20s }
    }

Fix: shorten the window or lengthen the trial.
";
    E0602 => "overlapping time windows",
"Two windows overlap where they must not: a periodic schedule whose `active` part
is at least its period (`every`), or `cpuoccupy` anomalies that load one core at
the same time beyond 100 % together, which would mislabel the ground truth. The
load of a core at an instant is the sum of the utilisations of every anomaly
active on it then, however many: ten anomalies at 20 % each overlap as surely as
two at 60 %. The error names the core, the instant of its highest load and the
anomalies active then.

Example:

    anomaly \"a\" { kind = cpuoccupy  cores = [1]  utilization = 80%  at = 0s   for = 30s }
    anomaly \"b\" { kind = cpuoccupy  cores = [1]  utilization = 50%  at = 20s  for = 30s }

Fix: move one window, or put the anomalies on different cores.
";
    E0603 => "empty time window",
"A window ends before or where it starts: `until` not after `at`, or `for = 0s`.

Example:

    anomaly \"a\" { kind = memleak  at = 30s  until = 20s }

Fix: `until = 40s`.
";
    E0604 => "incomplete periodic schedule",
"`every` and `active` go together: `every = 35s` with `active = 5s` runs the
workload for 5 s at the start of every 35 s.

Example:

    traffic \"bulk\" { every = 35s }

Fix: `every = 35s  active = 5s`.
";
    E0605 => "unbounded workload",
"A workload has no end: no `for`/`until`, no natural end of its own (a message or
document count, a trace), and the experiment has no `duration`.

Fix: add `duration = ...` to the experiment or `for = ...` to the workload.
";
    E0606 => "schedule too dense",
"A schedule asks for more than the runtime can honour, so a run would flood
the machine or exhaust memory instead of measuring anything:

- one MQTT device's mean `gap` must be at least 1 ms (1,000 messages/s per
  device; a `gap` of 0s would send as fast as the CPU allows);
- a periodic window's `active` part and its pause (`every − active`) must
  each be at least 10 ms: every interval starts the workload anew;
- a periodic workload may have at most 100,000 active intervals in one trial.

Example:

    experiment \"x\" {
      duration = 1h
      anomaly \"a\" { kind = cpuoccupy  every = 2ns  active = 1ns }
    }

Fix: `every = 10s  active = 2s`; for more load, add devices rather than
shortening their gap.
";
    E0701 => "conflicting sweep parameter",
"A sweep parameter is declared twice, or its name shadows a `let` binding or an
import, so it would be unclear which value a workload gets.

Example:

    let size = 1KiB
    experiment \"x\" { sweep { size = [1KiB, 2KiB] } }

Fix: rename the sweep parameter or the binding.
";
    E0702 => "sweep parameter is not a list",
"Each sweep parameter takes a list of values (or a range with a step); the trials
are the cross product of all lists.

Example:

    sweep { devices = 100 }

Fix: `sweep { devices = [100, 200, 400] }`.

The values themselves must be single values: a range inside the list
(`[1s..2s, 3s..4s]`) is reported too, since no trial can take a range.
";
    E0703 => "invalid repeat rule",
"`repeat` takes a count or `until(ci = C, width = W, of = \"METRIC\", max = N)`:
stop repeating a sweep point when the C confidence interval of METRIC's mean is
narrower than W (relative to the mean), after at least `min` (default 3) and at
most N repetitions. C must lie in (0 %, 100 %), W must be positive, N at least
`min`, and METRIC one a workload of this experiment measures.

Example:

    repeat = until(ci = 99%, width = 5%, of = \"latncy\", max = 60)

Fix: `of = \"ack_latency\"`.
";
    E0704 => "too many trials",
"The sweep's cross product times the repetitions exceeds the limit of 1,000,000
trials per plan, or one range of a sweep has more values than that. The count
is the product of each parameter's number of values, computed before any point
is made, so even `1..1000000 step 1` swept against itself (10^12 trials) is
refused at once. Shard the experiment into several specs or narrow the sweep.

Example:

    experiment \"x\" {
      sweep { a = 1..1000000 step 1  b = 1..1000000 step 1 }
    }

Fix: sweep fewer values, e.g. `a = 1..1000000 step 10000`.
";
    E0705 => "block varies too much",
"A block is lowered into the plan once per combination of the values of the
sweep parameters its properties name, and one block may vary in at most 10,000
combinations. A fleet's independent properties (`devices`, `gap`, `payload`,
`qos`, rates and timeouts) do not count: each of their values is stored once,
so `devices = n` may sweep up to a million values. Every other property, a
timing property or an anomaly's, multiplies the block's combinations.

Example:

    experiment \"x\" {
      sweep { load = 0.01%..100% step 0.01%  at = 1s..100s step 1s }
      anomaly \"hog\" { kind = cpuoccupy  utilization = load  at = at  for = 1s }
    }

Fix: sweep fewer values of those properties, or split the study into specs.
";
    W0801 => "unused binding",
"A `let` binding or sweep parameter is never used. An unused sweep parameter still
multiplies the number of trials.

Fix: use it, or remove it.
";
    W0802 => "empty file",
"The file has no import, binding or block: only whitespace and comments. `expc
check` accepts a file without an experiment as a module of bindings for other
specs; an empty one is most likely a file saved empty by mistake.

Fix: write the experiment or the bindings, or remove the file.
";
    W0803 => "connect ramp as long as the window",
"A fleet's devices connect one after another at `connect_rate`, and none sends
until every one has connected or failed. When `devices / connect_rate` is at
least the fleet's window (the trial, the fleet's `for` or `until`, or each
`active` period), the window ends during the connect phase: nothing is sent,
every device and scheduled message is recorded (`not_started`, `dropped`), and
the trial fails. A sweep is warned about once per fleet, for its slowest ramp
against its window; `--time-scale` shortens windows but not the ramp, so a
scaled run can end its windows early even without this warning.

Example:

    experiment \"ramp\" {
      duration = 5s
      fleet \"plant\" { devices = 30  connect_rate = 2/s  gap = 1s }
    }

Fix: raise `connect_rate` (the embedded broker held about 400/s), lengthen the
window, or use fewer devices.
";
    E0901 => "internal compiler error",
"The compiler reached a state it considers impossible. Please report it with the
spec that triggered it.
";
    E1001 => "not enough memory",
"Preflight: the memory a plan's anomalies may take (memeater and memleak limits,
membw buffers, cachecopy arrays) exceeds what this machine has available now
(MemAvailable minus a safety margin of 5 % of MemTotal, at least 256 MiB).
Nothing was started and no run directory was written.

Fix: lower the anomaly's `limit` (or `buffer`), free memory, or pass `--force`
to run anyway (the kernel may then invoke the OOM killer).
";
    E1002 => "not enough disk space",
"Preflight: the files a plan writes (iobandwidth files, the run directory) need
more space than the file system holding them has free.

Fix: point `dir` at a larger file system, lower `file_size` or `ntasks`, or free
space.
";
    E1003 => "CPU not available",
"Preflight: a workload is pinned to a CPU this machine does not have online (or
this process may not run on).

Example (on a 2-CPU machine):

    anomaly \"hog\" { kind = cpuoccupy  cores = [3] }

Fix: `cores = [1]`; `nproc` and /sys/devices/system/cpu/online list the CPUs.
";
    E1004 => "path not usable",
"Preflight: a directory a workload works in does not exist or is not writable, or
a file it reads is missing.

Fix: create the directory, fix the path (relative paths are relative to the spec
that wrote them), or leave `dir` out to use a scratch directory inside the run.
";
    E1005 => "workload not runnable here",
"Preflight: a workload cannot run on this machine or with this build as written:
RTT emulation, a bottleneck or loss (network namespaces joined by the userspace
delay stage) needs root and /dev/net/tun, and `server` cannot be combined with
them; a `traffic` workload's `secret_env` must name a set environment variable
holding at least 16 bytes (its value is never printed or stored). The plan is
valid; only running it is refused, before anything starts. A plan edited by
hand is refused here too when a value is outside what the language allows: a
field value that does not fit its property, an anomaly's parameters, a traffic
or xml workload's numbers (`source_addresses = 0`, `threads = 4294967295`).

Fix: run as root on a host with TUN, drop `rtt`, `bottleneck` and `loss` to
replay over plain loopback, export the secret `expc serve` uses, or remove the
workload (`expc plan` shows the plan either way). For a hand-edited plan,
compile the spec again with `expc plan`, or bring the value back within the
property's range (docs/language.md gives each).
";
    E1006 => "broker not usable",
"Preflight: a fleet's broker cannot be used as written. An external broker's
`url` must be `mqtt://host[:port]` or `mqtts://host[:port]`. For `mqtts://`
the TLS files are loaded as a trial would: `ca_file` (PEM CA certificates; without
it the system's CA store) and, for mutual TLS, both `client_cert` and
`client_key` (PEM) must exist, parse and belong together; TLS files with an
`mqtt://` url or the embedded broker are refused rather than ignored. The
environment variables named by `username_env` and `password_env` must be set
(their values are never printed or stored); and the embedded broker (no `url`)
is limited to 10,000 devices per fleet, the largest fleet it was measured
with (on one thread of its own, on a 2-core machine).

Example:

    broker { url = \"mqtts://hub.example:8883\"  ca_file = \"certs/missing.pem\" }

Fix: point `ca_file` at the PEM file of the CA that signed the broker's
certificate, export the credential variables, or run large fleets against an
external broker such as Mosquitto.
";
    E1007 => "fleet settings not usable",
"Preflight: a fleet's payload or schedule cannot be generated. A JSON payload
must be large enough for its header (device, sequence number, send time) and
every field at its widest; `first_send = uniform` spreads first messages over
one mean gap, so the gap distribution needs a finite mean.

Example:

    fleet \"plant\" { payload = json(size = 64B, fields = [temperature, humidity]) }

Fix: `payload = json(size = 256B, fields = [temperature, humidity])`, or give
`first_send` a distribution of its own.
";
    E1101 => "unknown metric",
"A claim names a metric no workload of its kind measures. Row metrics
(computed per trial from each row: `ack_latency`, `duration`, …) take a
statistic such as `p99(…)`; trial metrics (one value per trial, the names
`repeat = until(of = …)` accepts) take `value(…)`. `docs/language.md`,
\"Claims\", lists the metrics of each workload kind.

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        p99(fleet.sensors.ack_latncy) < 25ms   // error: no such metric
      }
    }

Fix: `p99(fleet.sensors.ack_latency) < 25ms`.
";
    E1102 => "unit mismatch in a claim",
"The two sides of a claim must have the same dimension: a latency against a
duration (`25ms`), a share or ratio against a percentage or plain number,
a size against bytes. A factor (`2 * p99(…)`) keeps the statistic's
dimension; the tolerance of `within` is a percentage.

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        p99(fleet.sensors.ack_latency) < 25%   // error: a latency against a share
      }
    }

Fix: `p99(fleet.sensors.ack_latency) < 25ms`.
";
    E1103 => "unknown sweep point in a claim",
"`at P = V` selects the sweep points where parameter `P` has value `V`: `P`
must be a parameter of the experiment's `sweep`, and `V` one of its values.

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        p99(ack_latency at devices = 50) < 25ms   // error: 50 is not swept
      }
    }

Fix: `p99(ack_latency at devices = 100)`, a value the sweep lists.
";
    E1104 => "unknown anomaly in a claim's phase",
"`during`, `before` and `after` select rows by their time relative to an
anomaly's activations, so they name an `anomaly` block of the experiment by
its label.

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        p99(ack_latency during cpuhog) < 25ms   // error: no anomaly `cpuhog`
      }
    }

Fix: `p99(ack_latency during cpu)`.
";
    E1105 => "metric not measured by this workload",
"The workload a claim names exists, but its kind does not measure that
metric (a traffic workload has no `ack_latency`; `loss` is a fleet's,
`failures` a traffic workload's, `max_ks` and `max_tv` an xml set's).

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        p99(cpu.ack_latency) < 25ms   // error: anomalies have no ack latency
      }
    }

Fix: name a workload of a kind that measures it, or a metric of its own kind.
";
    E1106 => "ambiguous metric",
"A metric written without its workload (`ack_latency`) must be measured by
exactly one workload of the experiment; when several measure it, say which
with `label.metric` or `kind.label.metric`.

Example:

    experiment \"x\" {
      duration = 10s
      fleet \"a\" {
        devices = 10
        gap     = 100ms
      }
      fleet \"b\" {
        devices = 10
        gap     = 100ms
      }
      expect {
        p99(ack_latency) < 25ms   // error: `a` or `b`?
      }
    }

Fix: `p99(a.ack_latency) < 25ms`.
";
    E1107 => "trend over a parameter that is not swept",
"`increases with P` and `decreases with P` test a trend across the values
of sweep parameter `P`; the experiment's `sweep` must list `P` with at
least two values.

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        p99(ack_latency) increases with qos   // error: `qos` is not swept
      }
    }

Fix: `p99(ack_latency) increases with devices`.
";
    E1108 => "`abort` where it cannot apply",
"`abort` stops a run once a claim is violated beyond doubt, which a running
trial can only know of a threshold (a statistic against a constant) on a
fleet's or traffic workload's rows, or of `loss` and `share`. Comparisons
between statistics, `within`, trends, and trial or xml metrics are only
decided after the run. Its one argument is `grace`, a duration.

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        p99(ack_latency) increases with devices abort   // error
      }
    }

Fix: remove `abort`, or write the claim as a threshold.
";
    E1109 => "unknown statistic",
"A claim applies a statistic to a metric: `mean`, `median`, `min`, `max`,
`p50`, `p90`, `p95`, `p99`, `p999` and `share(metric op value)` to row
metrics; `value` to trial metrics; `loss` (fleets), `failures` (traffic),
`max_ks` and `max_tv` (xml) to a workload.

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        average(ack_latency) < 25ms   // error: no statistic `average`
      }
    }

Fix: `p99(ack_latency) < 25ms`.
";
    E1110 => "unknown workload in a claim",
"A claim's metric names a workload (`fleet.sensors.ack_latency`,
`sensors.ack_latency`) that the experiment does not have.

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        p99(fleet.sensor.ack_latency) < 25ms   // error: no fleet `sensor`
      }
    }

Fix: `p99(sensors.ack_latency) < 25ms`, the label of a workload.

The monitor's system metrics (`monitor.cpu_user_pct`) need a `monitor`
block in the experiment: without one nothing samples them.
";
    E1111 => "statistic used on the wrong metric",
"Each statistic takes a metric of its own sort: `share` needs a condition
(`share(duration < 500ms)`), which no other statistic takes; quantiles and
means apply to row metrics, `value` to trial metrics, and `loss`,
`failures`, `max_ks`, `max_tv` to a workload itself.

Example:

    experiment \"x\" {
      duration = 10s
      sweep { devices = [10, 100] }
      fleet \"sensors\" {
        devices = devices
        gap     = 100ms
      }
      anomaly \"cpu\" {
        kind = cpuoccupy
        at   = 5s
      }
      expect {
        share(ack_latency) >= 99%   // error: share of what?
      }
    }

Fix: `share(ack_latency < 25ms) >= 99%`, or `p99(ack_latency) < 25ms`.
";
    E1112 => "claims in the wrong place",
"`expect` blocks belong directly in the `experiment`; and `repeat =
until_decided(…)` repeats points until every claim is decided, so it needs
at least one claim.

Example:

    experiment \"x\" {
      duration = 10s
      repeat   = until_decided(max = 10)   // error: no claims to decide
      fleet \"sensors\" {
        devices = 10
        gap     = 100ms
      }
    }

Fix: add an `expect` block, or repeat a fixed number of times.
";
    V0101 => "fleet sends late (contended)",
"Validity, invalid: the 99th percentile of a fleet's send lateness (how long
after its scheduled time each message went out) exceeded the fleet's bound.
The runner, not the system under test, shaped the timing: a starved load
generator sends in bursts and measures the latencies those bursts cause.
This is the `contended` flag of the `trials` table and the fleet's metrics.

The bound is the fleet's `lateness_bound`, or by default a tenth of the
median gap, never under 1 ms (the pacer's own batching allowance).

Aggregates (sweep tables and figures, `repeat until`, comparisons) leave an
invalid trial out unless `--include-invalid` is given.

Fix: give the runner CPUs of its own (keep anomalies and other programs off
them), run fewer devices per runner (`expc run --split`), or state a looser
`lateness_bound` if the study tolerates it.
";
    V0102 => "load generator CPU saturated",
"Validity, degraded: the runner used at least 90 % of the machine's cores
(`runner_cpu_ratio` over the cores) during a fleet's trial. A load
generator with no CPU to spare adds its own queueing to every latency it
measures, even when its sends are still on time.

Fix: fewer devices or messages per runner (`expc run --split` spreads a
fleet over processes or hosts), or a larger machine.
";
    V0103 => "acknowledgements missing",
"Validity, degraded: more than 1 % of a fleet's messages (warm-up aside) got
no acknowledgement (QoS 1 and 2) or could not be written (QoS 0): lost,
timed out or dropped. Latency statistics then describe only the messages
that made it, a biased sample. The `mqtt_messages` table says what became of
each message (`status`, `reason`).

Fix: if the loss is the behaviour under study (a broker under an anomaly),
report it as such; otherwise look at `reason` (`unacked`, `not_queued`,
`session_lost`) and raise `ack_timeout`, `max_inflight` or the broker's
limits.
";
    V0104 => "devices not connected",
"Validity, degraded: some of a fleet's devices were not connected when its
connect phase ended, so the trial measured a smaller fleet than the spec
asked for (`devices_not_connected` in the fleet's metrics, `mqtt_devices`
per device).

Fix: a slower `connect_rate`, a longer window, or a broker that accepts as
many connections (its connection limit, the open-file limit).
";
    V0201 => "connections started late",
"Validity, degraded: the 99th percentile of how late a traffic workload's
connections started, against the start times of its connection vectors,
exceeded 10 ms. The replay's concurrency and load were then not the
trace's: connections meant to overlap ran one after another. The
`traffic_connections` table has `planned_start_ns` and `actual_start_ns`.

Fix: fewer connections at once per runner (`expc run --split`), a quieter
machine, or a trace scaled to what this host can replay.
";
    V0202 => "RTT not the one assigned",
"Validity, degraded: the median connection's measured RTT (TCP's smoothed RTT
at close, `tcp_rtt_ns`) was more than 10 % away from the RTT the delay stage
was to give it (`assigned_rtt_ns`). Results labelled with the assigned RTTs
then describe other ones: a starved delay stage adds delay, and short
connections' smoothed RTT also carries delayed acknowledgements.

Fix: give the delay stage a core of its own, fewer connections per trial,
or longer connections; the `traffic_stage` table shows the stage's capacity.
";
    V0203 => "connections failed",
"Validity, degraded: some of a traffic workload's connections failed
(refused, reset or timed out; `status` and `error` in `traffic_connections`),
so the replay carried less than the trace's connections.

Fix: look at the errors: the acceptor's limits (`expc serve`), the number of
source addresses, the open-file limit.
";
    V0301 => "anomaly did no work",
"Validity, invalid: an anomaly activation ended without doing any work (no
iterations, no bytes, no files, no CPU time): for instance stopped before its
kernel started, or started so late its window was over. Its window in
`anomaly_timeline` is then not ground truth: the row's `ground_truth` is
false, and a dataset labelled from it would label a healthy interval as
anomalous.

Fix: a longer window (at `--time-scale`, windows shrink), fewer anomalies
starting at once on a busy machine; `expc calibrate KIND` shows what a
kernel achieves here.
";
    V0302 => "anomaly below its intensity",
"Validity, degraded: a `cpuoccupy` activation's achieved utilization
(`achieved_utilization_pct` in `anomaly_timeline`) stayed more than 20 %
below what it could reach: the utilization asked for, capped by what the
run's own process (the runner, an embedded broker, the other workloads)
left of the cores over the activation. The anomaly the data is labelled with
was weaker than stated, because processes outside the experiment (or the
hypervisor) took its cores; contention from the experiment itself is what
the anomaly is for and is not counted against it.

Fix: pin the anomaly to cores nothing else uses; `expc calibrate cpuoccupy`
shows what the kernel achieves on this machine.
";
    V0401 => "xml output short of its amount",
"Validity, degraded: an `xml` workload generated fewer documents (or, with
`size`, fewer bytes) than asked, because its window or the trial ended
first (or Ctrl-C). The set in the run directory is incomplete, and the
`xml_generation` row describes the part that was written. In a split run
each part is held to its share of the documents; by `size`, a part's share
is not audited.

Fix: a longer window or trial, more `threads`, or fewer documents.
";
    V0501 => "monitor sampling gap",
"Validity, degraded: two consecutive `system_metrics` samples were more than
twice the monitor's `interval` apart: the runner was stopped or starved, and
nothing is known of the machine in between. The report's monitor figures
break their lines at such a gap instead of drawing across it.

Fix: give the runner CPU (see V0602), or a longer `interval` on a busy
machine.
";
    V0601 => "CPU stolen by the hypervisor",
"Validity, degraded: the hypervisor ran something else on this virtual
machine's CPUs (steal time) for more than 5 % of the cores over the trial.
Every timing of the trial includes stalls no process here can see.

Fix: a dedicated or bare-metal host, or repetitions at another time.
";
    V0602 => "other processes' CPU",
"Validity, degraded: processes outside the run (neither the runner nor its
anomaly children) used more than 25 % of the machine's cores during the
trial. A busy neighbour changes what is measured, and can invert a result
(latencies worse before an anomaly than during it).

Fix: run on a quiet machine, or pin the neighbour and the experiment to
different cores; the `system_metrics` table shows when the neighbour ran.
";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_and_is_explained() {
        for code in Code::ALL {
            assert_eq!(Code::parse(code.as_str()), Some(*code));
            assert!(code.explanation().len() > 40, "{code:?} explanation too short");
            assert!(!code.title().is_empty());
        }
        assert_eq!(Code::parse("e0302"), Some(Code::E0302));
        assert_eq!(Code::parse("0302"), Some(Code::E0302));
        assert_eq!(Code::parse("E9999"), None);
    }
}
