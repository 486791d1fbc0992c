//! What differs between the machines (and builds) two runs ran on: every
//! fact of the manifests' `host` record, the expc build and the brokers'
//! versions, compared one by one, so a fact added to the record is
//! compared without a word here.

use serde_json::Value as Json;

use exp_plan::{display_quantity, RangeUnit};
use exp_results::Manifest;

/// Facts that change from one run to the next on the same machine and so
/// say nothing about the environment: memory free at the start.
const VOLATILE: [&str; 1] = ["host.memory_available_bytes"];

/// One fact that differs, as each run's manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EnvironmentDifference {
    /// Its path in the manifest (`host.kernel`, `host.tcp.congestion_control`).
    pub fact: String,
    /// The value in words; `unknown` where the run could not read it.
    pub baseline: String,
    pub compared: String,
}

/// The facts that differ, in the manifest's order.
pub fn environment(baseline: &Manifest, other: &Manifest) -> Vec<EnvironmentDifference> {
    let record = |m: &Manifest| {
        serde_json::json!({
            "expc_version": m.expc_version,
            "build": serde_json::to_value(&m.build).unwrap_or(Json::Null),
            "host": serde_json::to_value(&m.host).unwrap_or(Json::Null),
            "brokers": m.brokers,
        })
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    flatten("", &record(baseline), &mut a);
    flatten("", &record(other), &mut b);
    let mut out = Vec::new();
    for (fact, value) in &a {
        let theirs = b.iter().find(|(f, _)| f == fact).map(|(_, v)| v);
        if theirs != Some(value) && !VOLATILE.contains(&fact.as_str()) {
            out.push(EnvironmentDifference {
                fact: fact.clone(),
                baseline: shown(fact, Some(value)),
                compared: shown(fact, theirs),
            });
        }
    }
    for (fact, value) in b.iter().filter(|(f, _)| !a.iter().any(|(g, _)| g == f)) {
        out.push(EnvironmentDifference {
            fact: fact.clone(),
            baseline: shown(fact, None),
            compared: shown(fact, Some(value)),
        });
    }
    out
}

/// Objects key by key; arrays and scalars whole.
fn flatten(path: &str, value: &Json, out: &mut Vec<(String, Json)>) {
    match value {
        Json::Object(map) => {
            for (key, value) in map {
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                flatten(&path, value, out);
            }
        }
        _ => out.push((path.to_string(), value.clone())),
    }
}

/// A fact in words: `unknown` for a fact not read (`null`) or not recorded
/// (an older manifest), sizes in binary units, lists comma-separated.
fn shown(fact: &str, value: Option<&Json>) -> String {
    match value {
        None | Some(Json::Null) => "unknown".into(),
        Some(Json::String(s)) => s.clone(),
        Some(Json::Number(n)) if fact.ends_with("_bytes") => {
            display_quantity(RangeUnit::Size, n.as_f64().unwrap_or(f64::NAN))
        }
        Some(Json::Array(items)) => items
            .iter()
            .map(|v| shown(fact, Some(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_facts_compare_one_by_one_and_unread_ones_are_unknown() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        flatten(
            "",
            &json!({"host": {"kernel": "6.1", "tcp": {"cc": "cubic"}, "thp": null}}),
            &mut a,
        );
        flatten(
            "",
            &json!({"host": {"kernel": "6.1", "tcp": {"cc": "bbr"}, "thp": "never"}}),
            &mut b,
        );
        assert_eq!(a[1], ("host.tcp.cc".to_string(), json!("cubic")));
        assert_eq!(shown("host.thp", Some(&a[2].1)), "unknown");
        assert_eq!(shown("host.memory_total_bytes", Some(&json!(1024))), "1KiB");
        assert_eq!(shown("host.nodes", Some(&json!(["a", "b"]))), "a, b");
    }
}
