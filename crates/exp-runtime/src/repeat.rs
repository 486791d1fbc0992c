//! Trial metrics and the `repeat until` rule that reads them.

use std::collections::BTreeMap;

use exp_plan::StopRule;

use crate::executor::WorkloadSummary;

/// `repeat until`: the confidence interval of the metric's mean, as a full
/// width, no wider than `width` × |mean|, after at least `min` repetitions.
pub(crate) fn stop_rule_met(rule: &StopRule, values: &[f64]) -> Option<String> {
    if values.len() < rule.min as usize {
        return None;
    }
    let ci = exp_stats::mean_ci(values, rule.confidence_ratio)?;
    let width = 2.0 * ci.half_width;
    (ci.mean != 0.0 && width <= rule.width_ratio * ci.mean.abs()).then(|| {
        format!(
            "{:.0}% CI of `{}` is {:.2}% of the mean (≤ {:.2}%) after {} repetitions",
            rule.confidence_ratio * 100.0,
            rule.metric,
            width / ci.mean.abs() * 100.0,
            rule.width_ratio * 100.0,
            values.len()
        )
    })
}

/// A trial's metrics: each workload's as `workload.metric`, and under the
/// bare name the mean over the workloads that report it (what `repeat until`
/// reads).
pub(crate) fn merge(summaries: &[(String, WorkloadSummary)]) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    let mut merged = BTreeMap::new();
    for (workload, summary) in summaries {
        for (name, value) in &summary.metrics {
            let entry = sums.entry(name.clone()).or_default();
            entry.0 += value;
            entry.1 += 1;
            merged.insert(format!("{workload}.{name}"), *value);
        }
    }
    merged.extend(sums.into_iter().map(|(k, (sum, n))| (k, sum / f64::from(n))));
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(min: u32) -> StopRule {
        StopRule {
            metric: "m".into(),
            confidence_ratio: 0.95,
            width_ratio: 0.05,
            min,
        }
    }

    #[test]
    fn stop_rule_waits_for_min_and_a_narrow_interval() {
        assert_eq!(stop_rule_met(&rule(3), &[10.0, 10.0]), None);
        assert!(stop_rule_met(&rule(3), &[10.0, 10.1, 9.9]).is_some());
        assert_eq!(stop_rule_met(&rule(3), &[1.0, 10.0, 20.0]), None);
    }

    #[test]
    fn metrics_are_averaged_over_workloads() {
        let a = WorkloadSummary {
            metrics: [("u".to_string(), 0.5)].into(),
            ..WorkloadSummary::default()
        };
        let b = WorkloadSummary {
            metrics: [("u".to_string(), 0.7), ("b".to_string(), 3.0)].into(),
            ..WorkloadSummary::default()
        };
        let merged = merge(&[("x".into(), a), ("y".into(), b)]);
        assert!((merged["u"] - 0.6).abs() < 1e-12);
        assert_eq!(merged["b"], 3.0);
        assert_eq!(merged["x.u"], 0.5);
        assert_eq!(merged["y.u"], 0.7);
    }
}
