//! Two sweep points of one run compared as two runs are (`expc report RUN
//! --points A B`): the same per-metric Welch and equivalence verdicts, the
//! same handling of invalid trials, with point A as the baseline. Each
//! point's trials become a run of their own with its sweep labels set
//! aside, so [`compare`] matches them as one point.

use exp_results::Manifest;

use super::{compare, name, Options, Run, RunComparison};
use crate::figures::point_label;

/// A point to compare that has no trial in the run; `points` are the
/// run's, each with its sweep label (`1 (id=p1)`).
#[derive(Debug, thiserror::Error)]
#[error("{run} has no trial at point {point}; its points: {points}")]
pub struct NoSuchPoint {
    pub run: String,
    pub point: u32,
    pub points: String,
}

/// Point `b` of the run against its point `a`; an error names the points
/// the run has when either has no trial in it.
pub fn compare_points(run: Run<'_>, a: u32, b: u32, options: Options) -> Result<RunComparison, NoSuchPoint> {
    let (manifest, plan) = run;
    let (baseline, baseline_label) = only_point(manifest, a)?;
    let (other, other_label) = only_point(manifest, b)?;
    let mut comparison = compare((&baseline, plan), (&other, plan), options);
    comparison.baseline = format!("{} point {a} ({baseline_label})", name(manifest));
    comparison.compared = format!("{} point {b} ({other_label})", name(manifest));
    Ok(comparison)
}

/// The run with only point `point`'s trials, unlabelled, and its label.
fn only_point(manifest: &Manifest, point: u32) -> Result<(Manifest, String), NoSuchPoint> {
    let trials: Vec<_> = manifest.trials.iter().filter(|t| t.point == point).cloned().collect();
    let Some(first) = trials.first() else {
        let mut points: Vec<String> = Vec::new();
        for t in &manifest.trials {
            let shown = format!("{} ({})", t.point, point_label(t));
            if !points.contains(&shown) {
                points.push(shown);
            }
        }
        return Err(NoSuchPoint {
            run: name(manifest),
            point,
            points: points.join(", "),
        });
    };
    let label = point_label(first);
    let mut only = manifest.clone();
    only.trials = trials
        .into_iter()
        .map(|mut t| {
            t.sweep.clear();
            t
        })
        .collect();
    Ok((only, if label.is_empty() { "no sweep".into() } else { label }))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use exp_results::manifest::{TrialRecord, TrialStatus};

    use super::*;

    fn trial(trial: u32, point: u32, value: f64) -> TrialRecord {
        let mut record: TrialRecord = serde_json::from_value(serde_json::json!({
            "trial": trial, "point": point, "repetition": trial / 2, "seed": 0,
            "sweep": {"id": format!("p{point}")}, "status": "complete",
            "started_at_unix_ns": null, "ended_at_unix_ns": null, "error": null, "metrics": {}
        }))
        .unwrap();
        record.metrics = BTreeMap::from([("f.ack_latency".to_string(), value)]);
        record.status = TrialStatus::Complete;
        record
    }

    #[test]
    fn compares_two_points_of_one_run_as_two_runs() {
        let mut manifest: Manifest = serde_json::from_value(serde_json::json!({
            "manifest_version": 1, "expc_version": "expc test", "experiment": "aa", "run_id": "r1",
            "status": "complete", "error": null, "started_at": "", "ended_at": null, "started_unix_ns": 0,
            "ended_unix_ns": null, "spec": null, "plan_sha256": "", "seed": 1,
            "host": exp_host::HostFacts::default(), "options": exp_results::manifest::OptionsRecord::default(),
            "trials": [], "points": [], "tables": {}
        }))
        .unwrap();
        manifest.trials = (0..8)
            .map(|i| trial(i, i % 2, if i % 2 == 0 { 10.0 } else { 20.0 } + f64::from(i)))
            .collect();
        let c = compare_points((&manifest, None), 0, 1, Options::default()).unwrap();
        assert_eq!(c.metrics.len(), 1);
        let m = &c.metrics[0];
        assert_eq!((m.baseline.n, m.other.n), (4, 4));
        assert_eq!((m.baseline.mean, m.other.mean), (13.0, 24.0));
        assert_eq!(m.verdict, Some("different"));
        assert!(c.baseline.ends_with("point 0 (id=p0)"), "{}", c.baseline);
        assert!(c.environment.is_empty() && c.only_in_baseline.is_empty());
        let missing = compare_points((&manifest, None), 0, 7, Options::default())
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("no trial at point 7") && missing.contains("1 (id=p1)"),
            "{missing}"
        );
    }
}
