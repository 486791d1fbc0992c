//! A plan as a spec library pins it (`expc test`): what runs, without where
//! it came from.
//!
//! A snapshot is the plan's JSON without its provenance — the `compiler`
//! that made it, the `source` files and their hashes, and each workload's
//! `origin` (file, line, column) — so that a comment, a moved block or a
//! library checked out at another path leaves it unchanged, while every
//! setting that changes what a trial does changes it.

use serde_json::{json, Value as Json};

use crate::{Plan, PlanError};

/// The keys of the plan that record provenance, not what runs.
const PROVENANCE: [&str; 2] = ["compiler", "source"];

/// The snapshot's key for the content hashes of the data files the plan
/// reads (`expc test` adds it: this crate reads no file); not a plan key.
pub const DATA_FILES: &str = "data_files";

/// The snapshot of `plan`: its JSON without provenance.
pub fn to_snapshot(plan: &Plan) -> Json {
    let mut json = serde_json::to_value(plan).unwrap_or(Json::Null);
    if let Json::Object(map) = &mut json {
        for key in PROVENANCE {
            map.remove(key);
        }
    }
    for variant in workload_variants(&mut json) {
        variant.remove("origin");
    }
    json
}

/// The snapshot as text: pretty JSON with a final newline, the bytes
/// `expc test` stores and compares.
pub fn snapshot_text(plan: &Plan) -> String {
    serde_json::to_string_pretty(&to_snapshot(plan)).unwrap_or_default() + "\n"
}

/// Reads a snapshot back as a plan (empty provenance), checked as
/// [`Plan::from_json`] checks a plan: for comparing it with another.
pub fn from_snapshot(snapshot: &Json) -> Result<Plan, PlanError> {
    let mut json = snapshot.clone();
    if let Json::Object(map) = &mut json {
        map.remove(DATA_FILES);
        map.insert("compiler".into(), json!(""));
        map.insert("source".into(), json!({"root": "", "sha256": "", "files": []}));
    }
    for variant in workload_variants(&mut json) {
        variant.insert("origin".into(), json!({"file": "", "line": 0, "column": 0}));
    }
    let bytes = serde_json::to_vec(&json)?;
    Plan::from_json(&bytes)
}

/// Every workload variant object of a plan's JSON.
fn workload_variants(json: &mut Json) -> impl Iterator<Item = &mut serde_json::Map<String, Json>> {
    json.get_mut("workloads")
        .and_then(Json::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(|workload| workload.get_mut("variants").and_then(Json::as_array_mut))
        .flatten()
        .filter_map(Json::as_object_mut)
}
