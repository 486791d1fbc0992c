//! The part of `plan.json` the report reads: each point's fleet gaps and
//! which workloads are anomalies. Read leniently (unknown fields ignored,
//! other workload kinds skipped), so runs made by other versions of expc
//! still get their targets: plans of version 1 list every point with its
//! workloads; later ones list the parameters' values and each workload's
//! variants, and the point's workloads are found as `exp_plan` finds them.

use std::path::Path;

use exp_plan::{value_indices, variant_index, DistValue};
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::{GapTarget, Warning};

#[derive(Deserialize)]
pub(crate) struct PlanGaps {
    /// Version 1: every point with its workloads.
    #[serde(default)]
    points: Vec<PointGaps>,
    /// Later versions: the parameters (only their names and number of
    /// values matter here) and each workload's variants.
    #[serde(default)]
    parameters: Vec<ParameterShape>,
    #[serde(default)]
    workloads: Vec<VariantGaps>,
}

#[derive(Deserialize, Clone)]
struct PointGaps {
    index: u32,
    workloads: Vec<WorkloadGap>,
}

#[derive(Deserialize)]
struct ParameterShape {
    name: String,
    #[serde(default)]
    values: Vec<IgnoredAny>,
}

#[derive(Deserialize)]
struct VariantGaps {
    parameters: Vec<String>,
    variants: Vec<WorkloadGap>,
    /// Version 3: properties that vary on their own (`exp_plan::Field`).
    #[serde(default)]
    fields: Vec<FieldValues>,
}

#[derive(Deserialize)]
struct FieldValues {
    pointers: Vec<String>,
    parameters: Vec<String>,
    values: Vec<serde_json::Value>,
}

#[derive(Deserialize, Clone)]
struct WorkloadGap {
    name: String,
    /// `{"fleet": {"gap": …, …}}` for a fleet.
    config: serde_json::Value,
}

/// `plan.json`'s gaps, or `None` with a warning: the report then has no gap targets.
pub(crate) fn read_plan(dir: &Path, warnings: &mut Vec<Warning>) -> Option<PlanGaps> {
    let path = dir.join("plan.json");
    let parsed = std::fs::read(&path)
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice::<PlanGaps>(&bytes).map_err(|e| e.to_string()));
    match parsed {
        Ok(plan) => Some(plan),
        Err(e) => {
            warnings.push(Warning {
                path,
                message: format!("cannot read the plan, so fleets have no gap targets: {e}"),
            });
            None
        }
    }
}

impl PlanGaps {
    /// The workloads as they ran at `point`, their fields set.
    fn workloads_at(&self, point: u32) -> Vec<WorkloadGap> {
        if !self.points.is_empty() {
            let point = self.points.iter().find(|p| p.index == point);
            return point.map(|p| p.workloads.clone()).unwrap_or_default();
        }
        let counts: Vec<usize> = self.parameters.iter().map(|p| p.values.len()).collect();
        let Some(indices) = value_indices(&counts, point) else {
            return Vec::new();
        };
        let shape = |name: &str| {
            let position = self.parameters.iter().position(|p| p.name == name)?;
            Some((position, counts[position]))
        };
        let mut workloads = Vec::new();
        for w in &self.workloads {
            let Some(mut workload) =
                variant_index(&w.parameters, shape, &indices).and_then(|i| w.variants.get(i).cloned())
            else {
                continue;
            };
            for field in &w.fields {
                let value = variant_index(&field.parameters, shape, &indices).and_then(|i| field.values.get(i));
                for pointer in &field.pointers {
                    let slot = pointer
                        .strip_prefix("/config")
                        .and_then(|pointer| workload.config.pointer_mut(pointer));
                    if let (Some(value), Some(slot)) = (value, slot) {
                        *slot = value.clone();
                    }
                }
            }
            workloads.push(workload);
        }
        workloads
    }

    /// The anomalies' names at `point`.
    pub(super) fn anomalies(&self, point: u32) -> Vec<String> {
        self.workloads_at(point)
            .into_iter()
            .filter(|w| w.config.get("anomaly").is_some())
            .map(|w| w.name)
            .collect()
    }

    /// The gap distribution of fleet `fleet` at `point`.
    pub(crate) fn gap_target(&self, point: u32, fleet: &str) -> Option<GapTarget> {
        let workloads = self.workloads_at(point);
        let workload = workloads.iter().find(|w| w.name == fleet)?;
        let gap = workload.config.get("fleet")?.get("gap")?;
        GapTarget::new(&DistValue::deserialize(gap).ok()?)
    }
}
