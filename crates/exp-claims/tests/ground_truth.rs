//! Twenty synthetic run directories with known ground truth, each written
//! through the real writers, each with one claim whose verdict is known:
//! the truth is stated beside each case. At least 19 verdicts must be
//! right, and no claim may be `supported` while its interval crosses the
//! margin.
#![allow(clippy::unwrap_used)]

mod fixtures;

use exp_claims::{evaluate_dir, Options};
use exp_plan::claims::*;
use exp_results::claims::{ClaimRecord, ClaimVerdict};
use exp_stats::Rng;
use fixtures::cases::*;
use fixtures::*;

use ClaimVerdict::{Inconclusive, Refuted, Supported};

struct Case {
    name: &'static str,
    /// What is true of the data, and so what the verdict must be.
    truth: &'static str,
    expected: ClaimVerdict,
    record: ClaimRecord,
}

/// Where the claim's margin is, to check that no supported point's interval crosses it.
fn margin(name: &str) -> Option<(CmpOp, f64)> {
    Some(match name {
        "threshold met" | "one repetition" | "invalid trial left out" => (CmpOp::Lt, 25.0 * MS),
        "threshold on the margin" => (CmpOp::Lt, 14.9 * MS),
        "share large enough" => (CmpOp::Ge, 0.75),
        "failures under a bound" => (CmpOp::Lt, 0.05),
        "ratio holds (paired)" => (CmpOp::Ge, 0.0),
        "points compared (unpaired)" | "phase comparison" => (CmpOp::Gt, 0.0),
        "no loss" => (CmpOp::Eq, 0.0),
        _ => return None,
    })
}

/// Thresholds on one statistic.
fn single_statistic_cases() -> Vec<Case> {
    let flat = |_| 10.0 * MS;
    let case = |name, truth, expected, record| Case {
        name,
        truth,
        expected,
        record,
    };
    vec![
        case(
            "threshold met",
            "p99 = 14.9 ms, bound 25 ms",
            Supported,
            fleet_case(&[], 5, flat, 0.05, p99_below(25.0), &[]),
        ),
        case(
            "threshold violated",
            "p99 = 14.9 ms, bound 10 ms",
            Refuted,
            fleet_case(&[], 5, flat, 0.05, p99_below(10.0), &[]),
        ),
        case(
            "threshold on the margin",
            "p99 = 14.9 ms ± 5 % between trials, bound 14.9 ms",
            Inconclusive,
            fleet_case(&[], 5, flat, 0.1, p99_below(14.9), &[]),
        ),
        case(
            "no loss",
            "every message acknowledged, loss == 0",
            Supported,
            loss_case(None, CmpOp::Eq, 0.0),
        ),
        case(
            "some loss",
            "1 in 50 messages lost, loss == 0",
            Refuted,
            loss_case(Some(50), CmpOp::Eq, 0.0),
        ),
        case(
            "failures under a bound",
            "1 % of connections fail, failures < 5 %",
            Supported,
            traffic_case(failures_claim(0.05), 100.0, 50.0, Some(100)),
        ),
        case(
            "share too small",
            "share below 10 ms = 50 %, claim >= 75 %",
            Refuted,
            fleet_case(&[], 5, flat, 0.05, share_below(10.0, 0.75), &[]),
        ),
        case(
            "share large enough",
            "share below 14 ms = 90 %, claim >= 75 %",
            Supported,
            fleet_case(&[], 5, flat, 0.05, share_below(14.0, 0.75), &[]),
        ),
        case(
            "ratio holds (paired)",
            "paths median 2 × own, claim >= 1.5 ×",
            Supported,
            traffic_case(ratio_claim(1.5), 100.0, 50.0, None),
        ),
        case(
            "ratio fails (paired)",
            "paths median = own, claim >= 1.5 ×",
            Refuted,
            traffic_case(ratio_claim(1.5), 50.0, 50.0, None),
        ),
    ]
}

/// Comparisons, trends, `within`, and how rows and trials are read.
fn comparison_cases() -> Vec<Case> {
    let flat = |_| 10.0 * MS;
    let by_devices = |p: u32| [10.0, 20.0, 40.0][p as usize] * MS;
    let falling = |p: u32| [40.0, 20.0, 10.0][p as usize] * MS;
    let case = |name, truth, expected, record| Case {
        name,
        truth,
        expected,
        record,
    };
    vec![
        case(
            "trend up",
            "p99 doubles with each devices value",
            Supported,
            fleet_case(
                &[10, 100, 200],
                4,
                by_devices,
                0.05,
                trend_claim(Direction::Increases),
                &[],
            ),
        ),
        case(
            "no trend",
            "p99 the same at every devices value",
            Inconclusive,
            fleet_case(&[10, 100, 200], 4, flat, 0.05, trend_claim(Direction::Increases), &[]),
        ),
        case(
            "trend the other way",
            "p99 halves with each devices value",
            Refuted,
            fleet_case(
                &[10, 100, 200],
                4,
                falling,
                0.05,
                trend_claim(Direction::Increases),
                &[],
            ),
        ),
        case(
            "points compared (unpaired)",
            "p99 at 200 devices = 4 × p99 at 10",
            Supported,
            fleet_case(&[10, 100, 200], 4, by_devices, 0.05, at_claim(), &[]),
        ),
        case(
            "within tolerance",
            "median 100 ms, within 15 % of 95 ms",
            Supported,
            traffic_case(within_claim(0.15, 95.0), 100.0, 50.0, None),
        ),
        case(
            "outside tolerance",
            "median 100 ms, within 5 % of 125 ms",
            Refuted,
            traffic_case(within_claim(0.05, 125.0), 100.0, 50.0, None),
        ),
        case(
            "one repetition",
            "p99 = 14.9 ms, bound 25 ms, one trial (no interval)",
            Supported,
            fleet_case(&[], 1, flat, 0.05, p99_below(25.0), &[]),
        ),
        case(
            "invalid trial left out",
            "p99 = 14.9 ms; trial 2 (invalid) at 149 ms; bound 25 ms",
            Supported,
            fleet_case(&[], 6, flat, 0.05, p99_below(25.0), &[2]),
        ),
        case(
            "phase comparison",
            "latency × 3 during the anomaly, claim > 2 × before",
            Supported,
            phase_case(3.0),
        ),
        case(
            "all shards read",
            "10 % of rows at 40 ms, in shard 1 only; p99 < 12 ms",
            Refuted,
            sharded_case(),
        ),
    ]
}

fn cases() -> Vec<Case> {
    let mut cases = single_statistic_cases();
    cases.extend(comparison_cases());
    cases
}

#[test]
fn twenty_cases_of_known_truth() {
    let cases = cases();
    assert_eq!(cases.len(), 20);
    let mut wrong = Vec::new();
    for c in &cases {
        let r = &c.record;
        let p = &r.points[0];
        println!(
            "{:<28} {:<13} expected {:<13} {} [{:?}, {:?}] n={} {} | {}",
            c.name,
            r.verdict.as_str(),
            c.expected.as_str(),
            p.estimate.unwrap_or(f64::NAN),
            p.low,
            p.high,
            p.repetitions,
            p.method,
            c.truth
        );
        if r.verdict != c.expected {
            wrong.push(c.name);
        }
        for p in r.points.iter().filter(|p| p.verdict == Supported) {
            if let (Some((op, bound)), Some(low), Some(high)) = (margin(c.name), p.low, p.high) {
                assert!(
                    op.holds(low, bound) && op.holds(high, bound),
                    "{}: supported across the margin",
                    c.name
                );
            }
            if p.low.is_none() && p.quantity.starts_with("p99") {
                assert!(p.no_interval, "{}: a verdict without interval says so", c.name);
            }
        }
    }
    assert!(wrong.len() <= 1, "wrong verdicts: {wrong:?}");
    let by_name = |name: &str| &cases.iter().find(|c| c.name == name).unwrap().record;
    assert!(by_name("one repetition").points[0].no_interval);
    assert_eq!(
        by_name("invalid trial left out").left_out.as_deref(),
        Some("1 invalid trial (V0101 ×1)")
    );
    assert_eq!(by_name("invalid trial left out").points[0].repetitions, 5);
}

#[test]
fn invalid_trials_count_when_asked_and_verdicts_repeat() {
    let plan = plan(&[], 3, vec![p99_below(25.0)]);
    let mut rng = Rng::new(1);
    let tables = (0..3)
        .map(|t| {
            messages(
                t,
                fleet_trial(&mut rng, 100, if t == 1 { 100.0 * MS } else { 10.0 * MS }, 1.0),
            )
        })
        .collect();
    let root = tempfile::tempdir().unwrap();
    let dir = run_dir(root.path(), &plan, tables, &[1]);
    let left_out = evaluate_dir(&dir, Options::default()).unwrap();
    assert_eq!(left_out.claims[0].verdict, Supported);
    let included = evaluate_dir(&dir, Options { include_invalid: true }).unwrap();
    assert_eq!(included.claims[0].left_out, None);
    assert_eq!(included.claims[0].points[0].repetitions, 3);
    assert_ne!(
        included.claims[0].verdict, Supported,
        "a trial at 10 × the latency widens the interval past 25 ms"
    );
    // The same tables give the same verdicts, bootstrap included (seeded by the plan).
    assert_eq!(evaluate_dir(&dir, Options::default()).unwrap(), left_out);
}
