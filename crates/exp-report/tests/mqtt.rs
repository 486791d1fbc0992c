//! The MQTT fleet report on synthetic `mqtt_messages`, `mqtt_devices` and
//! `trials` tables written through the store, with exact expectations.
// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

#[path = "../../exp-results/tests/common/mod.rs"]
mod common;
mod mqtt_fixtures;

use std::fs;
use std::path::{Path, PathBuf};

use exp_plan::{Dist, DistValue, Unit};
use exp_report::mqtt::Loss;
use exp_report::*;
use exp_results::*;
use mqtt_fixtures::*;

/// Fleet `a`: devices 0 and 1, seq 0..=10 (seq 0 is warm-up), a send every
/// 100 ms with lateness 1000 · (seq mod 3) ns; ack latency seq ms (+0.5 ms on
/// device 1), delivery 0.1 ms later. Device 1's seq 5 was never sent, device
/// 0's seq 7 timed out and its seq 3 was not delivered.
fn fleet_a() -> Vec<Vec<Cell>> {
    let mut rows = Vec::new();
    for device in 0..2u64 {
        for seq in 0..=10u64 {
            let scheduled = 1_000_000_000 + seq * 100_000_000 + device * 1_000_000;
            let ack = seq * 1_000_000 + device * 500_000;
            let mut m = Msg {
                fleet: "a",
                device,
                seq,
                scheduled,
                sent: Some(scheduled + 1000 * (seq % 3)),
                ack: Some(ack),
                delivery: Some(ack + 100_000),
                status: "ok",
                reason: None,
                warmup: seq == 0,
            };
            match (device, seq) {
                (1, 5) => {
                    (m.sent, m.ack, m.delivery, m.status, m.reason) =
                        (None, None, None, "dropped", Some("not_connected"))
                }
                (0, 7) => (m.ack, m.delivery, m.status, m.reason) = (None, None, "timeout", Some("unacked")),
                (0, 3) => m.delivery = None,
                _ => {}
            }
            rows.push(m.cells());
        }
    }
    // Rows are written when final, not in send order.
    rows.reverse();
    rows
}

/// Fleet `b`: one device, also numbered 0, three sends 40 ms then 60 ms apart.
fn fleet_b() -> Vec<Vec<Cell>> {
    [0u64, 40_000_000, 100_000_000]
        .iter()
        .enumerate()
        .map(|(seq, &t)| {
            Msg {
                fleet: "b",
                device: 0,
                seq: seq as u64,
                scheduled: t,
                sent: Some(t),
                ack: Some(2_000_000),
                delivery: None,
                status: "ok",
                reason: None,
                warmup: false,
            }
            .cells()
        })
        .collect()
}

/// Fleet `c` in trial 1: two active intervals of seq 0..=3, 10 ms apart, 1 s
/// between them.
fn fleet_c() -> Vec<Vec<Cell>> {
    let mut rows = Vec::new();
    for start in [0u64, 1_000_000_000] {
        for seq in 0..4u64 {
            let t = start + seq * 10_000_000;
            let m = Msg {
                fleet: "c",
                device: 3,
                seq,
                scheduled: t,
                sent: Some(t),
                ack: Some(1_000),
                delivery: None,
                status: "ok",
                reason: None,
                warmup: false,
            };
            rows.push(m.cells());
        }
    }
    // The second interval's first row recorded last: the report must sort
    // the sends (gaps.rs), as every row in order could mislead it.
    let late = rows.remove(4);
    rows.push(late);
    rows
}

fn build_run(root: &Path) -> PathBuf {
    let run = RunDir::create(root, "mqtt", "r").unwrap();
    run.write_manifest(&mut common::manifest("mqtt", "r")).unwrap();
    let exponential = ns(Dist::Exponential { mean: 50e6 });
    write_plan(
        run.path(),
        &[("a", ns(Dist::Constant { value: 100e6 })), ("b", exponential)],
    );
    let store = Store::open(
        run.tables_dir(),
        StoreOptions {
            row_group_rows: 4,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let messages = messages_schema();
    let (a, b) = (fleet_a(), fleet_b());
    // Two shards, each with rows of both fleets.
    let (a0, a1) = a.split_at(9);
    write(&store, &messages, 0, 0, a0.iter().cloned().chain(b).collect());
    write(&store, &messages, 0, 1, a1.to_vec());
    write(&store, &messages, 1, 0, fleet_c());
    let devices = devices_schema();
    let device = |fleet: &str, d: u64, latency: Option<u64>, reconnects: u64| -> Vec<Cell> {
        let connected = latency.map(|l| 10 + l);
        let status = if latency.is_some() {
            "connected"
        } else {
            "failed: refused"
        };
        vec![
            fleet.into(),
            d.into(),
            format!("{fleet}-{d}").into(),
            10u64.into(),
            connected.into(),
            latency.into(),
            reconnects.into(),
            reconnects.into(),
            0u64.into(),
            status.into(),
        ]
    };
    let device_rows = vec![
        device("a", 0, Some(1_000_000), 0),
        device("a", 1, Some(3_000_000), 1),
        device("b", 0, None, 0),
    ];
    write(&store, &devices, 0, 0, device_rows);
    let trials = Schema::new("trials")
        .column("point", DType::U64)
        .column("contended", DType::Bool);
    write(&store, &trials, 0, 0, vec![vec![0u64.into(), true.into()]]);
    store.close().unwrap();
    run.finish().unwrap()
}

#[test]
fn counts_latencies_and_gaps_of_known_data() {
    let root = tempfile::tempdir().unwrap();
    let dir = build_run(root.path());
    let mut warnings = Vec::new();
    let report = mqtt_report(&open_run(&dir).unwrap(), &mut warnings).unwrap();
    // Fleet b's one device never connected: the only warning.
    let warned: Vec<(&Path, &str)> = warnings
        .iter()
        .map(|w| (w.path.as_path(), w.message.as_str()))
        .collect();
    assert_eq!(
        warned,
        [(
            dir.join("tables/mqtt_devices/trial=0").as_path(),
            "fleet `b`: 1 of 1 devices did not connect (`status` says why); their messages are `dropped`"
        )]
    );
    assert_eq!(report.time_scale, 1.0);
    let t0 = &report.trials[0];
    assert_eq!(
        (t0.trial, t0.point, t0.repetition, t0.contended, t0.files),
        (0, Some(0), Some(0), Some(true), 2)
    );
    let names: Vec<&str> = t0.fleets.iter().map(|f| f.fleet.as_str()).collect();
    assert_eq!(names, ["a", "b"]);

    let a = fleet(&report, 0, "a");
    let c = &a.counts;
    assert_eq!(
        (c.scheduled, c.sent, c.acknowledged, c.delivered, c.lost),
        (20, 19, 18, 17, 2)
    );
    let loss = |status: &str, reason: &str| Loss {
        status: Some(status.into()),
        reason: Some(reason.into()),
        count: 1,
    };
    assert_eq!(c.losses, [loss("dropped", "not_connected"), loss("timeout", "unacked")]);
    let w = &a.warmup;
    assert_eq!(
        (w.scheduled, w.sent, w.acknowledged, w.delivered, w.lost),
        (2, 2, 2, 2, 0)
    );
    // 18 completed sends from 1.100001 s (device 0, seq 1) to 2.001001 s (device 1, seq 10).
    assert!(close(a.throughput_per_s.unwrap(), 17.0 / 0.901));

    // Ack latencies, ms: 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 6.5, 7.5, 8, 8.5, 9, 9.5, 10, 10.5.
    let ack = a.ack_latency_ns.as_ref().unwrap();
    assert_eq!((ack.n, ack.min, ack.max), (18, 1e6, 10.5e6));
    assert!(close(ack.p50, 5.5e6), "h = 8.5: halfway between 5 and 6 ms");
    assert!(close(ack.p90, 9.65e6), "h = 15.3");
    assert!(close(ack.p99, 10.415e6), "h = 16.83");
    assert!(close(ack.mean, 102.5e6 / 18.0));
    assert_eq!(ack.cdf.len(), 10);
    let delivery = a.delivery_latency_ns.as_ref().unwrap();
    assert_eq!((delivery.n, delivery.max), (17, 10.6e6));
    let lateness = a.lateness_ns.as_ref().unwrap();
    assert_eq!((lateness.n, lateness.min, lateness.max), (19, 0.0, 2000.0));

    let d = a.connections.as_ref().unwrap();
    assert_eq!((d.devices, d.connected, d.reconnects, d.disconnects), (2, 2, 1, 1));
    assert_eq!(d.connect_latency_ns.as_ref().unwrap().p50, 2e6);

    // Gaps: device 0 has 9, device 1 7 (its seq 5 was not sent); lateness
    // makes them 100 ms − 2 µs (5 of them) or + 1 µs (11).
    let g = &a.gaps;
    let target = g.target.as_ref().unwrap();
    assert!(target.constant);
    assert_eq!((target.median, target.mean), (Some(100e6), Some(100e6)));
    let achieved = g.achieved.as_ref().unwrap();
    assert_eq!(achieved.n, 16);
    assert_eq!(
        (achieved.min, achieved.median, achieved.max),
        (99_998_000.0, 100_001_000.0, 100_001_000.0)
    );
    assert!(close(achieved.mean, 100_000_062.5));
    // Deviations −2062.5 (5×) and +937.5 (11×): Σ² = 30,937,500 over n − 1 = 15.
    assert!(close(achieved.sd.unwrap(), (30_937_500f64 / 15.0).sqrt()));
    assert!(close(g.median_error.unwrap(), 1e-5));
    assert!(g.ks.is_none(), "a constant has atoms: no KS test");

    let b = fleet(&report, 0, "b");
    assert_eq!((b.counts.scheduled, b.counts.delivered, b.warmup.scheduled), (3, 0, 0));
    assert!(b.delivery_latency_ns.is_none());
    let bg = &b.gaps;
    assert_eq!(bg.achieved.as_ref().map(|g| (g.n, g.min, g.max)), Some((2, 40e6, 60e6)));
    let target = bg.target.as_ref().unwrap();
    assert!(!target.constant && close(target.median.unwrap(), 50e6 * 2f64.ln()));
    assert_eq!(bg.ks.map(|k| k.n), Some(2));
    let connections = b.connections.as_ref().unwrap();
    assert_eq!((connections.devices, connections.connected), (1, 0));
    assert!(connections.connect_latency_ns.is_none());

    // Trial 1 is not in the manifest: no point, no target, no contended flag.
    let t1 = &report.trials[1];
    assert_eq!((t1.point, t1.contended), (None, None));
    let c = fleet(&report, 1, "c");
    assert!(c.gaps.target.is_none() && c.connections.is_none());
    // Three gaps per interval, none across the second between them.
    let cg = c.gaps.achieved.as_ref().unwrap();
    assert_eq!((cg.n, cg.min, cg.max), (6, 10e6, 10e6));

    assert!(a.phases.is_empty(), "no anomaly timeline: no phases");

    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["trials"][0]["fleets"][0]["counts"]["acknowledged"], 18);
    assert!(json["trials"][0]["fleets"][0].get("phases").is_none());
    assert_eq!(
        json["trials"][0]["fleets"][0]["gaps"]["target"]["gap"]["family"],
        "constant"
    );
}

#[test]
fn damaged_files_are_warned_about_and_left_out() {
    let root = tempfile::tempdir().unwrap();
    let dir = build_run(root.path());
    let trial0 = dir.join("tables/mqtt_messages/trial=0");
    let good = fs::read(trial0.join("part-1.parquet")).unwrap();
    fs::write(trial0.join("part-7.parquet"), &good[..good.len() / 2]).unwrap();
    fs::write(trial0.join("part-8.parquet"), b"not parquet").unwrap();
    fs::write(dir.join("plan.json"), b"{").unwrap();
    let mut warnings = Vec::new();
    let report = mqtt_report(&open_run(&dir).unwrap(), &mut warnings).unwrap();
    let mut warned: Vec<String> = warnings
        .iter()
        .map(|w| w.path.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    warned.sort();
    let expected = [
        "plan.json",
        "tables/mqtt_devices/trial=0",
        "tables/mqtt_messages/trial=0/part-7.parquet",
        "tables/mqtt_messages/trial=0/part-8.parquet",
    ];
    assert_eq!(warned, expected);
    assert_eq!(report.trials[0].files, 2);
    let a = fleet(&report, 0, "a");
    assert_eq!(
        (a.counts.scheduled, a.counts.acknowledged),
        (20, 18),
        "the good files only"
    );
    assert!(a.gaps.target.is_none() && a.gaps.achieved.is_some());
}

#[test]
fn latency_by_anomaly_phase_of_known_data() {
    let root = tempfile::tempdir().unwrap();
    let dir = phases::build_run(root.path(), phases::write_timeline);
    let mut warnings = Vec::new();
    let report = mqtt_report(&open_run(&dir).unwrap(), &mut warnings).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let f = fleet(&report, 0, "f");
    let labels: Vec<&str> = f.phases.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(
        labels,
        ["none", "a", "a+b", "b", "none (after)"],
        "no phase of c: it never started"
    );
    assert_eq!(f.phases[2].anomalies, ["a", "b"]);
    assert!(f.phases[0].anomalies.is_empty());
    // Ack latencies in ms are k: none 2–9 before any anomaly and 40–49
    // after them, a 10–19 but 15 and 50–59, a+b 20–29 but 25 (timed out),
    // b 30–39. Lateness is k µs.
    let expected = [
        ("none", 8, 8, [5.5, 8.3, 8.93, 9.0]),
        ("a", 19, 19, [50.0, 57.2, 58.82, 59.0]),
        ("a+b", 10, 9, [24.0, 28.2, 28.92, 29.0]),
        ("b", 10, 10, [34.5, 38.1, 38.91, 39.0]),
        ("none (after)", 10, 10, [44.5, 48.1, 48.91, 49.0]),
    ];
    for (phase, (label, n, ok, ms)) in f.phases.iter().zip(expected) {
        assert_eq!((phase.n, phase.ok), (n, ok), "{label}");
        let ack = phase.ack_latency_ns.as_ref().unwrap();
        assert_eq!(ack.n, ok);
        let got = [ack.p50, ack.p90, ack.p99, ack.max];
        assert!(got.iter().zip(ms).all(|(&g, e)| close(g, e * 1e6)), "{label}: {got:?}");
        let lateness = phase.lateness_ns.as_ref().unwrap();
        assert_eq!(lateness.n, n, "{label}: every sent message has a lateness");
        assert_eq!(
            phase.delivery_latency_ns.as_ref().map(|q| q.n),
            (label != "b").then_some(ok)
        );
    }
    // a+b's lateness includes the timed-out message: 20–29 µs.
    assert!(close(f.phases[2].lateness_ns.as_ref().unwrap().p50, 24.5e3));
    assert!(close(f.phases[0].delivery_latency_ns.as_ref().unwrap().p50, 5.6e6));
    assert!(close(f.phases[4].delivery_latency_ns.as_ref().unwrap().p50, 44.6e6));
    let sent: u64 = f.phases.iter().map(|p| p.n).sum();
    assert_eq!(sent, f.counts.sent, "every sent message has one phase");

    let json = serde_json::to_value(&report).unwrap();
    let phase = &json["trials"][0]["fleets"][0]["phases"][2];
    assert_eq!(
        (&phase["label"], &phase["n"], &phase["ok"]),
        (&"a+b".into(), &10.into(), &9.into())
    );
}

#[test]
fn a_damaged_or_missing_anomaly_timeline_is_a_warning() {
    // A file that is not Parquet, one without `actual_end_ns`, none at all.
    let cases = [
        ("part-1.parquet", phases::write_timeline as fn(&Store)),
        ("part-0.parquet", phases::write_timeline_without_end),
        ("", |_: &Store| {}),
    ];
    for (warned, timeline) in cases {
        let root = tempfile::tempdir().unwrap();
        let dir = phases::build_run(root.path(), timeline);
        let timeline_dir = dir.join("tables/anomaly_timeline/trial=0");
        if warned == "part-1.parquet" {
            fs::write(timeline_dir.join(warned), b"not parquet").unwrap();
        }
        let mut warnings = Vec::new();
        let report = mqtt_report(&open_run(&dir).unwrap(), &mut warnings).unwrap();
        let paths: Vec<&Path> = warnings.iter().map(|w| w.path.as_path()).collect();
        assert_eq!(paths, [timeline_dir.join(warned)], "{warnings:?}");
        assert!(warnings[0].message.contains("no latency by phase"), "{warnings:?}");
        let f = fleet(&report, 0, "f");
        assert!(f.phases.is_empty(), "{warned}: no phases rather than wrong ones");
        assert_eq!((f.counts.sent, f.ack_latency_ns.as_ref().unwrap().n), (57, 56));
    }
}

#[test]
fn a_run_without_fleets_has_no_mqtt_report() {
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "plain", "r").unwrap();
    run.write_manifest(&mut common::manifest("plain", "r")).unwrap();
    let store = Store::open(run.tables_dir(), StoreOptions::default()).unwrap();
    let schema = common::schema("system_metrics");
    store.sink(&schema, 0, 0).write(common::rows(&schema, 0, 10)).unwrap();
    store.close().unwrap();
    let dir = run.finish().unwrap();
    let mut warnings = Vec::new();
    assert_eq!(mqtt_report(&open_run(&dir).unwrap(), &mut warnings), None);
    assert!(warnings.is_empty());
}

#[test]
fn ks_accepts_the_configured_distribution_and_rejects_another() {
    let pareto = DistValue {
        unit: Unit::Ns,
        dist: Dist::Pareto {
            shape: 3.0,
            scale: 100e6 / 2f64.powf(1.0 / 3.0),
        },
    };
    // Same median, another shape.
    let exponential = DistValue {
        unit: Unit::Ns,
        dist: Dist::Exponential {
            mean: 100e6 / 2f64.ln(),
        },
    };
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "ks", "r").unwrap();
    run.write_manifest(&mut common::manifest("ks", "r")).unwrap();
    let target = serde_json::to_value(&pareto).unwrap();
    write_plan(run.path(), &[("right", target.clone()), ("wrong", target)]);
    let store = Store::open(run.tables_dir(), StoreOptions::default()).unwrap();
    let schema = messages_schema();
    let rows = drawn("right", &pareto, 2001, 1)
        .into_iter()
        .chain(drawn("wrong", &exponential, 2001, 2));
    write(&store, &schema, 0, 0, rows.collect());
    store.close().unwrap();
    let dir = run.finish().unwrap();
    let report = mqtt_report(&open_run(&dir).unwrap(), &mut Vec::new()).unwrap();

    let right = &fleet(&report, 0, "right").gaps;
    let ks = right.ks.unwrap();
    assert_eq!(ks.n, 2000);
    assert!(ks.p_value > 0.01, "{ks:?}");
    assert!(right.median_error.unwrap().abs() < 0.1, "{:?}", right.achieved);
    let wrong = fleet(&report, 0, "wrong").gaps.ks.unwrap();
    assert!(wrong.p_value < 0.01, "{wrong:?}");
}

#[test]
fn gap_targets_come_from_the_variant_each_trials_point_ran() {
    gap_targets_per_point(write_plan_variants);
}

#[test]
fn gap_targets_come_from_the_field_value_at_each_trials_point() {
    gap_targets_per_point(write_plan_fields);
}

fn gap_targets_per_point(write_plan: fn(&Path, &str, &[serde_json::Value])) {
    let gaps = [
        DistValue {
            unit: Unit::Ns,
            dist: Dist::Constant { value: 10e6 },
        },
        DistValue {
            unit: Unit::Ns,
            dist: Dist::Constant { value: 20e6 },
        },
    ];
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "variants", "r").unwrap();
    let mut manifest = common::manifest("variants", "r");
    let mut second = manifest.trials[0].clone();
    (second.trial, second.point) = (1, 1);
    manifest.trials.push(second);
    run.write_manifest(&mut manifest).unwrap();
    let targets: Vec<serde_json::Value> = gaps.iter().map(|g| serde_json::to_value(g).unwrap()).collect();
    write_plan(run.path(), "a", &targets);
    let store = Store::open(run.tables_dir(), StoreOptions::default()).unwrap();
    let schema = messages_schema();
    for (trial, gap) in gaps.iter().enumerate() {
        write(&store, &schema, trial as u32, 0, drawn("a", gap, 11, 1));
    }
    store.close().unwrap();
    let dir = run.finish().unwrap();
    let mut warnings = Vec::new();
    let report = mqtt_report(&open_run(&dir).unwrap(), &mut warnings).unwrap();
    // The anomaly, which names no parameter, is found at both points.
    let messages: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages.iter().all(|m| m.contains("runs anomalies (hog)")),
        "{messages:?}"
    );
    for (trial, median) in [(0, 10e6), (1, 20e6)] {
        let gaps = &fleet(&report, trial, "a").gaps;
        assert_eq!(gaps.target.as_ref().unwrap().median, Some(median), "trial {trial}");
        assert_eq!(gaps.median_error, Some(0.0), "trial {trial}");
    }
}
