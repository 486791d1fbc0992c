//! Comparing runs: "did my change make it worse". Each trial metric at
//! each sweep point (matched by the point's labels) of a baseline run and
//! of another: both means, the difference, and Welch's t-test over the
//! completed repetitions. Figures of the same id are overlaid.

use std::collections::BTreeMap;

use exp_plan::Plan;
use exp_results::{Manifest, RunView, TrialStatus, Warning};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::figures::chart::Series;
use crate::figures::{metric_kind, point_label, shown_metric, Figure};

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
/// across experiments means little (it was done without a word).
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

/// The differences of every metric at every point both runs have; the
/// baseline's `plan` gives the metrics' kinds (units).
pub fn compare(baseline: &Manifest, other: &Manifest, plan: Option<&Plan>) -> Vec<MetricDiff> {
    let a = samples(baseline, plan);
    let b = samples(other, plan);
    a.iter()
        .filter_map(|(key, a)| {
            let b = b.get(key)?;
            let (a, b) = (summary(a)?, summary(b)?);
            Some(MetricDiff {
                point: key.0.clone(),
                metric: key.1.clone(),
                kind: plan.map_or_else(String::new, |p| metric_kind(p, &key.1).to_string()),
                baseline: a,
                other: b,
                p_value: welch(a, b),
            })
        })
        .collect()
}

/// Completed trials' metric values by (point label, metric).
fn samples(m: &Manifest, plan: Option<&Plan>) -> BTreeMap<(String, String), Vec<f64>> {
    let mut out: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for t in m.trials.iter().filter(|t| t.status == TrialStatus::Complete) {
        let point = point_label(t);
        for (metric, &v) in t.metrics.iter().filter(|(m, v)| v.is_finite() && shown_metric(plan, m)) {
            out.entry((point.clone(), metric.clone())).or_default().push(v);
        }
    }
    out
}

fn summary(values: &[f64]) -> Option<Sample> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let variance = if n > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        f64::NAN
    };
    Some(Sample { n, mean, variance })
}

/// Welch's t-test of equal means, two-sided.
fn welch(a: Sample, b: Sample) -> Option<f64> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.variance / a.n as f64, b.variance / b.n as f64);
    let se2 = va + vb;
    if se2.is_nan() || se2 <= 0.0 {
        return None;
    }
    let t = (b.mean - a.mean) / se2.sqrt();
    let df = se2 * se2 / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(2.0 * (1.0 - dist.cdf(t.abs())))
}

/// The figures every run has (same id), each run's series drawn over the
/// first's, named after their run; `runs` pairs each run's name with its
/// figures, baseline first.
pub fn overlay(runs: Vec<(String, Vec<Figure>)>) -> Vec<Figure> {
    let mut runs = runs.into_iter();
    let Some((first, baseline)) = runs.next() else {
        return Vec::new();
    };
    let rename = |series: Vec<Series>, run: &str| -> Vec<Series> {
        let renamed = |s: Series| Series {
            name: format!("{run}: {}", s.name),
            ..s
        };
        series.into_iter().map(renamed).collect()
    };
    let mut merged: Vec<Figure> = baseline
        .into_iter()
        .map(|mut f| {
            f.chart.series = rename(std::mem::take(&mut f.chart.series), &first);
            f
        })
        .collect();
    let mut names = vec![first];
    for (name, figures) in runs {
        let mut theirs: BTreeMap<String, Figure> = figures.into_iter().map(|f| (f.id.clone(), f)).collect();
        merged.retain_mut(|f| match theirs.remove(&f.id) {
            Some(other) => {
                f.chart.series.extend(rename(other.chart.series, &name));
                true
            }
            None => false,
        });
        names.push(name);
    }
    for f in &mut merged {
        f.caption = format!("{} Runs overlaid: {}.", f.caption, names.join(", "));
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_matches_a_reference() {
        // t = 1.8973665961, ν = 5.8823529412; the two tails of Student's t
        // integrated numerically (midpoint rule, 200,000 steps): 0.1075311949.
        let s = |v: &[f64]| summary(v).unwrap();
        let p = welch(s(&[1.0, 2.0, 3.0, 4.0, 5.0]), s(&[2.0, 4.0, 6.0, 8.0, 10.0])).unwrap();
        assert!((p - 0.107_531_195).abs() < 1e-8, "{p}");
        assert_eq!(welch(s(&[1.0]), s(&[2.0, 3.0])), None);
        assert_eq!(welch(s(&[1.0, 1.0]), s(&[1.0, 1.0])), None);
    }
}
