//! Sweep points of a run for comparison: each point's metric values over
//! the repetitions that count, and the order points are shown in — by
//! their values (`n=50` before `n=100`, `1KiB` after `512B`), not as
//! strings.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use exp_plan::{Plan, Value};
use exp_results::validity::LeftOut;
use exp_results::{Manifest, TrialRecord, TrialStatus};

use crate::figures::{point_label, shown_metric};

/// One sweep point of a run: where it sorts, and each metric's values.
#[derive(Debug, Clone, Default)]
pub(super) struct PointSamples {
    pub key: PointKey,
    /// `workload.metric` → its value in each completed, counted repetition.
    pub metrics: BTreeMap<String, Vec<f64>>,
}

/// Every point of the run that has a trial, by label (empty without a
/// sweep), with the values of its completed trials that count; and the
/// trials left out as invalid.
pub(super) fn points(
    manifest: &Manifest,
    plan: Option<&Plan>,
    include_invalid: bool,
) -> (BTreeMap<String, PointSamples>, LeftOut) {
    let mut out: BTreeMap<String, PointSamples> = BTreeMap::new();
    let mut left_out = LeftOut::default();
    for t in &manifest.trials {
        let point = out.entry(point_label(t)).or_insert_with(|| PointSamples {
            key: point_key(t, plan),
            metrics: BTreeMap::new(),
        });
        if t.status != TrialStatus::Complete || !left_out.note(t, include_invalid) {
            continue;
        }
        for (metric, &v) in t.metrics.iter().filter(|(m, v)| v.is_finite() && shown_metric(plan, m)) {
            point.metrics.entry(metric.clone()).or_default().push(v);
        }
    }
    (out, left_out)
}

/// Where a point sorts: per parameter (by name, as labels list them) its
/// value as a number where it is one, else its label.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct PointKey(Vec<(Option<f64>, String)>);

impl PointKey {
    pub fn cmp(&self, other: &PointKey) -> Ordering {
        for ((an, al), (bn, bl)) in self.0.iter().zip(&other.0) {
            let order = match (an, bn) {
                (Some(a), Some(b)) => a.total_cmp(b),
                // Numbers before words, when a parameter has both.
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            };
            let order = order.then_with(|| al.cmp(bl));
            if order != Ordering::Equal {
                return order;
            }
        }
        self.0.len().cmp(&other.0.len())
    }
}

/// The point's values from the plan; without one, a label that reads as a
/// number (`100`) sorts as that number.
fn point_key(trial: &TrialRecord, plan: Option<&Plan>) -> PointKey {
    let values = plan.and_then(|p| p.values_at(trial.point)).unwrap_or_default();
    let parts = trial
        .sweep
        .iter()
        .map(|(name, label)| {
            let typed = values.iter().find(|(p, _)| &p.name == name).map(|(_, v)| &v.value);
            let number = typed.map_or_else(|| label.parse::<f64>().ok(), number);
            (number, label.clone())
        })
        .collect();
    PointKey(parts)
}

/// A parameter value as a number to order by (each parameter has one unit).
fn number(value: &Value) -> Option<f64> {
    Some(match *value {
        Value::Int(i) => i as f64,
        Value::Float(f) | Value::PerS(f) | Value::Ratio(f) => f,
        Value::DurationNs(n) | Value::Bytes(n) | Value::BitPerS(n) => n as f64,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(parts: &[(Option<f64>, &str)]) -> PointKey {
        PointKey(parts.iter().map(|(n, l)| (*n, (*l).to_string())).collect())
    }

    #[test]
    fn points_sort_by_value_then_label() {
        let mut keys = [
            key(&[(Some(100.0), "100")]),
            key(&[(Some(50.0), "50")]),
            key(&[(None, "tls")]),
            key(&[(Some(1024.0), "1KiB")]),
            key(&[(Some(512.0), "512B")]),
        ];
        keys.sort_by(PointKey::cmp);
        let labels: Vec<&str> = keys.iter().map(|k| k.0[0].1.as_str()).collect();
        assert_eq!(labels, ["50", "100", "512B", "1KiB", "tls"]);
    }
}
