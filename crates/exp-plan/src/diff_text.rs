//! A plan diff ([`crate::diff`]) in words: one line per change, in the
//! spec's terms and units, as `expc test` shows a changed snapshot and
//! `expc report A B` two runs' plans.

use std::fmt::Write;

use serde_json::Value as Json;

use crate::diff::{Change, PlanDiff, Points};
use crate::{display_quantity, RangeUnit};

/// Point labels listed before "and N more".
const LABELS_SHOWN: usize = 3;

/// Each change as a line (no indent, no newline), then how many sweep
/// points were left out of the comparison, if any.
pub fn lines(diff: &PlanDiff) -> Vec<String> {
    let mut out: Vec<String> = diff.changes.iter().map(describe).collect();
    if diff.points_not_compared > 0 {
        out.push(format!(
            "(workloads compared at the first {} sweep points; {} more not compared)",
            crate::diff::MAX_COMPARED_POINTS,
            diff.points_not_compared
        ));
    }
    out
}

/// One change in words: `fleet "sensors", every point: devices: 40 → 80`.
pub fn describe(change: &Change) -> String {
    match change {
        Change::Setting { path, old, new } => format!("{path}: {}", old_to_new(path, old, new)),
        Change::Parameter { name, old, new } => {
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
            format!("sweep `{name}`: {} → {}", show(old), show(new))
        }
        Change::Points { added, removed } => {
            let mut parts = Vec::new();
            if !removed.is_empty() {
                parts.push(format!("{} gone ({})", count(removed.len()), labels(removed)));
            }
            if !added.is_empty() {
                parts.push(format!("{} new ({})", count(added.len()), labels(added)));
            }
            format!("sweep points: {}", parts.join("; "))
        }
        Change::Workload { name, kind, added } => {
            format!("{}: {}", block(kind, name), if *added { "added" } else { "removed" })
        }
        Change::Property {
            workload,
            kind,
            property,
            old,
            new,
            points,
        } => {
            let at = match points {
                Points::Every => "every point".to_string(),
                Points::Some(list) => format!("at {}", labels(list)),
            };
            format!(
                "{}, {at}: {property}: {}",
                block(kind, workload),
                old_to_new(property, old, new)
            )
        }
    }
}

fn block(kind: &str, name: &str) -> String {
    if kind == "monitor" {
        "monitor".into()
    } else {
        format!("{kind} \"{name}\"")
    }
}

fn count(n: usize) -> String {
    if n == 1 {
        "1 point".into()
    } else {
        format!("{n} points")
    }
}

fn labels(list: &[String]) -> String {
    point_labels(list, LABELS_SHOWN)
}

/// Sweep point labels, at most `shown` of them: `devices=10; devices=20
/// and 4 more` (an empty label is the run without a sweep).
pub fn point_labels(list: &[String], shown: usize) -> String {
    let first: Vec<&str> = list
        .iter()
        .take(shown)
        .map(|l| if l.is_empty() { "(no sweep)" } else { l })
        .collect();
    let mut text = first.join("; ");
    if list.len() > shown {
        let _ = write!(text, " and {} more", list.len() - shown);
    }
    text
}

fn old_to_new(path: &str, old: &Option<Json>, new: &Option<Json>) -> String {
    format!("{} → {}", value(path, old), value(path, new))
}

/// A plan value in the unit its key names: `duration_ns: 30000000000` is
/// `30s`, `size_bytes: 1024` is `1KiB`, a `_ratio` a percentage; a
/// quantity among alternatives is tagged with its unit (`{"ns": …}`).
fn value(path: &str, value: &Option<Json>) -> String {
    let Some(value) = value else {
        return "(none)".into();
    };
    let key = path.rsplit('.').next().unwrap_or(path);
    let tagged = value.as_object().filter(|o| o.len() == 1).and_then(|o| o.iter().next());
    let (unit, number) = match tagged {
        Some((tag, number)) if unit_named(tag).is_some() => (unit_named(tag), number.as_f64()),
        _ => (unit_named(key), value.as_f64()),
    };
    match (unit, number) {
        (Some(unit), Some(number)) => display_quantity(unit, number),
        _ => dist(value).unwrap_or_else(|| value.to_string()),
    }
}

/// The unit a plan key ends with (`duration_ns`), or is (a tag: `ns`).
fn unit_named(key: &str) -> Option<RangeUnit> {
    [
        ("ns", RangeUnit::Duration),
        ("bytes", RangeUnit::Size),
        ("bit_per_s", RangeUnit::Bandwidth),
        ("per_s", RangeUnit::Rate),
        ("ratio", RangeUnit::Percent),
    ]
    .into_iter()
    .find(|(unit, _)| key == *unit || key.strip_suffix(unit).is_some_and(|name| name.ends_with('_')))
    .map(|(_, unit)| unit)
}

/// A distribution's plan node as the spec writes one:
/// `{"unit": "ns", "family": "pareto", "shape": 2.0, "scale": 5e6}` is
/// `pareto(shape = 2, scale = 5ms)`.
fn dist(value: &Json) -> Option<String> {
    let node = value.as_object()?;
    let family = node.get("family")?.as_str()?;
    let unit = unit_named(node.get("unit")?.as_str()?);
    // Shapes and probabilities are plain numbers whatever the unit.
    let plain = ["shape", "probability", "p", "weights", "k"];
    let parameters: Vec<String> = node
        .iter()
        .filter(|(key, _)| *key != "family" && *key != "unit")
        .map(|(key, v)| {
            let shown = match (unit, v) {
                (Some(unit), Json::Number(x)) if !plain.contains(&key.as_str()) => {
                    display_quantity(unit, x.as_f64().unwrap_or(f64::NAN))
                }
                (_, Json::Number(x)) => display_quantity(RangeUnit::Float, x.as_f64().unwrap_or(f64::NAN)),
                (_, Json::Array(values)) => format!("[{} values]", values.len()),
                (_, Json::String(text)) if key == "sha256" => format!("{}…", &text[..text.len().min(12)]),
                _ => v.to_string(),
            };
            format!("{key} = {shown}")
        })
        .collect();
    Some(format!("{family}({})", parameters.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_shown_in_the_unit_their_key_names() {
        assert_eq!(value("experiment.duration_ns", &Some(json!(30_000_000_000u64))), "30s");
        assert_eq!(value("payload.json.size_bytes", &Some(json!(1024))), "1KiB");
        assert_eq!(value("warmup_ratio", &Some(json!(0.1))), "10%");
        assert_eq!(value("warmup", &Some(json!({"ns": 30_000_000_000u64}))), "30s");
        assert_eq!(value("warmup.ratio", &Some(json!(0.25))), "25%");
        assert_eq!(value("devices", &Some(json!(4))), "4");
        assert_eq!(value("qos", &Some(json!(1))), "1");
        assert_eq!(value("broker.url", &None), "(none)");
        let gap = json!({"unit": "ns", "family": "pareto", "shape": 2.0, "scale": 5e6});
        assert_eq!(value("gap", &Some(gap)), "pareto(shape = 2, scale = 5ms)");
    }

    #[test]
    fn a_property_changed_at_some_points_names_them() {
        let change = Change::Property {
            workload: "sensors".into(),
            kind: "fleet".into(),
            property: "devices".into(),
            old: Some(json!(40)),
            new: Some(json!(80)),
            points: Points::Some((0..5).map(|i| format!("size={i}B")).collect()),
        };
        assert_eq!(
            describe(&change),
            "fleet \"sensors\", at size=0B; size=1B; size=2B and 2 more: devices: 40 → 80"
        );
    }
}
