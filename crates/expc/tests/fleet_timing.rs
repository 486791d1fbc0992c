//! Timing accuracy of a whole fleet, end to end through `expc run` and
//! `expc report`: 100 devices on the embedded broker, constant 100 ms gaps,
//! then Pareto gaps (shape 3, median 100 ms). The achieved gaps are the
//! differences of each device's send times as recorded in `mqtt_messages`.
//!
//! Asserted loosely (debug build, shared CI machine), reported exactly: run
//! with `--nocapture` to see the validation table.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

use crate::common::Scratch;
use serde_json::Value;

const DEVICES: u64 = 100;
const MESSAGES: u64 = 31;

/// Send lateness p99 above which the trial is marked `contended`: loose,
/// for a debug build on a shared machine.
const LATENESS_BOUND_MS: u64 = 20;

fn expc(args: &[&std::ffi::OsStr]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_expc")).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "expc {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs `gap` for 100 devices × 31 messages and returns the fleet's report.
fn run_gaps(name: &str, gap: &str) -> Value {
    // One fleet at a time: two debug-build fleets of 100 devices sharing two
    // cores pushed send lateness to a p99 of 31 ms, which squeezed gaps to
    // 0.1 ms and made the KS test reject the (correct) schedule.
    let _serial = crate::common::one_at_a_time();
    let scratch = Scratch::new(&format!("timing-{name}"));
    let spec = scratch.0.join("spec.exp");
    std::fs::write(
        &spec,
        format!(
            r#"
experiment "timing" {{
  fleet "sensors" {{
    devices  = {DEVICES}
    gap      = {gap}
    messages = {MESSAGES}
    payload  = json(size = 128B, fields = [temperature])
    qos      = 1
    lateness_bound = {LATENESS_BOUND_MS}ms
  }}
}}
"#
        ),
    )
    .unwrap();
    let out = scratch.0.join("runs");
    expc(&["run".as_ref(), spec.as_os_str(), "--out".as_ref(), out.as_os_str()]);
    let dir = std::fs::read_dir(out.join("timing"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let json = expc(&["report".as_ref(), dir.as_os_str(), "--json".as_ref()]);
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    let trial = &report["mqtt"]["trials"][0];
    let mut fleet = trial["fleets"][0].clone();
    fleet["contended"] = trial["contended"].clone();
    let (gaps, lateness) = (&fleet["gaps"]["achieved"], &fleet["lateness_ns"]);
    eprintln!(
        "{name:>8}: {} gaps, median {:.3} ms, sd {:.3} ms, min {:.3} ms, max {:.3} ms; \
         lateness p50 {:.1} µs, p99 {:.1} µs; KS {}",
        gaps["n"],
        gaps["median"].as_f64().unwrap() / 1e6,
        gaps["sd"].as_f64().unwrap() / 1e6,
        gaps["min"].as_f64().unwrap() / 1e6,
        gaps["max"].as_f64().unwrap() / 1e6,
        lateness["p50"].as_f64().unwrap() / 1e3,
        lateness["p99"].as_f64().unwrap() / 1e3,
        fleet["gaps"]["ks"],
    );
    fleet
}

#[test]
fn constant_gaps_are_kept() {
    let fleet = run_gaps("constant", "constant(100ms)");
    let gaps = &fleet["gaps"]["achieved"];
    assert_eq!(gaps["n"].as_u64().unwrap(), DEVICES * (MESSAGES - 1));
    assert!(fleet["gaps"]["ks"].is_null(), "no KS test for a constant");
    // Deadlines are absolute: lateness never accumulates, so the median gap
    // is the target to well within a millisecond even on a busy machine
    // (a CI run stalled 100 ms and still had a median of 100.000 ms).
    let median = gaps["median"].as_f64().unwrap();
    assert!((median - 100e6).abs() < 1e6, "median {median} ns");
    if judged(&fleet) {
        assert!(gaps["sd"].as_f64().unwrap() < 10e6, "{gaps}");
    }
}

#[test]
fn pareto_gaps_follow_their_distribution() {
    let fleet = run_gaps("pareto", "pareto(shape = 3, median = 100ms)");
    let ks = &fleet["gaps"]["ks"];
    assert_eq!(ks["n"].as_u64().unwrap(), DEVICES * (MESSAGES - 1));
    // An uncontended trial's gaps follow the configured Pareto, asserted
    // loosely: host noise alone has given 0.042
    // (p < 0.01), a wrong family or scale gives more than 0.2. The exact
    // p-value is printed above; the schedule itself passes KS at α = 0.01
    // in exp-mqtt's `schedule::pareto_gaps_pass_ks`.
    if !judged(&fleet) {
        return;
    }
    let statistic = ks["statistic"].as_f64().unwrap();
    assert!(statistic < 0.1, "achieved gaps far from the configured Pareto: {ks}");
    let median = fleet["gaps"]["achieved"]["median"].as_f64().unwrap();
    assert!((median - 100e6).abs() < 10e6, "median {median} ns");
}

/// Whether the trial's gaps can be judged: a trial the runner marks
/// `contended` (send lateness p99 above the bound) says more about the
/// machine than the schedule — a CI run stalled 100 ms gave a constant
/// schedule a gap sd of 25 ms, another gave a correct Pareto KS 0.137 —
/// and the product promises exactly that flag. The flag itself is checked
/// against the reported lateness: it follows the runner's own p99, the
/// report's comes from the table and may differ slightly.
fn judged(fleet: &Value) -> bool {
    let p99 = fleet["lateness_ns"]["p99"].as_f64().unwrap();
    let contended = fleet["contended"].as_bool().unwrap();
    let bound = (LATENESS_BOUND_MS * 1_000_000) as f64;
    assert!(
        if contended {
            p99 > bound / 2.0
        } else {
            p99 < bound * 2.0
        },
        "contended {contended} with lateness p99 {p99} ns"
    );
    if contended {
        eprintln!("trial marked contended: its gaps are not judged");
    }
    !contended
}
