//! `check_and_plan`: the whole compiler (parse, resolve, check, expand, lower)
//! on a generated 5,000-line spec and on a 10,000-trial sweep, in memory.
//!
//! Run: `cargo bench -p exp-check --bench check_and_plan`

use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};
use exp_check::{compile, Loader, Options};

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

/// 100 × 100 sweep points, one repetition each: 10,000 trials.
fn sweep_spec() -> String {
    let sizes: Vec<String> = (1..=100).map(|i| format!("{}B", i * 64)).collect();
    r#"experiment "sweep" {
  duration = 60s
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
}

fn bench(c: &mut Criterion) {
    let cases = [("spec_5000_lines", large_spec()), ("sweep_10000_trials", sweep_spec())];
    for (name, text) in cases {
        let loader = Memory(HashMap::from([(PathBuf::from("bench.exp"), text.clone())]));
        let compilation = compile("bench.exp", &loader, &Options::default());
        assert!(
            compilation.diagnostics.is_empty(),
            "{name}: {} diagnostics",
            compilation.diagnostics.len()
        );
        let plan = compilation.plan.expect("plan");
        eprintln!("{name}: {} lines, {} trials", text.lines().count(), plan.trials.len());
        c.bench_function(&format!("check_and_plan/{name}"), |b| {
            b.iter(|| {
                let compilation = compile("bench.exp", &loader, &Options::default());
                let plan = compilation.plan.expect("plan");
                serde_json::to_string(&plan).expect("serializes").len()
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
