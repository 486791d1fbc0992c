//! `repeat until` end to end on the percentiles a study of tails wants: a
//! fleet's `ack_latency_p99` with the median rule (embedded broker) and a
//! traffic replay's `duration_p99` with the mean rule (loopback, no root).
//! Each run must stop every point exactly where the rule, recomputed here
//! from the manifest's metrics in the order the trials ran, says it does;
//! the fleet's metric is checked against its messages table as well.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::PathBuf;
use std::process::Output;

use crate::common::{expc, run_dir, trial_frames, u64_values};
use exp_plan::{Plan, Statistic, StopRule};
use exp_results::manifest::{Manifest, TrialStatus};
use exp_results::validity;
use exp_stats::intervals::{mean_interval, quantile_interval, Bounds};

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-until-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(output: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs `spec` to completion and returns its run directory, plan and manifest.
fn run(scratch: &Scratch, spec: &str) -> (PathBuf, Plan, Manifest) {
    let path = scratch.0.join("spec.exp");
    std::fs::write(&path, spec).unwrap();
    let out = scratch.0.join("runs");
    let output = expc().arg("run").arg(&path).arg("--out").arg(&out).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let dir = run_dir(&out).unwrap();
    let plan = Plan::from_json(&std::fs::read(dir.join("plan.json")).unwrap()).unwrap();
    let manifest = Manifest::read(&dir).unwrap();
    (dir, plan, manifest)
}

/// Is `rule` met by these values (the interval's full width within
/// `width` × |statistic|, after `min`)? Computed here with exp-stats'
/// interval functions, not the runner's code.
fn met(rule: &StopRule, values: &[f64]) -> bool {
    if values.len() < rule.min as usize {
        return false;
    }
    let estimate = match rule.statistic {
        Statistic::Mean => mean_interval(values, rule.confidence_ratio, Bounds::ANY),
        Statistic::Median => quantile_interval(values, 0.5, rule.confidence_ratio),
    };
    let Some(estimate) = estimate else { return false };
    let Some((low, high)) = estimate.interval() else {
        return false;
    };
    estimate.value != 0.0 && high - low <= rule.width_ratio * estimate.value.abs()
}

/// Asserts that each point ran exactly the repetitions the rule asks for:
/// up to the first that meets it, or all `max`; the rest are skipped.
fn assert_stops_where_the_rule_says(plan: &Plan, manifest: &Manifest) -> Vec<u32> {
    let rule = plan.repeat.stop.as_ref().unwrap();
    let mut counts = Vec::new();
    for point in 0..plan.point_count() as u32 {
        let mut ran: Vec<_> = manifest
            .trials
            .iter()
            .filter(|t| t.point == point && t.status == TrialStatus::Complete)
            .map(|t| {
                (
                    t.started_at_unix_ns.unwrap(),
                    t.metrics[&rule.metric],
                    validity::counts(t, false),
                )
            })
            .collect();
        ran.sort_by_key(|(started, _, _)| *started);
        // The rule reads the trials an audit did not find invalid (a busy
        // host makes some so); every complete trial counts as run.
        let mut values = Vec::new();
        let met_at = ran.iter().enumerate().find_map(|(at, &(_, value, counted))| {
            if counted {
                values.push(value);
            }
            (counted && met(rule, &values)).then_some(at + 1)
        });
        let expected = met_at.unwrap_or(rule_max(plan));
        assert_eq!(ran.len(), expected, "point {point}: {ran:?}");
        let record = manifest.points.iter().find(|p| p.point == point).unwrap();
        assert_eq!(record.repetitions_run as usize, expected);
        let reason = record.stop_reason.as_deref().unwrap();
        if met_at.is_some() {
            let said = format!("CI of `{}` ({}", rule.metric, rule.statistic.as_str());
            assert!(reason.contains(&said), "{reason}");
            let skipped = manifest
                .trials
                .iter()
                .filter(|t| t.point == point && t.status == TrialStatus::Skipped)
                .count();
            assert_eq!(
                skipped,
                rule_max(plan) - expected,
                "the point's later repetitions are skipped"
            );
        } else {
            assert!(reason.contains("maximum"), "{reason}");
        }
        counts.push(expected as u32);
    }
    counts
}

fn rule_max(plan: &Plan) -> usize {
    plan.repeat.max as usize
}

#[test]
fn repeat_until_on_a_fleets_ack_latency_p99_stops_each_point_where_the_median_rule_says() {
    let scratch = Scratch::new("fleet");
    let (dir, plan, manifest) = run(
        &scratch,
        r#"
experiment "until-p99" {
  duration = 600ms
  repeat   = until(ci = 95%, width = 150%, of = "ack_latency_p99", max = 9, min = 6, statistic = median)
  sweep { n = [4, 8] }
  fleet "plant" {
    devices = n
    gap     = constant(20ms)
    qos     = 1
  }
}
"#,
    );
    assert_eq!(plan.repeat.order.as_str(), "randomized");
    let counts = assert_stops_where_the_rule_says(&plan, &manifest);
    assert!(counts.iter().all(|&c| c >= 6), "{counts:?}");
    // The metric the rule read is the p99 of the trial's acknowledgements.
    let trial = manifest
        .trials
        .iter()
        .find(|t| t.status == TrialStatus::Complete)
        .unwrap();
    let mut acks: Vec<f64> = u64_values(&trial_frames(&dir, "mqtt_messages", trial.trial), "ack_latency_ns")
        .into_iter()
        .map(|ns| ns as f64)
        .collect();
    acks.sort_by(f64::total_cmp);
    assert!(acks.len() > 50, "{}", acks.len());
    assert_eq!(
        Some(trial.metrics["ack_latency_p99"]),
        exp_stats::percentile(&acks, 0.99)
    );
}

#[test]
fn repeat_until_on_a_traffic_duration_p99_stops_where_the_mean_rule_says() {
    let scratch = Scratch::new("traffic");
    let (_, plan, manifest) = run(
        &scratch,
        r#"
experiment "until-duration" {
  seed     = 11
  duration = 1s
  repeat   = until(ci = 90%, width = 40%, of = "duration_p99", max = 6)
  traffic "web" {
    vectors = synthetic(
      connections = 10,
      arrival = constant(50ms),
      epochs = 1,
      request = 300B,
      response = 20KB,
      server_time = constant(1ms),
      think_time = constant(5ms),
    )
    interval = 700ms
  }
}
"#,
    );
    let counts = assert_stops_where_the_rule_says(&plan, &manifest);
    assert!(counts[0] >= 3, "{counts:?}");
    assert!(manifest
        .trials
        .iter()
        .all(|t| t.status != TrialStatus::Complete || t.metrics.contains_key("duration_p99")));
}
