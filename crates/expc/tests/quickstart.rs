//! The README's quickstart runs and ends with what it promises: each
//! fleet's latency percentiles split by phase, `none` and `cpu`, and its
//! HTML report shades the hog's window over the latency series. Run here
//! from the debug build with `--time-scale 0.3` (a 9 s trial) instead of
//! the README's release build and full 30 s.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use crate::common::Scratch;

const COMMAND: &str = "cargo run --release -p expc -- run examples/quickstart.exp";
const REPORT_COMMAND: &str = r#"cargo run --release -p expc -- report "$(ls -d runs/quickstart/*/ | tail -1)" --html"#;

#[test]
fn the_readme_quickstart_runs_and_shows_latency_by_phase() {
    let root = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains(COMMAND), "the README's quickstart command changed");
    assert!(readme.contains(REPORT_COMMAND), "the README's report command changed");

    let scratch = Scratch::new("quickstart");
    let output = Command::new(env!("CARGO_BIN_EXE_expc"))
        .current_dir(&root)
        .args(["run", "examples/quickstart.exp", "--time-scale", "0.3", "--out"])
        .arg(&scratch.0)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let log = format!("{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{log}");
    assert!(stdout.contains("== MQTT fleets"), "{log}");
    assert!(stdout.contains("by phase"), "{log}");
    let phase_rows: Vec<&str> = stdout
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("none ") || l.starts_with("cpu "))
        .collect();
    assert_eq!(phase_rows.len(), 2, "{log}");
    eprintln!("{}", phase_rows.join("\n"));

    // The README's report line: the page's latency series carries the
    // CPU hog's window.
    let run = std::fs::read_dir(scratch.0.join("quickstart"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let report = Command::new(env!("CARGO_BIN_EXE_expc"))
        .args(["report", run.to_str().unwrap(), "--html"])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    let latency = html
        .split("<figure id=\"")
        .find(|f| f.starts_with("fleet-latency-over-time"))
        .expect("a latency series per second");
    assert!(
        latency.contains("cpu (cpuoccupy)"),
        "the hog's window over the latency series"
    );
}
