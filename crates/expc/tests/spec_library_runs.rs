//! Every anomaly spec and every IoT spec of the library run end to
//! end, shortened with `--time-scale` (0.01: a 17 min trial takes 10 s) and,
//! for specs with hundreds of trials, `--trials` (one repetition of every
//! sweep point): all selected trials complete and every table reads back.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::Command;

use exp_report::summarize;
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};
use exp_results::open_run;

fn repo_root() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../..")
}

fn run_spec(relative: &str) {
    run_spec_with(relative, "0.01", None, "anomaly_timeline");
}

/// Runs `relative` with `--time-scale scale` (and `--trials` if given) and
/// checks that every selected trial completed and wrote rows to `table`.
fn run_spec_with(relative: &str, scale: &str, trials: Option<&str>, table: &str) {
    run_spec_keep(relative, scale, trials, table);
}

/// A run directory, removed (with its output root) when dropped.
struct RunDir {
    path: PathBuf,
    out: PathBuf,
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.out);
    }
}

/// As [`run_spec_with`], returning the run directory for more checks.
fn run_spec_keep(relative: &str, scale: &str, trials: Option<&str>, table: &str) -> RunDir {
    let out = std::env::temp_dir().join(format!(
        "expc-spec-run-{}-{}",
        relative.replace('/', "_"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_expc"))
        .current_dir(repo_root())
        .args(["run", relative, "--time-scale", scale])
        .args(trials.map(|t| ["--trials", t]).into_iter().flatten())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{relative}:\n{text}");
    let experiment = std::fs::read_dir(&out).unwrap().flatten().next().unwrap().path();
    let dir = std::fs::read_dir(experiment).unwrap().flatten().next().unwrap().path();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete, "{relative}");
    // The manifest lists the selected trials only, and every one ran.
    let ran = manifest.trials.len();
    assert!(
        manifest.trials.iter().all(|t| t.status == TrialStatus::Complete),
        "{relative}"
    );
    let summary = summarize(&open_run(&dir).unwrap());
    assert!(summary.warnings.is_empty(), "{relative}: {:?}", summary.warnings);
    let with_rows = summary
        .tables
        .iter()
        .filter(|t| t.table == table)
        .flat_map(|t| &t.trials)
        .filter(|t| t.rows > 0)
        .count();
    assert_eq!(with_rows, ran, "{relative}: {table} rows for every trial that ran");
    RunDir { path: dir, out }
}

#[test]
fn diagnosis_dataset_runs() {
    run_spec("specs/anomaly/diagnosis-dataset.exp");
}

#[test]
fn intensity_sweep_runs() {
    run_spec("specs/anomaly/intensity-sweep.exp");
}

/// 7 sizes × 30 repetitions: one repetition of each size (point-major trial
/// numbers), 2 min trials at 0.01 → 1.2 s each, ~12 s in all.
#[test]
fn message_size_runs() {
    run_spec_with(
        "specs/iot/message-size.exp",
        "0.01",
        Some("0,30,60,90,120,150,180"),
        "mqtt_messages",
    );
}

/// 12 gap distributions × 10 repetitions: one repetition of each, 5 min
/// trials at 0.005 → 1.5 s each, ~20 s in all. Gaps are not scaled, so the
/// 1 s-median points send only a message or two per device.
#[test]
fn gap_sweep_runs() {
    run_spec_with(
        "specs/iot/gap-sweep.exp",
        "0.005",
        Some("0,10,20,30,40,50,60,70,80,90,100,110"),
        "mqtt_messages",
    );
}

/// 4 loads × 5 repetitions: one repetition of each, 10 min trials at 0.005
/// → 3 s each. The connect ramp (100/s) is not scaled: 200 devices take 2 s
/// to connect, and sending starts once they have.
#[test]
fn hub_throttling_runs() {
    run_spec_with(
        "specs/iot/hub-throttling.exp",
        "0.005",
        Some("0,5,10,15"),
        "mqtt_messages",
    );
}

/// 4 fleet sizes × 10 repetitions: the smallest fleet only (1,000 devices ×
/// 5 msg/s), 3 min at 0.04 → 7.2 s, of which the unscaled connect ramp
/// (400/s) takes 2.5 s. The larger fleets (up to 20,000 msg/s) are what
/// `bench/fleet-scale.sh` measures in release builds; next to a debug build
/// and the other tests on a 2-core CI machine they would only measure the
/// machine being full.
#[test]
fn fleet_scaling_runs() {
    run_spec_with("specs/iot/fleet-scaling.exp", "0.04", Some("0"), "mqtt_messages");
}

/// Extract → obfuscate → generate → reveal → compare on the committed
/// corpus: the generated documents must read like the corpus.
#[test]
fn xml_synthesis_runs() {
    let dir = run_spec_keep("specs/xml/synthesis.exp", "1", Some("0"), "xml_generation");
    let trial = dir.path.join("xml/synthesis/trial-0");
    for kept in ["set/set.json", "private/map.json", "comparison.json"] {
        assert!(trial.join(kept).is_file(), "{kept} missing");
    }
    let comparison: serde_json::Value =
        serde_json::from_slice(&std::fs::read(trial.join("comparison.json")).unwrap()).unwrap();
    assert_eq!(comparison["counts"]["synthetic"]["documents"], 1000);
    let jsd = comparison["divergence"]["skeleton"].as_f64().unwrap();
    assert!(jsd < 0.05, "structure JSD {jsd}");
    assert_eq!(comparison["duplicates"]["rate"].as_f64(), Some(0.0));
}

/// Every XML spec is covered by a test above.
#[test]
fn every_xml_spec_is_run() {
    assert_eq!(specs_in("specs/xml"), ["synthesis.exp"]);
}

/// Every IoT spec is covered by a test above.
#[test]
fn every_iot_spec_is_run() {
    assert_eq!(
        specs_in("specs/iot"),
        [
            "fleet-scaling.exp",
            "gap-sweep.exp",
            "hub-throttling.exp",
            "message-size.exp"
        ]
    );
}

/// Every anomaly spec is covered by a test above.
#[test]
fn every_anomaly_spec_is_run() {
    assert_eq!(
        specs_in("specs/anomaly"),
        ["diagnosis-dataset.exp", "intensity-sweep.exp"]
    );
}

/// The `.exp` files of a spec-library folder, sorted.
fn specs_in(dir: &str) -> Vec<String> {
    let mut specs: Vec<String> = std::fs::read_dir(repo_root().join(dir))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".exp"))
        .collect();
    specs.sort();
    specs
}

/// 4 structure models × 5 repetitions: one repetition of each model
/// (point-major trial numbers), 21 min trials at 0.005 → 6.3 s each. Each
/// RTT block's 6 min window becomes 1.8 s and replays the ~36 connections
/// that start in it (20/s, the spec's own rate: schedules are not scaled).
/// `expc report` must show every structure × RTT mode with duration
/// percentiles and peak active connections, and response-time percentiles
/// for the sequential models (blk_conc has no request/response exchanges).
#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn structure_rtt_runs() {
    let dir = run_spec_keep(
        "specs/traffic/structure-rtt.exp",
        "0.005",
        Some("0,5,10,15"),
        "traffic_connections",
    );
    let output = Command::new(env!("CARGO_BIN_EXE_expc"))
        .arg("report")
        .arg(&dir.path)
        .arg("--json")
        .output()
        .unwrap();
    assert!(output.status.success());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let pooled = report["traffic"]["pooled"].as_array().unwrap();
    let mut cells: Vec<(String, String)> = pooled
        .iter()
        .map(|g| {
            (
                g["structure"].as_str().unwrap().to_string(),
                g["rtt_mode"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    cells.sort();
    let mut expected = Vec::new();
    for structure in ["ab", "atbt", "blk_conc", "blk_seq"] {
        for rtt in ["mean", "paths(9)", "per_connection"] {
            expected.push((structure.to_string(), rtt.to_string()));
        }
    }
    assert_eq!(cells, expected);
    for g in pooled {
        let cell = format!("{} {}", g["structure"], g["rtt_mode"]);
        assert!(g["connections"].as_u64().unwrap() > 0, "{cell}");
        assert_eq!(g["failed"].as_u64(), Some(0), "{cell}");
        assert!(g["peak_active"].as_u64().unwrap() >= 1, "{cell}");
        let p50 = g["duration_ns"]["p50"].as_f64().unwrap();
        let p99 = g["duration_ns"]["p99"].as_f64().unwrap();
        assert!(p50 > 0.0 && p50 <= p99, "{cell}");
        if g["structure"] != "blk_conc" {
            let r50 = g["response_time_ns"]["p50"].as_f64().unwrap();
            assert!(
                r50 > 0.0 && r50 <= g["response_time_ns"]["p99"].as_f64().unwrap(),
                "{cell}"
            );
        }
    }
    let text = Command::new(env!("CARGO_BIN_EXE_expc"))
        .arg("report")
        .arg(&dir.path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("== Traffic") && text.contains("resp p99") && text.contains("peak"),
        "{text}"
    );
}

/// 3 repetitions of 1 h: one, at 0.002 → 7.2 s with 103 transfers of 10 ms
/// (the 5 s transfers) on loopback.
#[test]
fn bandwidth_variability_runs() {
    run_spec_with(
        "specs/traffic/bandwidth-variability.exp",
        "0.002",
        Some("0"),
        "traffic_throughput",
    );
}

/// As above with the 10 s transfers (20 ms each when scaled).
#[test]
fn bandwidth_variability_10s_runs() {
    run_spec_with(
        "specs/traffic/bandwidth-variability-10s.exp",
        "0.002",
        Some("0"),
        "traffic_throughput",
    );
}

/// Every traffic spec is covered by a test above.
#[test]
fn every_traffic_spec_is_run() {
    assert_eq!(
        specs_in("specs/traffic"),
        [
            "bandwidth-variability-10s.exp",
            "bandwidth-variability.exp",
            "structure-rtt.exp"
        ]
    );
}
