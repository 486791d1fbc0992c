//! The README's polars snippet reproduces `expc report --json`: it is read
//! from README.md, run with Python's polars on a real fleet run of twelve
//! trials (two sweep points, so that trial 10 must sort after trial 2), and
//! its p99 ack latencies must equal the report's to the last bit.
//!
//! Needs `python3` with `polars` (the `python_polars` cfg, probed by the
//! build script); without it the test is reported as ignored, and
//! `EXPC_REQUIRE_CAPABILITIES=1` fails the build instead.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SPEC: &str = r#"
experiment "readme-polars" {
  duration = 1s
  repeat   = 6
  fleet "sensors" {
    devices = 5
    gap     = pareto(shape = 3, median = 20ms)
    qos     = 1
    warmup  = 10%
  }
  sweep {
    devices = [5, 10]
  }
}
"#;

/// The placeholder of the snippet's run directory.
const RUN_LINE: &str = "run = \"runs/quickstart/<run-id>\"";

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn checked(output: Output, what: &str) -> Output {
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn expc(args: &[&std::ffi::OsStr]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_expc")).args(args).output().unwrap();
    checked(output, &format!("expc {args:?}"))
}

/// The README's one Python block, with the run directory put in.
fn snippet(run: &Path) -> String {
    let readme = std::fs::read_to_string(
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("../../README.md"),
    )
    .unwrap();
    let start = readme.find("```python\n").expect("README.md has a ```python block") + "```python\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let code = &readme[start..end];
    assert!(code.contains(RUN_LINE), "the snippet's run line changed:\n{code}");
    code.replace(RUN_LINE, &format!("run = {:?}", run.to_str().unwrap()))
}

#[test]
#[cfg_attr(not(python_polars), ignore = "needs python3 with polars (`pip install polars`)")]
fn the_readme_polars_snippet_reproduces_the_report() {
    let dir = std::env::temp_dir().join(format!("expc-readme-polars-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scratch = Scratch(dir);
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let out = scratch.0.join("runs");
    expc(&["run".as_ref(), spec.as_os_str(), "--out".as_ref(), out.as_os_str()]);
    let run = std::fs::read_dir(out.join("readme-polars"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .unwrap();

    let program = snippet(&run) + "\nprint(p99.write_json())\n";
    let python = Command::new("python3").arg("-c").arg(&program).output().unwrap();
    let python = checked(python, &format!("the README snippet:\n{program}"));
    let rows: serde_json::Value = serde_json::from_slice(&python.stdout).unwrap();
    let rows = rows.as_array().unwrap();

    let report = expc(&["report".as_ref(), run.as_os_str(), "--json".as_ref()]);
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let mut expected = Vec::new();
    for trial in report["mqtt"]["trials"].as_array().unwrap() {
        for fleet in trial["fleets"].as_array().unwrap() {
            let p99 = fleet["ack_latency_ns"]["p99"].as_f64().unwrap();
            expected.push((
                trial["trial"].as_u64().unwrap(),
                fleet["fleet"].clone(),
                p99,
                trial["point"].clone(),
            ));
        }
    }
    assert_eq!(expected.len(), 12, "{report}");
    expected.sort_by_key(|(trial, ..)| *trial);
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for (row, (trial, fleet, p99, point)) in rows.iter().zip(&expected) {
        // No `status_right` or other columns of `trials` joined by accident.
        let mut columns: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
        columns.sort_unstable();
        assert_eq!(
            columns,
            ["ack_latency_ns", "fleet", "point", "repetition", "trial"],
            "{row}"
        );
        // In trial order (0, 1, 2, …, 10, 11), not as strings.
        assert_eq!(row["trial"].as_u64(), Some(*trial), "{row}");
        assert_eq!(&row["fleet"], fleet, "{row}");
        assert_eq!(&row["point"], point, "{row}");
        assert_eq!(row["ack_latency_ns"].as_f64(), Some(*p99), "trial {trial}: {row}");
    }
}
