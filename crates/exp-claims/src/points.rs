//! Which sweep points a claim is decided at. A claim holds at every point
//! unless a statistic names some with `at`: then, in the frame of each plan
//! point, the statistic is read at that point with its `at` parameters set
//! to their values. Frames that read the same points are one.

use exp_plan::claims::Stat;
use exp_plan::{Plan, Value};

/// The point `stat` is read at in the frame of plan point `frame`; `None`
/// if its `at` names a parameter or value the plan does not have.
pub(crate) fn at(plan: &Plan, stat: &Stat, frame: u32) -> Option<u32> {
    let mut indices = plan.value_indices(frame)?;
    for (name, value) in &stat.points {
        let p = plan.parameters.iter().position(|p| &p.name == name)?;
        let values = &plan.parameters[p].values;
        indices[p] = (0..values.len()).find(|&i| values.get(i).is_some_and(|v| v.value == value.value))?;
    }
    plan.point_at(&indices)
}

/// Every distinct tuple of points the statistics are read at, in plan order.
pub(crate) fn frames(plan: &Plan, stats: &[&Stat]) -> Vec<Vec<u32>> {
    let mut frames: Vec<Vec<u32>> = Vec::new();
    let count = u32::try_from(plan.point_count()).unwrap_or(u32::MAX);
    for frame in 0..count {
        let points: Option<Vec<u32>> = stats.iter().map(|s| at(plan, s, frame)).collect();
        if let Some(points) = points.filter(|p| !frames.contains(p)) {
            frames.push(points);
        }
    }
    frames
}

/// `devices=10`, empty for a run without sweep.
pub(crate) fn label(plan: &Plan, point: u32) -> String {
    plan.sweep_label(point)
}

/// The number a trend orders points by: the parameter's value at `point`
/// (its position among the values when it is not a number).
pub(crate) fn parameter_number(plan: &Plan, parameter: &str, point: u32) -> Option<f64> {
    let p = plan.parameters.iter().position(|p| p.name == parameter)?;
    let index = *plan.value_indices(point)?.get(p)?;
    let value = plan.parameters[p].values.get(index)?;
    Some(match value.value {
        Value::Int(v) => v as f64,
        Value::Float(v) | Value::PerS(v) | Value::Ratio(v) => v,
        Value::DurationNs(v) | Value::Bytes(v) | Value::BitPerS(v) => v as f64,
        _ => index as f64,
    })
}
