//! Verdicts of the claims on the monitor's system metrics, on the spread
//! of a traffic workload's throughput between its windows, and on
//! constants that follow `--time-scale`, each from run directories written
//! through the real writers with known ground truth (stated per test).
#![allow(clippy::unwrap_used)]

mod fixtures;

use exp_claims::{evaluate_dir, Options};
use exp_plan::claims::*;
use exp_plan::Unit;
use exp_results::claims::{ClaimRecord, ClaimVerdict};
use exp_results::schemas::throughput_schema;
use exp_results::{Cell, DType, Schema};
use fixtures::*;

use ClaimVerdict::{Inconclusive, Refuted, Supported};

const S: u64 = 1_000_000_000;

/// Every claim of `plan` over a run of `tables` at `time_scale`.
fn verdicts(plan: &exp_plan::Plan, tables: Vec<Rows>, time_scale: f64) -> Vec<ClaimRecord> {
    let root = tempfile::tempdir().unwrap();
    let dir = run_dir_at(root.path(), plan, tables, &[], time_scale);
    let evaluation = evaluate_dir(&dir, Options::default()).unwrap();
    assert!(evaluation.warnings.is_empty(), "{:?}", evaluation.warnings);
    evaluation.claims
}

fn check(claims: &[ClaimRecord], expected: &[ClaimVerdict]) {
    let got: Vec<ClaimVerdict> = claims.iter().map(|c| c.verdict).collect();
    assert_eq!(got, expected, "{claims:#?}");
}

fn with_phase(mut stat: Stat, relation: PhaseRelation) -> Stat {
    stat.phase = Some(Phase {
        relation,
        anomaly: "cpu".into(),
    });
    stat
}

fn monitor_stat(function: StatFn, metric: &str, unit: Unit) -> Stat {
    stat(function, "monitor", "monitor", metric, unit)
}

/// The `system_metrics` columns these tests write (the real table has more).
fn monitor_schema() -> Schema {
    Schema::new("system_metrics")
        .column("t_ns", DType::Ns)
        .column("interval_ns", DType::Ns)
        .column("cpu_user_pct", DType::F64)
        .column("mem_available_bytes", DType::U64)
        .column("net_rx_bytes_per_s", DType::F64)
        .column("active_workloads", DType::Str)
}

/// A sample every 500 ms (at 0.7 s, 1.2 s, …) for 15 s: user CPU 10 %
/// (+ `trial` %) outside the anomaly's activation [5 s, 10 s), 60 %
/// inside; the samples whose interval straddles the activation's start or
/// end (5.2 s, 10.2 s) read 35 %; 2 GiB available; 1 MB/s received.
fn monitor_trial(trial: u32) -> Rows {
    let rows = (1..=30u64)
        .map(|i| {
            let t = i * S / 2 + S / 5;
            let (start, end) = (t - S / 2, t);
            let cpu = if start >= 5 * S && end <= 10 * S {
                60.0
            } else if end <= 5 * S || start >= 10 * S {
                10.0 + f64::from(trial)
            } else {
                35.0
            };
            vec![
                Cell::from(t),
                Cell::from(S / 2),
                Cell::from(cpu),
                Cell::from(2u64 << 30),
                Cell::from(1e6),
                Cell::from("cpu"),
            ]
        })
        .collect();
    Rows {
        trial,
        shard: 0,
        schema: monitor_schema(),
        rows,
    }
}

#[test]
fn monitor_metrics_by_phase_with_samples_straddling_a_boundary_left_out() {
    let during = with_phase(
        monitor_stat(StatFn::Mean, "cpu_user_pct", Unit::Ratio),
        PhaseRelation::During,
    );
    let before = with_phase(
        monitor_stat(StatFn::Mean, "cpu_user_pct", Unit::Ratio),
        PhaseRelation::Before,
    );
    let max_before = with_phase(
        monitor_stat(StatFn::Max, "cpu_user_pct", Unit::Ratio),
        PhaseRelation::Before,
    );
    let min_during = with_phase(
        monitor_stat(StatFn::Min, "cpu_user_pct", Unit::Ratio),
        PhaseRelation::During,
    );
    let claims = vec![
        // Truth: 60 % during against 10–13 % before.
        compare(
            "mean(monitor.cpu_user_pct during cpu) > 2 * mean(monitor.cpu_user_pct before cpu)",
            scaled(during.clone()),
            CmpOp::Gt,
            Term::Scaled {
                factor: 2.0,
                stat: before,
            },
        ),
        // Truth: 60 % is not 10 times 10–13 %.
        compare(
            "mean(monitor.cpu_user_pct during cpu) > 10 * mean(…)",
            scaled(during),
            CmpOp::Gt,
            Term::Scaled {
                factor: 10.0,
                stat: monitor_stat(StatFn::Mean, "cpu_user_pct", Unit::Ratio),
            },
        ),
        // Truth: the straddling samples (35 %) are in neither phase.
        compare(
            "max(monitor.cpu_user_pct before cpu) < 20%",
            scaled(max_before),
            CmpOp::Lt,
            constant(0.2, Unit::Ratio),
        ),
        compare(
            "min(monitor.cpu_user_pct during cpu) > 50%",
            scaled(min_during),
            CmpOp::Gt,
            constant(0.5, Unit::Ratio),
        ),
        // Truth: 2 GiB available at every sample; 1 MB/s is 8 Mbit/s.
        compare(
            "min(monitor.mem_available_bytes) > 1GiB",
            scaled(monitor_stat(StatFn::Min, "mem_available_bytes", Unit::Bytes)),
            CmpOp::Gt,
            constant(f64::from(1u32 << 30), Unit::Bytes),
        ),
        claim(
            "mean(monitor.net_rx_bytes_per_s) within 1% of 8Mbit/s",
            ClaimKind::Within {
                left: scaled(monitor_stat(StatFn::Mean, "net_rx_bytes_per_s", Unit::BitPerS)),
                tolerance_ratio: 0.01,
                right: constant(8e6, Unit::BitPerS),
            },
        ),
    ];
    let plan = plan(&[], 4, claims);
    let mut tables = Vec::new();
    for t in 0..4 {
        tables.push(monitor_trial(t));
        tables.push(timeline(t, vec![activation("cpu", 5 * S, 10 * S)]));
    }
    let claims = verdicts(&plan, tables, 1.0);
    check(
        &claims,
        &[Supported, Refuted, Supported, Supported, Supported, Supported],
    );
    let max_before = claims[2].points[0].estimate.unwrap();
    assert!((max_before - 0.115).abs() < 1e-9, "the mean of 10–13 %: {max_before}");
}

/// One row per interval and direction of `traffic_throughput`: windows of
/// 2 intervals of 250 ms each, the window's rate `rates[w]` bit/s, all to
/// the initiator; plus an interval outside the measure window carrying a
/// huge count that must not count.
fn throughput_trial(trial: u32, rates: &[f64]) -> Rows {
    let mut rows = Vec::new();
    let interval = S / 4;
    let mut row = |window: u64, t: u64, direction: &str, bytes: u64, in_window: bool| {
        rows.push(vec![
            Cell::from("bulk"),
            Cell::from("seq"),
            Cell::from("own"),
            Cell::from(window),
            Cell::from(t),
            Cell::from(interval),
            Cell::from(direction),
            Cell::from(bytes),
            Cell::from(bytes as f64 * 8.0 * 4.0),
            Cell::from(in_window),
        ]);
    };
    for (w, rate) in rates.iter().enumerate() {
        let start = w as u64 * 35 * S;
        let bytes = (rate / 8.0 / 4.0).round() as u64;
        for i in 0..2 {
            let t = start + i * interval;
            row(w as u64, t, "to_acceptor", 0, true);
            row(w as u64, t, "to_initiator", bytes, true);
        }
        row(w as u64, start + 2 * interval, "to_initiator", 1 << 40, false);
    }
    Rows {
        trial,
        shard: 0,
        schema: throughput_schema(),
        rows,
    }
}

fn window_stat(function: StatFn, unit: Unit) -> Term {
    scaled(stat(function, "traffic", "bulk", "window_throughput", unit))
}

#[test]
fn the_spread_of_throughput_between_windows() {
    let claims = vec![
        // Truth per trial: windows at 1.0, 1.1, 0.9, 1.0 Gbit/s: cv 8.2 %,
        // max/min 1.22, range 0.2 Gbit/s, min 0.9 Gbit/s.
        compare(
            "cv(traffic.bulk.window_throughput) < 10%",
            window_stat(StatFn::Cv, Unit::Ratio),
            CmpOp::Lt,
            constant(0.10, Unit::Ratio),
        ),
        compare(
            "cv(traffic.bulk.window_throughput) < 5%",
            window_stat(StatFn::Cv, Unit::Ratio),
            CmpOp::Lt,
            constant(0.05, Unit::Ratio),
        ),
        compare(
            "max_over_min(traffic.bulk.window_throughput) < 1.5",
            window_stat(StatFn::MaxOverMin, Unit::Count),
            CmpOp::Lt,
            constant(1.5, Unit::Count),
        ),
        compare(
            "range(traffic.bulk.window_throughput) < 100Mbit/s",
            window_stat(StatFn::Range, Unit::BitPerS),
            CmpOp::Lt,
            constant(1e8, Unit::BitPerS),
        ),
        compare(
            "min(traffic.bulk.window_throughput) > 800Mbit/s",
            window_stat(StatFn::Min, Unit::BitPerS),
            CmpOp::Gt,
            constant(8e8, Unit::BitPerS),
        ),
        claim(
            "stddev(traffic.bulk.window_throughput) within 1% of 81.65Mbit/s",
            ClaimKind::Within {
                left: window_stat(StatFn::Stddev, Unit::BitPerS),
                tolerance_ratio: 0.01,
                right: constant(81.65e6, Unit::BitPerS),
            },
        ),
    ];
    let plan = plan(&[], 3, claims);
    let tables = (0..3)
        .map(|t| throughput_trial(t, &[1.0e9, 1.1e9, 0.9e9, 1.0e9]))
        .collect();
    let claims = verdicts(&plan, tables, 1.0);
    check(&claims, &[Supported, Refuted, Supported, Refuted, Supported, Supported]);
    let cv = claims[0].points[0].estimate.unwrap();
    assert!((cv - 0.0816).abs() < 1e-3, "{cv}");
}

#[test]
fn a_single_window_has_no_spread() {
    let plan = plan(
        &[],
        3,
        vec![compare(
            "cv(traffic.bulk.window_throughput) < 10%",
            window_stat(StatFn::Cv, Unit::Ratio),
            CmpOp::Lt,
            constant(0.10, Unit::Ratio),
        )],
    );
    let tables = (0..3).map(|t| throughput_trial(t, &[1.0e9])).collect();
    let claims = verdicts(&plan, tables, 1.0);
    check(&claims, &[Inconclusive]);
    assert!(claims[0].points[0].note.is_some(), "{claims:#?}");
}

/// Activations of 1 s of CPU time each: the length of a 10 s activation
/// at `--time-scale 0.1`.
fn cpu_time_claims() -> (exp_plan::Plan, Vec<Rows>) {
    let cpu_time = stat(StatFn::Median, "anomaly", "cpu", "cpu_time", Unit::Ns);
    let scaled_ten = Term::Constant {
        value: 10.0 * 1e9,
        unit: Unit::Ns,
        time_scaled: true,
    };
    let claims = vec![
        claim(
            "median(anomaly.cpu.cpu_time) within 10% of scaled(10s)",
            ClaimKind::Within {
                left: scaled(cpu_time.clone()),
                tolerance_ratio: 0.1,
                right: scaled_ten,
            },
        ),
        compare(
            "median(anomaly.cpu.cpu_time) > scaled(5s)",
            scaled(cpu_time.clone()),
            CmpOp::Gt,
            Term::Constant {
                value: 5.0 * 1e9,
                unit: Unit::Ns,
                time_scaled: true,
            },
        ),
        // A latency-like bound is kept as written.
        compare(
            "median(anomaly.cpu.cpu_time) > 5s",
            scaled(cpu_time),
            CmpOp::Gt,
            constant(5e9, Unit::Ns),
        ),
    ];
    let plan = plan(&[], 3, claims);
    let tables = (0..3)
        .map(|t| {
            let mut row = activation("cpu", 0, S);
            row[13] = Cell::from(S - 20_000_000 + u64::from(t) * 10_000_000);
            timeline(t, vec![row])
        })
        .collect();
    (plan, tables)
}

#[test]
fn scaled_constants_follow_the_time_scale_and_others_do_not() {
    let (plan, tables) = cpu_time_claims();
    // At 0.1: 0.98–1.0 s is within 10 % of 10 s × 0.1 and above 5 s × 0.1;
    // the unscaled 5 s bound stays 5 s.
    let claims = verdicts(&plan, tables, 0.1);
    check(&claims, &[Supported, Supported, Refuted]);
    // At full scale the same rows are a tenth of 10 s, under 5 s.
    let (plan, tables) = cpu_time_claims();
    let claims = verdicts(&plan, tables, 1.0);
    check(&claims, &[Refuted, Refuted, Refuted]);
}

/// A coefficient of variation may pass 100 % and the largest window over
/// the smallest is at least 1: the t interval across repetitions is cut to
/// those ranges, not to a share's [0, 1].
#[test]
fn spread_intervals_keep_to_the_statistics_own_range() {
    let claims = vec![
        compare(
            "cv(traffic.bulk.window_throughput) < 500%",
            window_stat(StatFn::Cv, Unit::Ratio),
            CmpOp::Lt,
            constant(5.0, Unit::Ratio),
        ),
        compare(
            "max_over_min(traffic.bulk.window_throughput) < 100",
            window_stat(StatFn::MaxOverMin, Unit::Count),
            CmpOp::Lt,
            constant(100.0, Unit::Count),
        ),
    ];
    let plan = plan(&[], 3, claims);
    // Per trial: cv 1.92, 1.14, 1.40; max/min 1.01, 1.5, 1.02.
    let trials = [
        [1.0e9, 1.0e7, 1.0e7, 1.0e7],
        [1.0e9, 1.0e9, 1.0e7, 1.0e7],
        [1.0e9, 5.0e8, 1.0e7, 1.0e7],
    ];
    let cv_tables = trials
        .iter()
        .zip(0..)
        .map(|(rates, t)| throughput_trial(t, rates))
        .collect();
    let cv = &verdicts(&plan, cv_tables, 1.0)[0].points[0];
    assert!(cv.estimate.unwrap() > 1.0, "{cv:?}");
    assert!(cv.high.unwrap() > 1.5, "a cv interval cut at 100 %: {cv:?}");
    let near = [[1.0e9, 1.01e9], [1.0e9, 1.5e9], [1.0e9, 1.02e9]];
    let ratio_tables = near
        .iter()
        .zip(0..)
        .map(|(rates, t)| throughput_trial(t, rates))
        .collect();
    let ratio = &verdicts(&plan, ratio_tables, 1.0)[1].points[0];
    assert!(ratio.low.unwrap() >= 1.0, "max/min below 1: {ratio:?}");
}
