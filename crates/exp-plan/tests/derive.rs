//! Points and trials derived from a compact plan, and reading plans back.
#![allow(clippy::unwrap_used)]

use exp_plan::*;

fn value(label: &str, v: i64) -> PointValue {
    PointValue {
        label: label.into(),
        value: Value::Int(v),
    }
}

fn parameter(name: &str, values: &[i64]) -> Parameter {
    Parameter {
        name: name.into(),
        ty: "int".into(),
        values: Values::Listed(values.iter().map(|&v| value(&v.to_string(), v)).collect()),
    }
}

fn int_range(start: f64, step: f64, count: u64) -> Values {
    Values::Range(ValueRange {
        start,
        step,
        count,
        unit: RangeUnit::Int,
    })
}

/// A cpuoccupy anomaly at `utilization` with the given window end.
fn hog(name: &str, utilization: f64, end_ns: Option<u64>) -> Workload {
    Workload {
        name: name.into(),
        origin: Origin {
            file: "x.exp".into(),
            line: 1,
            column: 1,
        },
        window: Window {
            start_ns: 0,
            end_ns,
            period: None,
        },
        shard: Shard {
            unit: "instances".into(),
            count: None,
        },
        config: WorkloadConfig::Anomaly(Box::new(Anomaly {
            cores: vec![0],
            params: AnomalyParams::Cpuoccupy {
                utilization_ratio: utilization,
            },
        })),
    }
}

/// `a` (3 values) × `b` (2 values), 2 repetitions: 6 points, 12 trials.
/// `swept` names `b`, `fixed` names nothing, the monitor names `a`.
fn plan() -> Plan {
    Plan {
        plan_version: PLAN_VERSION,
        compiler: "expc test".into(),
        source: Source {
            root: "x.exp".into(),
            sha256: String::new(),
            files: Vec::new(),
        },
        experiment: Experiment {
            name: "x".into(),
            description: String::new(),
            seed: 42,
            duration_ns: None,
            pause_ns: 0,
        },
        repeat: Repeat {
            max: 2,
            stop: None,
            order: exp_plan::Order::Sequential,
            until_decided: None,
        },
        parameters: vec![parameter("a", &[1, 2, 3]), parameter("b", &[10, 20])],
        workloads: vec![
            Variants {
                parameters: vec!["b".into()],
                variants: vec![hog("swept", 0.1, Some(5)), hog("swept", 0.2, Some(7))],
                fields: Vec::new(),
            },
            Variants {
                parameters: Vec::new(),
                variants: vec![hog("fixed", 0.5, Some(6))],
                fields: Vec::new(),
            },
        ],
        monitor: Some(Variants {
            parameters: vec!["a".into()],
            variants: [1, 2, 3]
                .map(|s| Monitor {
                    interval_ns: s,
                    per_cpu: false,
                    processes: false,
                })
                .to_vec(),
            fields: Vec::new(),
        }),
        claims: Vec::new(),
    }
}

/// `fixed` with its load as a field over `a`: 0.3, 0.4, 0.5.
fn with_field() -> Plan {
    let mut plan = plan();
    plan.workloads[1].variants = vec![hog("fixed", 0.3, Some(6))];
    plan.workloads[1].fields.push(Field {
        pointers: vec!["/config/anomaly/params/cpuoccupy/utilization_ratio".into()],
        parameters: vec!["a".into()],
        values: vec![0.3.into(), 0.4.into(), 0.5.into()],
    });
    plan
}

#[test]
fn points_are_the_mixed_radix_of_the_values_first_parameter_outermost() {
    let plan = plan();
    plan.validate().unwrap();
    assert_eq!((plan.point_count(), plan.trial_count()), (6, 12));
    let all: Vec<Vec<usize>> = (0..6).map(|p| plan.value_indices(p).unwrap()).collect();
    assert_eq!(
        all,
        vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1], vec![2, 0], vec![2, 1]]
    );
    assert_eq!(plan.value_indices(6), None);
    assert_eq!(plan.point_at(&[2, 0]), Some(4));
    assert_eq!(plan.point_at(&[3, 0]), None);

    let point = plan.point(3).unwrap();
    assert_eq!(point.index, 3);
    assert_eq!(point.values["a"], value("2", 2));
    assert_eq!(point.values["b"], value("20", 20));
    assert_eq!(
        point.workloads,
        vec![hog("swept", 0.2, Some(7)), hog("fixed", 0.5, Some(6))]
    );
    assert_eq!(point.monitor.map(|m| m.interval_ns), Some(2));
    assert_eq!(plan.sweep_label(3), "a=2, b=20");
    assert_eq!(plan.workload_at(0, 4).as_deref(), Some(&hog("swept", 0.1, Some(5))));
    assert!(plan.point(6).is_none());
}

#[test]
fn a_field_sets_its_value_at_each_point_and_costs_a_value_not_a_variant() {
    let plan = with_field();
    plan.validate().unwrap();
    let loads: Vec<f64> = (0..6)
        .map(|p| match &plan.workload_at(1, p).unwrap().config {
            WorkloadConfig::Anomaly(a) => match a.params {
                AnomalyParams::Cpuoccupy { utilization_ratio } => utilization_ratio,
                _ => unreachable!(),
            },
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(loads, vec![0.3, 0.3, 0.4, 0.4, 0.5, 0.5]);
    assert_eq!(plan.point(5).unwrap().workloads[1], hog("fixed", 0.5, Some(6)));
    // The variant and each further value of the field, once each.
    let distinct: Vec<Workload> = plan.workloads[1]
        .each_distinct()
        .map(|w| w.unwrap().into_owned())
        .collect();
    assert_eq!(
        distinct,
        vec![
            hog("fixed", 0.3, Some(6)),
            hog("fixed", 0.4, Some(6)),
            hog("fixed", 0.5, Some(6))
        ]
    );
    let json = serde_json::to_vec(&plan).unwrap();
    assert_eq!(Plan::from_json(&json).unwrap(), plan);
    // The field's values read by property, without a workload each.
    let pointer = "/config/anomaly/params/cpuoccupy/utilization_ratio";
    let values: Vec<f64> = plan.workloads[1]
        .field_values(pointer)
        .filter_map(|v| v.as_f64())
        .collect();
    assert_eq!(values, vec![0.3, 0.4, 0.5]);
    assert_eq!(plan.workloads[1].field_values("/config/anomaly/cores").count(), 0);
}

#[test]
fn a_field_value_that_does_not_fit_is_found_by_each_distinct() {
    let mut plan = with_field();
    plan.workloads[1].fields[0].values[2] = "lots".into();
    plan.validate().unwrap();
    assert!(plan.workload_at(1, 4).is_none());
    let problems: Vec<String> = plan.workloads[1]
        .each_distinct()
        .filter_map(|v| v.err().map(|e| e.to_string()))
        .collect();
    assert_eq!(
        problems,
        vec!["field `/config/anomaly/params/cpuoccupy/utilization_ratio` value 2 does not fit the property"]
    );
}

#[test]
fn trials_are_point_major_with_derived_seeds() {
    let plan = plan();
    let trial = plan.trial(7).unwrap();
    let seed = seeds::derive(42, "trial/3/1");
    assert_eq!(
        (trial.trial, trial.point, trial.repetition, trial.seed),
        (7, 3, 1, seed)
    );
    let names: Vec<(&str, u64)> = trial.seeds.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        names,
        vec![
            ("fixed", seeds::derive(seed, "fixed")),
            ("swept", seeds::derive(seed, "swept"))
        ]
    );
    assert!(plan.trial(12).is_none());
    let order: Vec<(u32, u32)> = plan.trials().map(|t| (t.point, t.repetition)).collect();
    assert_eq!(order.len(), 12);
    assert_eq!(&order[..4], &[(0, 0), (0, 1), (1, 0), (1, 1)]);
    assert_eq!(plan.point_trials(5), 10..12);
    assert_eq!(plan.point_trials(6), 0..0);
}

#[test]
fn a_trials_duration_is_the_experiments_or_its_latest_window_end() {
    let mut plan = plan();
    // Point 1 (b = 20): windows end at 7 and 6.
    assert_eq!(plan.trial_duration_ns(2), Some(7));
    assert_eq!(plan.trial_duration_ns(0), Some(6));
    plan.workloads[1].variants[0].window.end_ns = None;
    assert_eq!(plan.trial_duration_ns(0), None, "a workload without an end");
    plan.experiment.duration_ns = Some(60);
    assert_eq!(plan.trial_duration_ns(0), Some(60));
    assert_eq!(plan.trial_duration_ns(12), None);
}

#[test]
fn combinations_vary_only_the_named_parameters() {
    let plan = plan();
    let b: Vec<Vec<usize>> = plan.combinations(&["b"]).collect();
    assert_eq!(b, vec![vec![0, 0], vec![0, 1]]);
    assert_eq!(plan.combinations(&["a", "b"]).count(), 6);
    assert_eq!(plan.combinations(&[]).count(), 1);
}

#[test]
fn a_plan_reads_back_and_other_versions_are_refused() {
    let plan = plan();
    let json = serde_json::to_vec_pretty(&plan).unwrap();
    assert_eq!(Plan::from_json(&json).unwrap(), plan);

    let mut old = serde_json::to_value(&plan).unwrap();
    old["plan_version"] = 1.into();
    old["points"] = serde_json::json!([]);
    let error = Plan::from_json(old.to_string().as_bytes()).unwrap_err();
    assert!(
        matches!(
            error,
            PlanError::Version {
                found: 1,
                supported: PLAN_VERSION
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("plan version 1"), "{error}");

    let error = Plan::from_json(b"{\"points\": []}").unwrap_err();
    assert!(error.to_string().contains("plan_version"), "{error}");
}

#[test]
fn inconsistent_plans_are_refused_with_the_reason() {
    type Break = fn(&mut Plan);
    let cases: [(&str, Break); 13] = [
        ("has 1 variants where its parameters have 2 combinations", |p| {
            p.workloads[0].variants.pop();
        }),
        ("names an unknown parameter `c`", |p| {
            p.workloads[1].parameters.push("c".into());
        }),
        ("out of the plan's order", |p| {
            let monitor = p.monitor.as_mut().unwrap();
            monitor.parameters = vec!["b".into(), "a".into()];
            monitor.variants.extend(monitor.variants.clone());
        }),
        ("named both `swept` and `other`", |p| {
            p.workloads[0].variants[1].name = "other".into();
        }),
        ("two workloads are named `fixed`", |p| {
            p.workloads[0].variants.iter_mut().for_each(|v| v.name = "fixed".into());
        }),
        ("parameter `a` has no values", |p| {
            p.parameters[0].values = Values::Listed(Vec::new())
        }),
        ("parameter `a`: the range's step 0 is not a positive number", |p| {
            p.parameters[0].values = int_range(1.0, 0.0, 3);
        }),
        ("parameter `a`: the range's values are not all finite", |p| {
            p.parameters[0].values = int_range(1.0, f64::MAX, 3);
        }),
        ("outside what its unit holds", |p| {
            p.parameters[0].values = int_range(1.0, 1e19, 3);
        }),
        ("more than 1000000 trials", |p| p.repeat.max = 500_000),
        ("has 2 values where its parameters have 3 combinations", |p| {
            p.workloads[1].fields[0].values.pop();
        }),
        ("field `/config/anomaly/cores/7` names no property", |p| {
            p.workloads[1].fields[0].pointers.push("/config/anomaly/cores/7".into());
        }),
        ("replaces what a field never does", |p| {
            p.workloads[1].fields[0].pointers = vec!["/window/start_ns".into()];
        }),
    ];
    for (reason, break_it) in cases {
        let mut plan = with_field();
        break_it(&mut plan);
        let error = plan.validate().unwrap_err().to_string();
        assert!(error.contains(reason), "expected `{reason}`, got `{error}`");
        let json = serde_json::to_vec(&plan).unwrap();
        assert!(Plan::from_json(&json).is_err(), "{reason}");
    }
}

#[test]
fn a_snapshot_reads_back_and_a_diff_says_what_changed_where() {
    let snapshot = snapshot::to_snapshot(&plan());
    assert!(snapshot.get("compiler").is_none() && snapshot.get("source").is_none());
    assert!(!snapshot.to_string().contains("origin"), "{snapshot}");
    assert_eq!(snapshot::from_snapshot(&snapshot).unwrap().trial_count(), 12);

    // `swept` changes where b = 20 only, `fixed` everywhere; and the pause.
    let mut new = plan();
    new.workloads[0].variants[1] = hog("swept", 0.25, Some(7));
    new.workloads[1].variants[0] = hog("fixed", 0.6, Some(6));
    new.experiment.pause_ns = 5;
    let diff = diff::diff_snapshots(&snapshot, &snapshot::to_snapshot(&new));
    let property = |workload: &str| {
        diff.changes
            .iter()
            .find_map(|c| match c {
                diff::Change::Property {
                    workload: w,
                    property,
                    old,
                    new,
                    points,
                    ..
                } if w == workload => Some((property.clone(), old.clone(), new.clone(), points.clone())),
                _ => None,
            })
            .unwrap()
    };
    let (path, old, new_value, points) = property("swept");
    assert_eq!(path, "params.cpuoccupy.utilization_ratio");
    assert_eq!((old, new_value), (Some(0.2.into()), Some(0.25.into())));
    assert_eq!(
        points,
        diff::Points::Some(vec!["a=1, b=20".into(), "a=2, b=20".into(), "a=3, b=20".into()])
    );
    assert_eq!(property("fixed").3, diff::Points::Every);
    assert!(diff.changes.contains(&diff::Change::Setting {
        path: "experiment.pause_ns".into(),
        old: Some(0.into()),
        new: Some(5.into()),
    }));
    // A field's values are compared like a variant's, point by point: 0.5
    // becomes 0.3 where a = 1 and 0.4 where a = 2 (a = 3 keeps 0.5).
    let diff = diff::diff_snapshots(&snapshot::to_snapshot(&plan()), &snapshot::to_snapshot(&with_field()));
    let fixed: Vec<(Option<serde_json::Value>, diff::Points)> = diff
        .changes
        .iter()
        .filter_map(|c| match c {
            diff::Change::Property {
                workload, new, points, ..
            } if workload == "fixed" => Some((new.clone(), points.clone())),
            _ => None,
        })
        .collect();
    let at = |a: i64| diff::Points::Some(vec![format!("a={a}, b=10"), format!("a={a}, b=20")]);
    assert_eq!(fixed, [(Some(0.3.into()), at(1)), (Some(0.4.into()), at(2))]);
}

#[test]
fn trials_run_in_the_plans_order_and_keep_their_numbers_and_seeds() {
    use exp_plan::Order;
    let mut plan = plan();
    let seeds: Vec<u64> = plan.trials().map(|t| t.seed).collect();
    assert_eq!(plan.run_order(), (0..12).collect::<Vec<u32>>());
    plan.repeat.order = Order::Interleaved;
    // Round 0 runs repetition 0 of points 0..6 (trials 0, 2, …), round 1 repetition 1.
    assert_eq!(plan.run_order(), vec![0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]);
    plan.repeat.order = Order::Randomized;
    let order = plan.run_order();
    // Pinned: a change here reorders every randomized run.
    assert_eq!(order, vec![2, 10, 4, 8, 6, 0, 1, 11, 3, 7, 9, 5]);
    let (first, second) = order.split_at(6);
    assert!(first.iter().all(|t| t % 2 == 0) && second.iter().all(|t| t % 2 == 1));
    assert_ne!(
        first.iter().map(|t| t / 2).collect::<Vec<_>>(),
        second.iter().map(|t| t / 2).collect::<Vec<_>>()
    );
    assert_eq!(plan.run_order(), order, "seeded: the same plan, the same order");
    assert_eq!(plan.trials().map(|t| t.seed).collect::<Vec<_>>(), seeds);
    plan.experiment.seed += 1;
    assert_ne!(plan.run_order(), order, "another seed, another order");
    // The order is stated in the plan and read back.
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(json["repeat"]["order"], "randomized");
    let mut old = json.clone();
    old["repeat"].as_object_mut().unwrap().remove("order");
    let old: Plan = serde_json::from_value(old).unwrap();
    assert_eq!(
        old.repeat.order,
        Order::Sequential,
        "a plan without an order ran sequentially"
    );
}
