//! Fixtures of the MQTT report tests: message rows and a minimal `plan.json`.
#![allow(dead_code, clippy::unwrap_used)]

pub mod phases;

use std::fs;
use std::path::Path;

use exp_plan::{Dist, DistValue, Unit};
use exp_report::{FleetReport, MqttReport};
use exp_results::*;
use exp_stats::{Rng, Sampler};

/// The fleet executor's schemas, as the report defines them.
pub use exp_results::schemas::{devices_schema, messages_schema};

/// One message row. `ack`/`delivery` are latencies; the absolute times follow from `sent`.
pub struct Msg<'a> {
    pub fleet: &'a str,
    pub device: u64,
    pub seq: u64,
    pub scheduled: u64,
    pub sent: Option<u64>,
    pub ack: Option<u64>,
    pub delivery: Option<u64>,
    pub status: &'a str,
    pub reason: Option<&'a str>,
    pub warmup: bool,
}

impl Msg<'_> {
    pub fn cells(&self) -> Vec<Cell> {
        let after = |l: Option<u64>| self.sent.zip(l).map(|(s, l)| s + l);
        let lateness = self.sent.map_or(0, |s| s - self.scheduled);
        vec![
            self.fleet.into(),
            self.device.into(),
            self.seq.into(),
            self.scheduled.into(),
            self.sent.into(),
            after(self.ack).into(),
            after(self.delivery).into(),
            lateness.into(),
            self.ack.into(),
            self.delivery.into(),
            64u64.into(),
            self.status.into(),
            self.reason.into(),
            self.warmup.into(),
        ]
    }
}

/// One device sending `n` messages with gaps drawn from `gaps`.
pub fn drawn(fleet: &str, gaps: &DistValue, n: u64, seed: u64) -> Vec<Vec<Cell>> {
    let sampler = Sampler::new(gaps).unwrap();
    let mut rng = Rng::new(seed);
    let mut t = 0u64;
    (0..n)
        .map(|seq| {
            let m = Msg {
                fleet,
                device: 0,
                seq,
                scheduled: t,
                sent: Some(t),
                ack: Some(1_000),
                delivery: None,
                status: "ok",
                reason: None,
                warmup: false,
            };
            t += sampler.sample_u64(&mut rng);
            m.cells()
        })
        .collect()
}

pub fn write(store: &Store, schema: &Schema, trial: u32, shard: u32, rows: Vec<Vec<Cell>>) {
    let mut batch = schema.batch();
    for row in rows {
        batch.push_row(row).unwrap();
    }
    store.sink(schema, trial, shard).write(batch).unwrap();
}

pub fn ns(dist: Dist) -> serde_json::Value {
    serde_json::to_value(DistValue { unit: Unit::Ns, dist }).unwrap()
}

/// A minimal `plan.json`: point 0 with fleets of the given gaps (the report reads no more).
pub fn write_plan(dir: &Path, fleets: &[(&str, serde_json::Value)]) {
    write_plan_with_anomalies(dir, fleets, &[]);
}

/// [`write_plan`] with anomalies of the given names too.
pub fn write_plan_with_anomalies(dir: &Path, fleets: &[(&str, serde_json::Value)], anomalies: &[&str]) {
    let anomaly = serde_json::json!({"cpuoccupy": {"utilization_ratio": 1.0}});
    let workloads: Vec<serde_json::Value> = fleets
        .iter()
        .map(|(name, gap)| serde_json::json!({"name": name, "config": {"fleet": {"gap": gap}}}))
        .chain(
            anomalies
                .iter()
                .map(|name| serde_json::json!({"name": name, "config": {"anomaly": anomaly}})),
        )
        .collect();
    let plan = serde_json::json!({"points": [{"index": 0, "workloads": workloads}]});
    fs::write(dir.join("plan.json"), serde_json::to_vec(&plan).unwrap()).unwrap();
}

/// A `plan.json` as plans of version 2 on hold it (the parts the report
/// reads): a parameter `g` with one value per gap, fleet `fleet` with one
/// variant per gap, and an anomaly `hog` naming no parameter.
pub fn write_plan_variants(dir: &Path, fleet: &str, gaps: &[serde_json::Value]) {
    let values: Vec<serde_json::Value> = gaps.iter().map(|_| serde_json::json!({})).collect();
    let variants: Vec<serde_json::Value> = gaps
        .iter()
        .map(|gap| serde_json::json!({"name": fleet, "config": {"fleet": {"gap": gap}}}))
        .collect();
    let anomaly = serde_json::json!({"name": "hog", "config": {"anomaly": {"cpuoccupy": {}}}});
    let plan = serde_json::json!({
        "plan_version": 2,
        "parameters": [{"name": "g", "ty": "dist<duration>", "values": values}],
        "workloads": [
            {"parameters": ["g"], "variants": variants},
            {"parameters": [], "variants": [anomaly]},
        ],
    });
    fs::write(dir.join("plan.json"), serde_json::to_vec(&plan).unwrap()).unwrap();
}

/// The same as plans of version 3 hold it: fleet `fleet` has one variant
/// (at the first gap) and its gap is a field over `g`.
pub fn write_plan_fields(dir: &Path, fleet: &str, gaps: &[serde_json::Value]) {
    let values: Vec<serde_json::Value> = gaps.iter().map(|_| serde_json::json!({})).collect();
    let variant = serde_json::json!({"name": fleet, "config": {"fleet": {"gap": gaps[0]}}});
    let anomaly = serde_json::json!({"name": "hog", "config": {"anomaly": {"cpuoccupy": {}}}});
    let plan = serde_json::json!({
        "plan_version": 3,
        "parameters": [{"name": "g", "ty": "dist<duration>", "values": values}],
        "workloads": [
            {
                "parameters": [],
                "variants": [variant],
                "fields": [{"pointers": ["/config/fleet/gap"], "parameters": ["g"], "values": gaps}],
            },
            {"parameters": [], "variants": [anomaly]},
        ],
    });
    fs::write(dir.join("plan.json"), serde_json::to_vec(&plan).unwrap()).unwrap();
}

pub fn fleet<'a>(report: &'a MqttReport, trial: u32, name: &str) -> &'a FleetReport {
    let trial = report.trials.iter().find(|t| t.trial == trial).unwrap();
    trial.fleets.iter().find(|f| f.fleet == name).unwrap()
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}
