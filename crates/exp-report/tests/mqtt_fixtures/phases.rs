//! A fleet run beside two partially overlapping anomalies, for the latency
//! by phase.
//!
//! Anomaly `a` is active 1–3 s and again from 5 s to the trial's end (its
//! end is null), `b` 2–4 s, and `c` never started (its start is null). So
//! the phases are none (0–1 s, 4–5 s), a (1–2 s, from 5 s), a+b (2–3 s) and
//! b (3–4 s).
//!
//! Fleet `f` sends message k = 1 … 59 at exactly k · 100 ms (so k = 10, 20,
//! 30, 40 and 50 fall on the boundaries), k µs late, acknowledged after k ms
//! and delivered 0.1 ms later except during b alone (k = 30 … 39). k = 1 is
//! warm-up, k = 15 was never sent, k = 25 timed out.

use std::path::{Path, PathBuf};

use exp_plan::Dist;
use exp_results::*;

use super::*;

/// The columns of the runtime's `anomaly_timeline` the report reads, and a few more.
pub fn timeline_schema() -> Schema {
    Schema::new("anomaly_timeline")
        .column("instance", DType::Str)
        .column("activation", DType::U64)
        .column("kind", DType::Str)
        .column("actual_start_ns", DType::U64)
        .column("actual_end_ns", DType::U64)
        .column("status", DType::Str)
}

pub fn activation(instance: &str, activation: u64, start: Option<u64>, end: Option<u64>) -> Vec<Cell> {
    vec![
        instance.into(),
        activation.into(),
        "cpuoccupy".into(),
        start.into(),
        end.into(),
        "stopped".into(),
    ]
}

const S: u64 = 1_000_000_000;

/// The timeline described above, one file per anomaly as the runtime writes it.
pub fn write_timeline(store: &Store) {
    let schema = timeline_schema();
    let a = vec![
        activation("a", 0, Some(S), Some(3 * S)),
        activation("a", 1, Some(5 * S), None),
    ];
    write(store, &schema, 0, 0, a);
    write(store, &schema, 0, 1, vec![activation("b", 0, Some(2 * S), Some(4 * S))]);
    write(store, &schema, 0, 2, vec![activation("c", 0, None, None)]);
}

/// A damaged timeline: without `actual_end_ns`.
pub fn write_timeline_without_end(store: &Store) {
    let schema = Schema::new("anomaly_timeline")
        .column("instance", DType::Str)
        .column("actual_start_ns", DType::U64);
    write(store, &schema, 0, 0, vec![vec!["a".into(), S.into()]]);
}

pub fn messages() -> Vec<Vec<Cell>> {
    (1..60u64)
        .map(|k| {
            let sent = k * 100_000_000;
            let ack = k * 1_000_000;
            let mut m = Msg {
                fleet: "f",
                device: 0,
                seq: k,
                scheduled: sent - k * 1_000,
                sent: Some(sent),
                ack: Some(ack),
                delivery: (!(30..40).contains(&k)).then_some(ack + 100_000),
                status: "ok",
                reason: None,
                warmup: k == 1,
            };
            match k {
                15 => (m.sent, m.ack, m.delivery, m.status) = (None, None, None, "dropped"),
                25 => (m.ack, m.delivery, m.status) = (None, None, "timeout"),
                _ => {}
            }
            m.cells()
        })
        .collect()
}

/// The run, with the anomalies `a`, `b` and `c` in its plan and whatever
/// `timeline` writes as their timeline.
pub fn build_run(root: &Path, timeline: impl FnOnce(&Store)) -> PathBuf {
    let run = RunDir::create(root, "phases", "r").unwrap();
    run.write_manifest(&mut crate::common::manifest("phases", "r")).unwrap();
    let gap = ns(Dist::Constant { value: 100e6 });
    write_plan_with_anomalies(run.path(), &[("f", gap)], &["a", "b", "c"]);
    let store = Store::open(
        run.tables_dir(),
        StoreOptions {
            row_group_rows: 8,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    write(&store, &messages_schema(), 0, 0, messages());
    timeline(&store);
    store.close().unwrap();
    run.finish().unwrap()
}
