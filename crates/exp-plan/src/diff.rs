//! What changed between two plans, in the spec's terms: experiment
//! settings, sweep values, sweep points, and workload properties with the
//! points where they changed — not lines of JSON. `expc test` shows it when
//! a spec's plan no longer equals its snapshot.
//!
//! Workloads are compared as they run at each sweep point present in both
//! plans (points are matched by their labels, `devices=10, size=256B`), so a
//! change is reported the same whether the compiler stored it in a variant
//! or a field. A property that changed the same way at every common point
//! is one change, not one per point.

use std::collections::{HashMap, HashSet};

use serde_json::Value as Json;

use crate::snapshot::from_snapshot;
use crate::{display_quantity, Plan, Values};

/// Most sweep points of each plan compared; a larger plan's diff says how
/// many points it left out ([`PlanDiff::points_not_compared`]).
pub const MAX_COMPARED_POINTS: u32 = 100_000;

#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A value outside the workloads and the sweep, by its JSON path
    /// (`experiment.duration_ns`, `repeat.max`); for plans that cannot be
    /// read as plans (another plan version), every changed value.
    Setting {
        path: String,
        old: Option<Json>,
        new: Option<Json>,
    },
    /// A sweep parameter's values, as the spec writes them; `None` where
    /// the parameter is missing.
    Parameter {
        name: String,
        old: Option<String>,
        new: Option<String>,
    },
    /// Sweep points present in one plan only, by label.
    Points { added: Vec<String>, removed: Vec<String> },
    /// A workload (or the monitor) present in one plan only.
    Workload { name: String, kind: String, added: bool },
    /// A property of a workload (or of the monitor) at some sweep points.
    Property {
        workload: String,
        kind: String,
        /// Its path in the workload's plan node, the kind's own key left out
        /// (`gap.value`, `window.start_ns`, `payload.json.size_bytes`).
        property: String,
        old: Option<Json>,
        new: Option<Json>,
        points: Points,
    },
}

/// Where a property changed.
#[derive(Debug, Clone, PartialEq)]
pub enum Points {
    /// At every point both plans have.
    Every,
    /// At these points only, by label, in point order.
    Some(Vec<String>),
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanDiff {
    pub changes: Vec<Change>,
    /// Points past [`MAX_COMPARED_POINTS`] that were not compared.
    pub points_not_compared: u64,
}

/// The changes from snapshot `old` to snapshot `new`
/// ([`crate::snapshot::to_snapshot`]). Snapshots that do not read as plans
/// of this version are compared value by value.
pub fn diff_snapshots(old: &Json, new: &Json) -> PlanDiff {
    match (from_snapshot(old), from_snapshot(new)) {
        (Ok(a), Ok(b)) => diff_plans(&a, &b, old, new),
        _ => {
            let mut leaves = Vec::new();
            diff_leaves("", Some(old), Some(new), &mut leaves);
            PlanDiff {
                changes: leaves.into_iter().map(setting).collect(),
                points_not_compared: 0,
            }
        }
    }
}

fn diff_plans(a: &Plan, b: &Plan, a_json: &Json, b_json: &Json) -> PlanDiff {
    let mut diff = PlanDiff::default();
    // Settings: everything but the sweep and the blocks.
    let mut leaves = Vec::new();
    for key in keys(a_json, b_json) {
        if !["parameters", "workloads", "monitor"].contains(&key.as_str()) {
            diff_leaves(&key, a_json.get(&key), b_json.get(&key), &mut leaves);
        }
    }
    diff.changes.extend(leaves.into_iter().map(setting));
    diff_parameters(a, b, &mut diff.changes);

    let (a_labels, a_left) = point_labels(a);
    let (b_labels, b_left) = point_labels(b);
    diff.points_not_compared = a_left.max(b_left);
    let b_index: HashMap<&str, u32> = b_labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i as u32))
        .collect();
    let a_set: HashSet<&str> = a_labels.iter().map(String::as_str).collect();
    let common: Vec<(u32, u32)> = a_labels
        .iter()
        .enumerate()
        .filter_map(|(i, label)| Some((i as u32, *b_index.get(label.as_str())?)))
        .collect();
    let removed: Vec<String> = a_labels
        .iter()
        .filter(|l| !b_index.contains_key(l.as_str()))
        .cloned()
        .collect();
    let added: Vec<String> = b_labels
        .iter()
        .filter(|l| !a_set.contains(l.as_str()))
        .cloned()
        .collect();
    if !added.is_empty() || !removed.is_empty() {
        diff.changes.push(Change::Points { added, removed });
    }
    if a.workloads != b.workloads || a.monitor != b.monitor || a.parameters != b.parameters {
        diff_blocks(a, b, &common, &a_labels, &mut diff.changes);
    }
    diff
}

fn setting((path, old, new): Leaf) -> Change {
    Change::Setting { path, old, new }
}

/// The union of two objects' keys, `a`'s order first.
fn keys(a: &Json, b: &Json) -> Vec<String> {
    let mut keys: Vec<String> = a.as_object().into_iter().flat_map(|m| m.keys().cloned()).collect();
    for key in b.as_object().into_iter().flat_map(|m| m.keys()) {
        if !keys.contains(key) {
            keys.push(key.clone());
        }
    }
    keys
}

fn diff_parameters(a: &Plan, b: &Plan, changes: &mut Vec<Change>) {
    let find = |plan: &Plan, name: &str| {
        plan.parameters
            .iter()
            .find(|p| p.name == name)
            .map(|p| describe(&p.values))
    };
    let mut names: Vec<&str> = a.parameters.iter().map(|p| p.name.as_str()).collect();
    names.extend(
        b.parameters
            .iter()
            .map(|p| p.name.as_str())
            .filter(|n| find(a, n).is_none()),
    );
    for name in names {
        let (old, new) = (find(a, name), find(b, name));
        if old != new {
            changes.push(Change::Parameter {
                name: name.to_string(),
                old,
                new,
            });
        }
    }
}

/// A parameter's values as the spec writes them: `10, 20, 40` or
/// `256B..1KiB step 256B (4 values)`.
fn describe(values: &Values) -> String {
    match values {
        Values::Listed(values) => values.iter().map(|v| v.label.as_str()).collect::<Vec<_>>().join(", "),
        Values::Range(range) => {
            let last = range.count.saturating_sub(1) as usize;
            format!(
                "{}..{} step {} ({} values)",
                range.at(0).label,
                range.at(last).label,
                display_quantity(range.unit, range.step),
                range.count
            )
        }
    }
}

/// The labels of the first [`MAX_COMPARED_POINTS`] points, and how many
/// points are left.
fn point_labels(plan: &Plan) -> (Vec<String>, u64) {
    let count = plan.point_count();
    let compared = count.min(u64::from(MAX_COMPARED_POINTS)) as u32;
    (
        (0..compared).map(|p| plan.sweep_label(p)).collect(),
        count - u64::from(compared),
    )
}

type Leaf = (String, Option<Json>, Option<Json>);

/// A block as it runs at a point: its kind and plan node, provenance left out.
struct Block {
    kind: &'static str,
    node: Json,
}

fn blocks_at(plan: &Plan, point: u32) -> Vec<(String, Block)> {
    let mut blocks: Vec<(String, Block)> = plan
        .workloads_at(point)
        .unwrap_or_default()
        .into_iter()
        .map(|w| {
            let mut node = serde_json::to_value(&*w).unwrap_or(Json::Null);
            if let Some(map) = node.as_object_mut() {
                map.remove("origin");
                map.remove("name");
            }
            let kind = w.config.kind();
            (w.name.clone(), Block { kind, node })
        })
        .collect();
    if let Some(monitor) = plan.monitor_at(point) {
        let node = serde_json::to_value(&*monitor).unwrap_or(Json::Null);
        blocks.push(("monitor".into(), Block { kind: "monitor", node }));
    }
    blocks
}

/// Workloads and the monitor, point by point over the common points.
fn diff_blocks(a: &Plan, b: &Plan, common: &[(u32, u32)], a_labels: &[String], changes: &mut Vec<Change>) {
    // The blocks present in one plan only are found at the first point.
    let first = |plan: &Plan| blocks_at(plan, 0);
    let (a_first, b_first) = (first(a), first(b));
    let kind_of = |blocks: &[(String, Block)], name: &str| blocks.iter().find(|(n, _)| n == name).map(|(_, b)| b.kind);
    for (ours, theirs, added) in [(&a_first, &b_first, false), (&b_first, &a_first, true)] {
        for (name, block) in ours {
            if kind_of(theirs, name) != Some(block.kind) {
                changes.push(Change::Workload {
                    name: name.clone(),
                    kind: block.kind.to_string(),
                    added,
                });
            }
        }
    }

    // (block, property, old, new) → the labels of the points it holds at.
    let mut groups: Vec<(String, String, Leaf, Vec<String>)> = Vec::new();
    let mut index: HashMap<(String, String, String, String), usize> = HashMap::new();
    for &(pa, pb) in common {
        let b_blocks = blocks_at(b, pb);
        for (name, old) in blocks_at(a, pa) {
            let Some((_, new)) = b_blocks.iter().find(|(n, blk)| *n == name && blk.kind == old.kind) else {
                continue;
            };
            let mut leaves = Vec::new();
            diff_leaves("", Some(&old.node), Some(&new.node), &mut leaves);
            for (path, before, after) in leaves {
                let property = strip_kind(&path, old.kind);
                let key = (name.clone(), property.clone(), text(&before), text(&after));
                let at = *index.entry(key).or_insert_with(|| {
                    groups.push((
                        name.clone(),
                        old.kind.to_string(),
                        (property, before, after),
                        Vec::new(),
                    ));
                    groups.len() - 1
                });
                groups[at].3.push(a_labels[pa as usize].clone());
            }
        }
    }
    for (workload, kind, (property, old, new), labels) in groups {
        let points = if labels.len() == common.len() {
            Points::Every
        } else {
            Points::Some(labels)
        };
        changes.push(Change::Property {
            workload,
            kind,
            property,
            old,
            new,
            points,
        });
    }
}

/// A distribution's plan node ([`crate::DistValue`]): its parameters mean
/// something only together.
fn is_dist(node: &serde_json::Map<String, Json>) -> bool {
    node.contains_key("family") && node.contains_key("unit")
}

/// `config.fleet.gap.value` → `gap.value`.
fn strip_kind(path: &str, kind: &str) -> String {
    let prefix = format!("config.{kind}.");
    path.strip_prefix(&prefix).unwrap_or(path).to_string()
}

fn text(value: &Option<Json>) -> String {
    value.as_ref().map_or_else(String::new, Json::to_string)
}

/// Every value that differs between `old` and `new`, by path: objects key
/// by key, arrays of equal length element by element, anything else —
/// distributions included — whole.
fn diff_leaves(path: &str, old: Option<&Json>, new: Option<&Json>, out: &mut Vec<Leaf>) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match (old, new) {
        (Some(Json::Object(a)), Some(Json::Object(b))) if !is_dist(a) && !is_dist(b) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                diff_leaves(&join(key), a.get(key), b.get(key), out);
            }
        }
        (Some(Json::Array(a)), Some(Json::Array(b))) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff_leaves(&format!("{path}[{i}]"), Some(x), Some(y), out);
            }
        }
        (a, b) if a != b => out.push((path.to_string(), a.cloned(), b.cloned())),
        _ => {}
    }
}
