//! Claims lowered into the plan: every form, units in base units, the
//! text as `expc fmt` writes it, and plans without claims unchanged.
#![allow(clippy::unwrap_used)]

mod common;

use common::plan_of;
use exp_plan::claims::{ClaimKind, CmpOp, Direction, PhaseRelation, StatFn, Term};
use exp_plan::{Plan, Unit, Value};

const BASE: &str = r#"
experiment "x" {
  duration = 60s
  REPEAT
  sweep {
    gap = [50ms, 100ms, 200ms]
  }
  fleet "f" {
    devices = 10
    gap     = gap
  }
  anomaly "hog" {
    kind = cpuoccupy
    at   = 10s
    for  = 10s
  }
  xml "set" {
    corpus    = "corpus/"
    documents = 10
  }
  CLAIMS
}
"#;

fn spec(repeat: &str, claims: &str) -> String {
    BASE.replace("REPEAT", repeat).replace("CLAIMS", claims)
}

fn stat_of(term: &Term) -> &exp_plan::claims::Stat {
    match term {
        Term::Scaled { stat, .. } => stat,
        Term::Constant { .. } => panic!("a constant: {term:?}"),
    }
}

/// A plan with a claim of every form.
fn every_form() -> Plan {
    plan_of(&spec(
        "repeat = until_decided(max = 12)",
        r#"expect "all" {
    p999(f.ack_latency)<25ms abort
    share(fleet.f.send_lateness <= 2ms) >= 99.5%
    mean(ack_latency during hog) > 1.5*mean(ack_latency after hog)
    min(ack_latency at gap = 100ms) <= max(ack_latency at gap = 50ms)
    median(ack_latency) decreases with gap
    median(ack_latency) within 10% of 3ms
    max_ks(xml.set) < 0.1
    value(f.throughput) >= 50/s
  }"#,
    ))
}

fn compare(claim: &exp_plan::claims::Claim) -> (&Term, CmpOp, &Term) {
    match &claim.kind {
        ClaimKind::Compare { left, op, right } => (left, *op, right),
        other => panic!("not a comparison: {other:?}"),
    }
}

#[test]
fn thresholds_are_lowered_in_base_units() {
    let plan = every_form();
    assert_eq!(plan.repeat.max, 12);
    assert_eq!(plan.repeat.until_decided.as_ref().map(|d| d.min), Some(3));
    let claims = &plan.claims;
    assert_eq!(claims.len(), 8);
    assert!(claims.iter().all(|c| c.group.as_deref() == Some("all")));
    assert_eq!(claims[0].text, "p999(f.ack_latency) < 25ms abort");
    assert_eq!((claims[0].origin.line, claims[0].origin.column), (22, 5));
    assert_eq!(claims[0].abort.as_ref().map(|a| a.grace_ns), Some(1_000_000_000));

    let (left, op, right) = compare(&claims[0]);
    let stat = stat_of(left);
    assert_eq!(stat.function, StatFn::Quantile { q: 0.999 });
    assert_eq!(
        (stat.workload.as_str(), stat.kind.as_str(), stat.unit),
        ("f", "fleet", Unit::Ns)
    );
    assert_eq!(op, CmpOp::Lt);
    assert_eq!(
        *right,
        Term::Constant {
            value: 25e6,
            unit: Unit::Ns,
            time_scaled: false
        }
    );

    let (left, _, right) = compare(&claims[1]);
    assert_eq!(
        stat_of(left).function,
        StatFn::Share {
            op: CmpOp::Le,
            threshold: 2e6
        }
    );
    assert_eq!(stat_of(left).unit, Unit::Ratio);
    assert_eq!(
        *right,
        Term::Constant {
            value: 0.995,
            unit: Unit::Ratio,
            time_scaled: false
        }
    );

    let (left, _, _) = compare(&claims[6]);
    assert_eq!(
        (stat_of(left).function.clone(), stat_of(left).metric.as_str()),
        (StatFn::MaxKs, "")
    );

    let (left, _, right) = compare(&claims[7]);
    assert_eq!(
        (stat_of(left).function.clone(), stat_of(left).unit),
        (StatFn::Value, Unit::PerS)
    );
    assert_eq!(
        *right,
        Term::Constant {
            value: 50.0,
            unit: Unit::PerS,
            time_scaled: false
        }
    );
}

#[test]
fn comparisons_trends_and_within_are_lowered() {
    let claims = every_form().claims;
    assert_eq!(
        claims[2].text,
        "mean(ack_latency during hog) > 1.5 * mean(ack_latency after hog)"
    );
    let (left, _, right) = compare(&claims[2]);
    assert_eq!(
        stat_of(left).phase.as_ref().map(|p| p.relation),
        Some(PhaseRelation::During)
    );
    let Term::Scaled { factor, stat } = right else {
        panic!("{right:?}")
    };
    assert_eq!(
        (*factor, stat.phase.as_ref().map(|p| p.anomaly.as_str())),
        (1.5, Some("hog"))
    );

    let (left, _, _) = compare(&claims[3]);
    let (parameter, point) = &stat_of(left).points[0];
    assert_eq!(
        (parameter.as_str(), &point.value),
        ("gap", &Value::DurationNs(100_000_000))
    );

    let ClaimKind::Trend {
        direction, parameter, ..
    } = &claims[4].kind
    else {
        panic!()
    };
    assert_eq!((*direction, parameter.as_str()), (Direction::Decreases, "gap"));

    let ClaimKind::Within {
        tolerance_ratio, right, ..
    } = &claims[5].kind
    else {
        panic!()
    };
    assert_eq!(
        (*tolerance_ratio, right),
        (
            0.1,
            &Term::Constant {
                value: 3e6,
                unit: Unit::Ns,
                time_scaled: false
            }
        )
    );
}

#[test]
fn a_plan_without_claims_has_no_trace_of_them() {
    let plan = plan_of(&spec("repeat = 2", ""));
    let json = serde_json::to_string(&plan).unwrap();
    assert!(plan.claims.is_empty());
    assert!(!json.contains("claims") && !json.contains("until_decided"), "{json}");
}

#[test]
fn claims_of_a_plan_survive_writing_and_reading_back() {
    let plan = plan_of(&spec(
        "repeat = 3",
        "expect {\n    p99(ack_latency during hog) > 2 * p99(ack_latency before hog)\n  }",
    ));
    let json = serde_json::to_string(&plan).unwrap();
    let back: Plan = serde_json::from_str(&json).unwrap();
    assert_eq!(back.claims, plan.claims);
    assert_eq!(back.claims[0].group, None);
}

#[test]
fn a_claim_with_an_unknown_field_is_refused() {
    let plan = plan_of(&spec("repeat = 3", "expect {\n    loss(f) == 0\n  }"));
    let mut json = serde_json::to_value(&plan).unwrap();
    json["claims"][0]["surprise"] = serde_json::json!(1);
    let read = serde_json::from_value::<Plan>(json);
    assert!(read.is_err(), "{read:?}");
}

#[test]
fn a_label_that_is_not_a_name_is_quoted() {
    let text = spec(
        "repeat = 2",
        "expect {\n    p99(\"f\".ack_latency during \"hog\") < 1s\n  }",
    )
    .replace("fleet \"f\"", "fleet \"f-1\"")
    .replace("\"f\".", "fleet.\"f-1\".");
    let plan = plan_of(&text);
    assert_eq!(plan.claims[0].text, "p99(fleet.\"f-1\".ack_latency during hog) < 1s");
    let ClaimKind::Compare { left, .. } = &plan.claims[0].kind else {
        panic!()
    };
    assert_eq!(stat_of(left).workload, "f-1");
}

#[test]
fn monitor_metrics_spreads_and_scaled_constants_are_lowered() {
    let source = BASE.replace("REPEAT", "repeat = 3").replace(
        "CLAIMS",
        r#"traffic "bulk" {
    vectors = synthetic(connections = 1, arrival = constant(0s), epochs = 0, request = 64B, response = 1TB)
    every   = 5s
    active  = 1s
  }
  monitor {
    interval = 500ms
  }
  expect {
    mean(monitor.cpu_user_pct during hog) > 2 * mean(cpu_user_pct before hog)
    min(monitor.net_rx_bytes_per_s) > 1MB/s
    cv(traffic.bulk.window_throughput) < 10%
    max_over_min(bulk.window_throughput) < 1.5
    range(window_throughput) < 1Gbit/s
    median(anomaly.hog.cpu_time) within 20% of scaled(10s)
  }"#,
    );
    let plan = plan_of(&source);
    let claims = &plan.claims;
    let (left, _, right) = compare(&claims[0]);
    let (during, before) = (stat_of(left), stat_of(right));
    assert_eq!(
        (
            during.kind.as_str(),
            during.workload.as_str(),
            during.metric.as_str(),
            during.unit
        ),
        ("monitor", "monitor", "cpu_user_pct", Unit::Ratio)
    );
    assert_eq!(before.metric, "cpu_user_pct", "a bare name finds the monitor's column");
    assert_eq!(before.phase.as_ref().map(|p| p.relation), Some(PhaseRelation::Before));
    let (left, _, right) = compare(&claims[1]);
    assert_eq!(stat_of(left).unit, Unit::BitPerS, "bytes/s is a bandwidth");
    assert!(matches!(right, Term::Constant { value, .. } if *value == 8e6));
    let spreads: Vec<(StatFn, Unit)> = claims[2..5]
        .iter()
        .map(|c| {
            let stat = stat_of(compare(c).0);
            assert_eq!(
                (stat.kind.as_str(), stat.metric.as_str()),
                ("traffic", "window_throughput")
            );
            (stat.function.clone(), stat.unit)
        })
        .collect();
    assert_eq!(
        spreads,
        [
            (StatFn::Cv, Unit::Ratio),
            (StatFn::MaxOverMin, Unit::Count),
            (StatFn::Range, Unit::BitPerS)
        ]
    );
    let ClaimKind::Within { right, .. } = &claims[5].kind else {
        panic!("{:?}", claims[5]);
    };
    assert_eq!(
        *right,
        Term::Constant {
            value: 10e9,
            unit: Unit::Ns,
            time_scaled: true
        }
    );
    assert_eq!(claims[5].text, "median(anomaly.hog.cpu_time) within 20% of scaled(10s)");
}
