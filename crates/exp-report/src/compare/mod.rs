//! Comparing runs: "did my change make it worse", and "is this the same
//! experiment on the same machine". A run against a baseline says
//!
//! - whether the plans differ, in the spec's terms (the plan diff `expc
//!   test` shows, [`exp_plan::diff_text`]);
//! - which sweep points only one run has;
//! - which facts of the environment differ (host, kernel, expc build);
//! - per metric at each point both runs have (matched by the point's
//!   labels, listed by the points' values): both means, the change, Welch's
//!   test and the equivalence verdict of two one-sided tests within a
//!   margin ([`exp_stats::two_sample`]) over the completed repetitions,
//!   leaving out trials an audit found invalid (and saying how many).
//!
//! Figures of the same id are overlaid ([`overlay`]). Two points of one
//! run are compared the same way ([`compare_points`]).

mod environment;
mod overlay;
mod points;
mod within;

use exp_plan::Plan;
use exp_results::{Manifest, RunView, Warning};
use exp_stats::two_sample;

use crate::figures::metric_kind;

pub use environment::{environment, EnvironmentDifference};
pub use exp_results::validity::LeftOut;
pub use overlay::overlay;
pub use within::{compare_points, NoSuchPoint};

/// The equivalence margin unless `--margin` says otherwise: ± 5 % of the
/// baseline's mean.
pub const DEFAULT_MARGIN: f64 = 0.05;
/// The level of both tests: 95 % confidence.
pub const ALPHA: f64 = 0.05;

/// How a comparison is made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// The equivalence margin relative to the baseline's mean (0.05: ± 5 %).
    pub margin: f64,
    /// Count trials an audit found invalid (`--include-invalid`).
    pub include_invalid: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            margin: DEFAULT_MARGIN,
            include_invalid: false,
        }
    }
}

/// One run against the baseline.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunComparison {
    /// `experiment/run-id` of each.
    pub baseline: String,
    pub compared: String,
    pub plans: Plans,
    /// Sweep point labels only one run has trials at, in value order.
    pub only_in_baseline: Vec<String>,
    pub only_in_compared: Vec<String>,
    pub environment: Vec<EnvironmentDifference>,
    /// Trials of each run left out as invalid.
    pub left_out_baseline: LeftOut,
    pub left_out_compared: LeftOut,
    /// The equivalence margin (relative) and the tests' level.
    pub margin: f64,
    pub alpha: f64,
    /// Every metric at every point both runs have, points in value order.
    pub metrics: Vec<MetricDiff>,
}

/// How the two runs' plans relate.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Plans {
    /// The same `plan.json` bytes.
    Same,
    /// Other bytes, but the same trials: only provenance differs (the
    /// compiler's version, where the spec was read from).
    SameTrials,
    /// Different trials: each change in words.
    Differ { changes: Vec<String> },
    /// A plan could not be read back, and the plans' hashes differ.
    Unknown { reason: String },
}

/// One metric at one point in the baseline and in the other run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricDiff {
    /// `devices=4000, size=2KiB`, empty without a sweep.
    pub point: String,
    pub metric: String,
    /// The workload's kind (`fleet`, …), which gives the metric its unit.
    pub kind: String,
    pub baseline: Sample,
    pub other: Sample,
    /// Welch's two-sided p-value; `None` below two repetitions on a side
    /// or without variance.
    pub p_value: Option<f64>,
    /// TOST's p-value at the margin (the larger one-sided one).
    pub equivalence_p: Option<f64>,
    /// `equivalent`, `different` or `inconclusive` ([`two_sample`]); `None`
    /// where there is no test.
    pub verdict: Option<&'static str>,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Sample {
    pub n: usize,
    pub mean: f64,
    pub variance: f64,
}

impl MetricDiff {
    /// other − baseline, relative to the baseline (NaN at a zero baseline).
    pub fn relative(&self) -> f64 {
        (self.other.mean - self.baseline.mean) / self.baseline.mean.abs()
    }
}

/// A warning when `other` is not a run of the baseline's experiment and
/// plan: its metrics are still compared by name and sweep point, which
/// across experiments means little.
pub fn mismatch(baseline: &RunView, other: &RunView) -> Option<Warning> {
    let (a, b) = (&baseline.manifest, &other.manifest);
    let short = |m: &Manifest| m.plan_sha256.chars().take(8).collect::<String>();
    let mut differs = Vec::new();
    if a.experiment != b.experiment {
        differs.push(format!("experiment {:?}, not {:?}", b.experiment, a.experiment));
    }
    if a.plan_sha256 != b.plan_sha256 {
        differs.push(format!("plan {}, not {}", short(b), short(a)));
    }
    if differs.is_empty() {
        return None;
    }
    Some(Warning {
        path: other.dir.clone(),
        message: format!(
            "compared with the baseline {}/{} although it ran {}: metrics are matched only by name and sweep point",
            a.experiment,
            a.run_id,
            differs.join(" and ")
        ),
    })
}

/// A run and its plan (`None` when `plan.json` cannot be read).
pub type Run<'a> = (&'a Manifest, Option<&'a Plan>);

/// `other` against `baseline`; the baseline's plan gives the metrics'
/// kinds (units).
pub fn compare(baseline: Run<'_>, other: Run<'_>, options: Options) -> RunComparison {
    let (a_points, left_out_baseline) = points::points(baseline.0, baseline.1, options.include_invalid);
    let (b_points, left_out_compared) = points::points(other.0, other.1, options.include_invalid);
    let mut labels: Vec<(&String, &points::PointSamples)> = a_points.iter().collect();
    labels.extend(b_points.iter().filter(|(l, _)| !a_points.contains_key(*l)));
    labels.sort_by(|a, b| a.1.key.cmp(&b.1.key).then_with(|| a.0.cmp(b.0)));

    let mut comparison = RunComparison {
        baseline: name(baseline.0),
        compared: name(other.0),
        plans: plans(baseline, other),
        only_in_baseline: Vec::new(),
        only_in_compared: Vec::new(),
        environment: environment(baseline.0, other.0),
        left_out_baseline,
        left_out_compared,
        margin: options.margin,
        alpha: ALPHA,
        metrics: Vec::new(),
    };
    for (label, _) in labels {
        let (a, b) = match (a_points.get(label), b_points.get(label)) {
            (Some(a), Some(b)) => (a, b),
            (Some(_), None) => {
                comparison.only_in_baseline.push(label.clone());
                continue;
            }
            _ => {
                comparison.only_in_compared.push(label.clone());
                continue;
            }
        };
        for (metric, values) in &a.metrics {
            let Some(theirs) = b.metrics.get(metric) else {
                continue;
            };
            let tests = two_sample::compare(values, theirs, options.margin, ALPHA);
            comparison.metrics.push(MetricDiff {
                point: label.clone(),
                metric: metric.clone(),
                kind: baseline
                    .1
                    .map_or_else(String::new, |p| metric_kind(p, metric).to_string()),
                baseline: sample(values),
                other: sample(theirs),
                p_value: tests.map(|t| t.welch.p),
                equivalence_p: tests.map(|t| t.equivalence_p),
                verdict: tests.map(|t| t.verdict.as_str()),
            });
        }
    }
    comparison
}

/// `experiment/run-id`.
pub fn name(manifest: &Manifest) -> String {
    format!("{}/{}", manifest.experiment, manifest.run_id)
}

fn plans(baseline: Run<'_>, other: Run<'_>) -> Plans {
    if baseline.0.plan_sha256 == other.0.plan_sha256 {
        return Plans::Same;
    }
    let (Some(a), Some(b)) = (baseline.1, other.1) else {
        let which = if baseline.1.is_none() {
            &baseline.0.run_id
        } else {
            &other.0.run_id
        };
        return Plans::Unknown {
            reason: format!("the plans' hashes differ, and the plan of {which} cannot be read"),
        };
    };
    let snapshot = exp_plan::snapshot::to_snapshot;
    let diff = exp_plan::diff::diff_snapshots(&snapshot(a), &snapshot(b));
    if diff.changes.is_empty() {
        Plans::SameTrials
    } else {
        Plans::Differ {
            changes: exp_plan::diff_text::lines(&diff),
        }
    }
}

/// Mean and sample variance (NaN below two values) of a non-empty sample.
fn sample(values: &[f64]) -> Sample {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let variance = if n > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        f64::NAN
    };
    Sample { n, mean, variance }
}
