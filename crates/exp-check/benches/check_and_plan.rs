//! `check_and_plan`: the whole compiler (parse, resolve, check, lower) and
//! the plan's JSON, on a generated 5,000-line spec, a 10,000-trial sweep and
//! a 1,000,000-trial sweep (two workloads, each naming one parameter), in
//! memory; and materialising the last trial of the million with its point.
//! `check_overlaps`: 8,000, 16,000 and 100,000 cpuoccupy anomalies on one
//! core, all active at once (the E0602 check sums their load).
//! `bench/plan-scale.sh` measures the same sweeps through `expc` (time, RSS,
//! plan size).
//!
//! Run: `cargo bench -p exp-check --bench check_and_plan`

use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};
use exp_check::{compile, Loader, Options};
use exp_plan::Plan;

struct Memory(HashMap<PathBuf, String>);

impl Loader for Memory {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.0
            .get(path)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not in memory"))
    }
}

/// About 5,000 lines: bindings of every value kind and 300 workloads.
fn large_spec() -> String {
    let mut s = String::from("import \"std/pareto\"\n\n");
    for i in 0..200 {
        let _ = writeln!(s, "let gap_{i} = pareto(shape = 3, median = {}ms)", 10 + i);
        let _ = writeln!(s, "let size_{i} = {}KiB", 1 + i % 32);
        let _ = writeln!(s, "let util_{i} = {}%", 1 + i % 49);
    }
    s.push_str("\nexperiment \"large\" {\n  description = \"generated\"\n  duration = 20min\n\n");
    for i in 0..200 {
        let _ = write!(
            s,
            "  fleet \"fleet-{i}\" {{\n    devices = {}\n    gap = gap_{i}\n    payload = json(size = size_{i}, fields = [temperature, humidity])\n    qos = 1\n    warmup = 5%\n    at = {}s\n    for = 60s\n    broker {{\n      max_inflight = 100\n    }}\n  }}\n\n",
            10 + i,
            i % 500
        );
        let _ = write!(
            s,
            "  anomaly \"cpu-{i}\" {{\n    kind = cpuoccupy\n    utilization = util_{i}\n    cores = [{}]\n    at = {}s\n    for = 5s\n  }}\n\n",
            i,
            i * 2
        );
    }
    s.push_str("}\n");
    s
}

/// `n` × 100 sweep points with `repeat` repetitions each: a fleet sized by
/// one parameter, a cpuoccupy anomaly loaded by the other, and a monitor.
/// `sweep_spec(100, 1)` has 10,000 trials, `sweep_spec(1000, 10)` 1,000,000.
fn sweep_spec(n: usize, repeat: u32) -> String {
    // From 128 B, as bench/plan-scale.sh (whose runs preflight the payloads).
    let sizes: Vec<String> = (1..=n).map(|i| format!("{}B", (i + 1) * 64)).collect();
    r#"experiment "sweep" {
  duration = 60s
  repeat = REPEAT
  sweep {
    size = [SIZES]
    utilization = 1%..100% step 1%
  }
  fleet "plant" {
    devices = 10
    gap = pareto(shape = 3, median = 100ms)
    payload = json(size = size)
  }
  anomaly "cpu" {
    kind = cpuoccupy
    utilization = utilization
    at = 10s
    for = 30s
  }
  monitor {}
}
"#
    .replace("SIZES", &sizes.join(", "))
    .replace("REPEAT", &repeat.to_string())
}

/// `n` cpuoccupy anomalies on core 0, all active from 0 s to 30 s, at
/// 0.001 % each: at most 100 % of the core together, so the spec is valid.
fn overlapping_spec(n: usize) -> String {
    let mut s = String::from("experiment \"overlaps\" {\n  duration = 60s\n");
    for i in 0..n {
        let _ = writeln!(
            s,
            "  anomaly \"a{i}\" {{ kind = cpuoccupy  cores = [0]  utilization = 0.001%  at = 0s  for = 30s }}"
        );
    }
    s.push_str("}\n");
    s
}

fn bench(c: &mut Criterion) {
    let cases = [
        ("spec_5000_lines", large_spec()),
        ("sweep_10000_trials", sweep_spec(100, 1)),
        ("sweep_1000000_trials", sweep_spec(1000, 10)),
    ];
    let mut group = c.benchmark_group("check_and_plan");
    group.sample_size(20);
    compile_cases(&mut group, cases);
    group.finish();
    let mut group = c.benchmark_group("check_overlaps");
    group.sample_size(10);
    compile_cases(
        &mut group,
        [8_000, 16_000, 100_000].map(|n| (format!("cpuoccupy_{n}"), overlapping_spec(n))),
    );
    group.finish();
    plan_benches(c);
}

/// Each case compiled once (its time printed: a first measure of a slow
/// case), then measured.
fn compile_cases<S: AsRef<str>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    cases: impl IntoIterator<Item = (S, String)>,
) {
    for (name, text) in cases {
        let name = name.as_ref();
        let loader = Memory(HashMap::from([(PathBuf::from("bench.exp"), text.clone())]));
        let started = std::time::Instant::now();
        let compilation = compile("bench.exp", &loader, &Options::default());
        let first = started.elapsed();
        assert!(
            compilation.diagnostics.is_empty(),
            "{name}: {} diagnostics",
            compilation.diagnostics.len()
        );
        let plan = compilation.plan.expect("plan");
        let json = serde_json::to_string(&plan).expect("serializes");
        eprintln!(
            "{name}: {} lines, {} trials, {} bytes of plan JSON; compiled once in {:.2} s",
            text.lines().count(),
            plan.trial_count(),
            json.len(),
            first.as_secs_f64()
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                let compilation = compile("bench.exp", &loader, &Options::default());
                let plan = compilation.plan.expect("plan");
                serde_json::to_string(&plan).expect("serializes").len()
            })
        });
    }
}

fn plan_benches(c: &mut Criterion) {
    // What a shard does before its first trial: read the plan, derive a trial
    // and materialise its point.
    let loader = Memory(HashMap::from([(PathBuf::from("bench.exp"), sweep_spec(1000, 10))]));
    let plan = compile("bench.exp", &loader, &Options::default()).plan.expect("plan");
    let json = serde_json::to_vec(&plan).expect("serializes");
    let last = plan.trial_count() - 1;
    c.bench_function("plan/read_1000000_trials", |b| {
        b.iter(|| Plan::from_json(&json).expect("reads back").trial_count())
    });
    c.bench_function("plan/last_trial_of_1000000", |b| {
        b.iter(|| {
            let trial = plan.trial(last).expect("the last trial");
            let point = plan.point(trial.point).expect("its point");
            (trial.seed, point.workloads.len())
        })
    });
    c.bench_function("plan/durations_of_1000000_trials", |b| {
        b.iter(|| {
            plan.trial_indices()
                .filter_map(|t| plan.trial_duration_ns(t))
                .sum::<u64>()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
