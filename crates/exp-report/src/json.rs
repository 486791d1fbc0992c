//! The reports as one JSON document, as `expc report --json` prints it: the
//! run summary's fields, with the MQTT report as `mqtt` just before
//! `tables` and the traffic report as `traffic` at the end, each only if
//! the run has its report. Runs compared: [`comparison`].

use serde_json::{Map, Value};

use exp_results::Manifest;

use crate::compare::RunComparison;
use crate::{MqttReport, RunSummary, TrafficReport};

/// The document of `summary` and the run's reports.
pub fn report(
    summary: &RunSummary,
    mqtt: Option<&MqttReport>,
    traffic: Option<&TrafficReport>,
) -> Result<Value, serde_json::Error> {
    with_traffic(with_mqtt(summary, mqtt)?, traffic)
}

/// The summary's JSON with the MQTT report as `mqtt`, before the tables
/// as in the text (absent for a run without fleets).
fn with_mqtt(summary: &RunSummary, mqtt: Option<&MqttReport>) -> Result<Value, serde_json::Error> {
    let value = serde_json::to_value(summary)?;
    let (Some(mqtt), Value::Object(fields)) = (mqtt, &value) else {
        return Ok(value);
    };
    let mut mqtt = Some(serde_json::to_value(mqtt)?);
    let mut out = Map::new();
    for (key, field) in fields {
        if key == "tables" {
            if let Some(mqtt) = mqtt.take() {
                out.insert("mqtt".into(), mqtt);
            }
        }
        out.insert(key.clone(), field.clone());
    }
    if let Some(mqtt) = mqtt {
        out.insert("mqtt".into(), mqtt);
    }
    Ok(Value::Object(out))
}

/// The report's JSON with the traffic report as `traffic` (absent for a
/// run without traffic).
fn with_traffic(value: Value, report: Option<&TrafficReport>) -> Result<Value, serde_json::Error> {
    let (Some(report), Value::Object(mut fields)) = (report, value.clone()) else {
        return Ok(value);
    };
    fields.insert("traffic".into(), serde_json::to_value(report)?);
    Ok(Value::Object(fields))
}

/// The report's JSON with the trials' validity as `validity` (counts and
/// every trial that is not valid, with its findings).
pub fn with_validity(value: Value, manifest: &Manifest) -> Value {
    let Value::Object(mut fields) = value else {
        return value;
    };
    fields.insert("validity".into(), crate::validity::json(manifest));
    Value::Object(fields)
}

/// A comparison of one run against the baseline for `--json`: the
/// [`RunComparison`]'s fields, each metric with its relative change.
pub fn comparison(comparison: &RunComparison) -> Result<Value, serde_json::Error> {
    let mut value = serde_json::to_value(comparison)?;
    let metrics = value.get_mut("metrics").and_then(Value::as_array_mut);
    for (json, d) in metrics.into_iter().flatten().zip(&comparison.metrics) {
        if let Value::Object(fields) = json {
            // NaN (a zero baseline) has no JSON number: null.
            let change = serde_json::Number::from_f64(d.relative()).map(Value::Number);
            fields.insert("relative_change".into(), change.unwrap_or_default());
        }
    }
    Ok(value)
}
