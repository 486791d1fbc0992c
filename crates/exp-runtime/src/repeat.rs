//! Trial metrics and the `repeat until` rule that reads them.

use std::collections::BTreeMap;

use exp_plan::{Statistic, StopRule};
use exp_stats::intervals::{mean_interval, quantile_interval, Bounds};

use crate::executor::WorkloadSummary;

/// `repeat until`: the confidence interval of the metric's mean (Student's
/// t) or median (order statistics), as a full width, no wider than `width`
/// × |statistic|, after at least `min` repetitions.
pub(crate) fn stop_rule_met(rule: &StopRule, values: &[f64]) -> Option<String> {
    if values.len() < rule.min as usize {
        return None;
    }
    let estimate = match rule.statistic {
        Statistic::Mean => mean_interval(values, rule.confidence_ratio, Bounds::ANY)?,
        Statistic::Median => quantile_interval(values, 0.5, rule.confidence_ratio)?,
    };
    let width = estimate.relative_width()?;
    (width <= rule.width_ratio).then(|| {
        format!(
            "{:.0}% CI of `{}` ({}, {}) is {:.2}% of the {} (≤ {:.2}%) after {} repetitions",
            rule.confidence_ratio * 100.0,
            rule.metric,
            rule.statistic.as_str(),
            estimate.method.key(),
            width * 100.0,
            rule.statistic.as_str(),
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
            statistic: Statistic::Mean,
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
    fn a_median_rule_needs_its_order_statistic_interval_narrow() {
        let median = |min, width| StopRule {
            statistic: Statistic::Median,
            width_ratio: width,
            ..rule(min)
        };
        let steady = [100.0, 101.0, 99.0, 100.5, 99.5];
        // Five values give no 95% interval of the median: never met.
        assert_eq!(stop_rule_met(&median(3, 0.05), &steady), None);
        // Six do: x(1) to x(6), here 98..102, 4% of the median 100.
        let six = [100.0, 101.0, 99.0, 102.0, 98.0, 100.0];
        let reason = stop_rule_met(&median(3, 0.05), &six).unwrap();
        assert!(
            reason.contains("(median, order-statistics) is 4.00% of the median"),
            "{reason}"
        );
        assert_eq!(stop_rule_met(&median(3, 0.03), &six), None);
        // One outlier moves a median's interval less than a mean's.
        let outlier = [
            100.0, 101.0, 99.0, 102.0, 98.0, 100.0, 100.0, 101.0, 99.0, 100.0, 100.0, 250.0,
        ];
        assert!(stop_rule_met(&median(3, 0.05), &outlier).is_some());
        assert_eq!(
            stop_rule_met(
                &StopRule {
                    width_ratio: 0.05,
                    ..rule(3)
                },
                &outlier
            ),
            None
        );
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
