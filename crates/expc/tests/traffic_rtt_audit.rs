//! V0202 from outside: an RTT assignment the delay stage cannot meet (a
//! 50 µs RTT, below what the namespaces' own path and the stage take) is
//! flagged, and the finding is the one the tables say: the median
//! connection's TCP-measured RTT (`tcp_rtt_ns`) more than 10 % off its
//! `assigned_rtt_ns`, as `trial_validity` and the manifest record it.
//! Needs the RTT emulation stage (root, namespaces); ignored without it.

#![allow(clippy::unwrap_used)]

use crate::common::{expc, run_dir, text, trial_frames, Scratch};
use exp_results::manifest::Manifest;

const SPEC: &str = r#"
experiment "rtt-missed" {
  seed     = 202
  duration = 6s
  traffic "tiny-rtt" {
    vectors = synthetic(
      connections = 40,
      arrival     = exponential(mean = 50ms),
      epochs      = geometric(p = 0.5),
      request     = constant(300B),
      response    = constant(4KB),
    )
    structure = ab
    rtt       = constant(50us)
    network   = namespaces
    for       = 5s
  }
}
"#;

#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn an_rtt_stage_that_misses_its_assignment_by_more_than_10_percent_is_flagged() {
    let scratch = Scratch::new("rtt-audit");
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let out = scratch.0.join("runs");
    let output = expc().arg("run").arg(&spec).arg("--out").arg(&out).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let dir = run_dir(&out).unwrap();

    // The tables: each measured connection's relative RTT error; their
    // nearest-rank median, as the audit takes it.
    let frames = trial_frames(&dir, "traffic_connections", 0);
    let mut errors = Vec::new();
    for frame in &frames {
        let tcp = frame.column("tcp_rtt_ns").unwrap().i64().unwrap();
        let assigned = frame.column("assigned_rtt_ns").unwrap().i64().unwrap();
        for (tcp, assigned) in tcp.iter().zip(assigned.iter()) {
            if let (Some(tcp), Some(assigned)) = (tcp, assigned.filter(|a| *a > 0)) {
                errors.push((tcp as f64 - assigned as f64).abs() / assigned as f64);
            }
        }
    }
    assert!(
        errors.len() >= 20,
        "{} connections measured: {}",
        errors.len(),
        text(&output)
    );
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len().div_ceil(2) - 1];
    assert!(median > 0.10, "median RTT error {median}: the stage met 50 µs");

    let findings = trial_frames(&dir, "trial_validity", 0);
    let mut found = None;
    for frame in &findings {
        let codes = frame.column("code").unwrap().str().unwrap();
        let workloads = frame.column("workload").unwrap().str().unwrap();
        let measured = frame.column("measured").unwrap().f64().unwrap();
        for row in 0..frame.height() {
            if codes.get(row) == Some("V0202") {
                assert_eq!(workloads.get(row), Some("tiny-rtt"));
                found = measured.get(row);
            }
        }
    }
    let measured = found.unwrap_or_else(|| panic!("no V0202 in trial_validity: {}", text(&output)));
    assert!((measured - median).abs() < 1e-9, "audit {measured}, tables {median}");
    let manifest = Manifest::read(&dir).unwrap();
    let validity = manifest.trials[0].validity.as_ref().unwrap();
    assert!(validity.findings.iter().any(|f| f.code == "V0202"), "{validity:?}");
    let verdicts = trial_frames(&dir, "trials", 0)[0]
        .column("validity_codes")
        .unwrap()
        .str()
        .unwrap()
        .get(0)
        .map(str::to_string);
    assert!(verdicts.unwrap_or_default().split(',').any(|c| c == "V0202"));
}
