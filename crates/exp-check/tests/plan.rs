//! The compact plan: variants per combination of the parameters a block
//! names, trials and seeds derived exactly as the expanded plan listed them,
//! the trial count checked before anything is lowered.
#![allow(clippy::unwrap_used)]

mod common;

use std::fmt::Write;

use common::{compile_text, plan_of};
use exp_check::{compile, FsLoader, Options};
use exp_diagnostics::Code;
use exp_plan::{AnomalyParams, RangeUnit, Values, WorkloadConfig};

const SWEEP: &str = r#"
experiment "x" {
  duration = 60s
  repeat   = REPEAT
  sweep {
    devices = [10, 20, 40]
    level   = [10%, 20%]
    unused  = [1, 2]
  }
  fleet "f" {
    devices = devices
    gap     = 100ms
  }
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = level
    at          = 1s
    for         = 10s
  }
  monitor {}
}
"#;

#[test]
fn each_block_is_lowered_once_per_combination_of_the_parameters_it_names() {
    let compilation = compile_text(&SWEEP.replace("REPEAT", "4"));
    let warnings: Vec<_> = compilation.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(warnings, vec![Code::W0801], "`unused` is unused");
    let plan = compilation.plan.unwrap();
    assert_eq!((plan.point_count(), plan.trial_count()), (12, 48));
    // The fleet's `devices` is a field (and, as its shard unit, the shard
    // count): one variant; the anomaly has a variant per level.
    type Shape<'p> = (Vec<String>, usize, Vec<(&'p str, usize)>);
    let shape: Vec<Shape> = plan
        .workloads
        .iter()
        .map(|w| {
            let fields = w.fields.iter().map(|f| (f.name(), f.values.len())).collect();
            (w.parameters.clone(), w.variants.len(), fields)
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            (vec![], 1, vec![("/config/fleet/devices", 3)]),
            (vec!["level".to_string()], 2, vec![])
        ]
    );
    let monitor = plan.monitor.as_ref().unwrap();
    assert!(monitor.parameters.is_empty() && monitor.variants.len() == 1);

    // Point 9 = devices 40 (index 2), level 10 % (0), unused 2 (1).
    let point = plan.point(9).unwrap();
    assert_eq!(point.values["devices"].label, "40");
    assert_eq!(point.values["level"].label, "10%");
    assert_eq!(point.values["unused"].label, "2");
    let WorkloadConfig::Fleet(fleet) = &point.workloads[0].config else {
        panic!("a fleet")
    };
    assert_eq!(fleet.devices, 40);
    let WorkloadConfig::Anomaly(hog) = &point.workloads[1].config else {
        panic!("an anomaly")
    };
    assert_eq!(hog.params, AnomalyParams::Cpuoccupy { utilization_ratio: 0.1 });
}

#[test]
fn repetitions_change_only_the_count_and_the_default_order() {
    let one = serde_json::to_value(plan_of(&SWEEP.replace("REPEAT", "1").replace("unused  = [1, 2]", ""))).unwrap();
    let many = plan_of(&SWEEP.replace("REPEAT", "1000").replace("unused  = [1, 2]", ""));
    assert_eq!(many.trial_count(), 6000);
    let mut many = serde_json::to_value(many).unwrap();
    many["repeat"]["max"] = 1.into();
    // Several points repeated run in randomized rounds; once each, in point order.
    assert_eq!(
        (&one["repeat"]["order"], &many["repeat"]["order"]),
        (&"sequential".into(), &"randomized".into())
    );
    many["repeat"]["order"] = "sequential".into();
    // The source hashes differ with the text; everything else is identical.
    many["source"] = one["source"].clone();
    assert_eq!(one, many);
}

/// Seeds of `examples/02-sweep-and-repeat.exp` as plan version 1 listed them
/// (trial, point, repetition, seed, the fleet's seed): derived trials must
/// keep every seed.
#[test]
fn derived_seeds_are_those_the_expanded_plan_listed() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let path = format!("{manifest}/../../examples/02-sweep-and-repeat.exp");
    let compilation = compile(&path, &FsLoader, &Options::default());
    let plan = compilation.plan.unwrap();
    assert_eq!(plan.trial_count(), 240);
    let listed: [(u32, u32, u32, u64, u64); 3] = [
        (163, 8, 3, 3352719020426523375, 15439954555952315721),
        (180, 9, 0, 9877635692411424388, 9866293944870286045),
        (239, 11, 19, 15650360071710067832, 2901030326864706558),
    ];
    for (index, point, repetition, seed, sensors) in listed {
        let trial = plan.trial(index).unwrap();
        assert_eq!((trial.point, trial.repetition, trial.seed), (point, repetition, seed));
        assert_eq!(trial.seeds["sensors"], sensors);
    }
}

#[test]
fn the_trial_count_is_checked_before_anything_is_lowered() {
    // 100^10 points: more than a u64 counts, and far more than memory holds.
    let mut sweep = String::new();
    for p in 0..10 {
        let values: Vec<String> = (0..100).map(|v| v.to_string()).collect();
        let _ = writeln!(sweep, "    p{p} = [{}]", values.join(", "));
    }
    let text = format!(
        "experiment \"x\" {{\n  duration = 1s\n  sweep {{\n{sweep}  }}\n  fleet \"f\" {{\n    devices = p0\n    gap = 100ms\n  }}\n}}\n"
    );
    let compilation = compile_text(&text);
    let messages: Vec<_> = compilation
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::E0704)
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(
        messages,
        vec!["the experiment has 1e20 trials, more than 1,000,000".to_string()]
    );
    assert!(compilation.plan.is_none());
}

#[test]
fn overlapping_cpuoccupy_is_found_at_the_combinations_where_it_happens() {
    let spec = |levels: &str| {
        format!(
            r#"
experiment "x" {{
  duration = 60s
  sweep {{
    other = [1, 2, 3]
    level = [{levels}]
  }}
  fleet "f" {{
    devices = other
    gap     = 100ms
  }}
  anomaly "first" {{
    kind        = cpuoccupy
    cores       = [0]
    utilization = level
    at          = 0s
    for         = 30s
  }}
  anomaly "second" {{
    kind        = cpuoccupy
    cores       = [0]
    utilization = 50%
    at          = 20s
    for         = 30s
  }}
}}
"#
        )
    };
    let overlapping = compile_text(&spec("20%, 80%"));
    let found: Vec<_> = overlapping
        .diagnostics
        .iter()
        .map(|d| (d.code, d.message.clone(), d.notes.clone()))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Code::E0602);
    // The anomaly that started last is named first; the note names the
    // values of the parameters the anomalies name, not the fleet's.
    assert_eq!(found[0].1, "anomalies \"second\" and \"first\" overlap on core 0");
    assert_eq!(
        found[0].2,
        vec![
            "at 20s, together they ask for 130% of the core".to_string(),
            "at the sweep point level = 80%".to_string()
        ]
    );
    assert!(compile_text(&spec("20%, 50%")).diagnostics.is_empty());
}

/// 100,000 cpuoccupy anomalies at 1 % each on core 0 ask for 1,000 cores'
/// worth of it: refused (pairwise, no two of them exceeded the core). (The
/// same count at 0.001 % each, exactly one core, is accepted: the
/// `check_overlaps` bench compiles it.)
#[test]
fn a_hundred_thousand_small_anomalies_overload_a_core_together() {
    let mut spec = String::from("experiment \"many\" {\n  duration = 60s\n");
    for i in 0..100_000 {
        spec.push_str(&format!(
            "  anomaly \"a{i}\" {{ kind = cpuoccupy  cores = [0]  utilization = 1%  at = 0s  for = 30s }}\n"
        ));
    }
    let refused = compile_text(&(spec + "}\n"));
    let found: Vec<_> = refused
        .diagnostics
        .iter()
        .map(|d| (d.code, d.message.clone()))
        .collect();
    assert_eq!(
        found,
        vec![(
            Code::E0602,
            "anomalies \"a99999\", \"a99998\", \"a99997\", \"a99996\" and 99,996 more overlap on core 0".to_string()
        )]
    );
    assert_eq!(
        refused.diagnostics[0].notes,
        vec!["at 0s, together they ask for 100000% of the core".to_string()]
    );
    assert!(refused.plan.is_none());
}

/// The plan reader and the compiler's limits table state the same maximum.
#[test]
fn one_trial_limit() {
    assert_eq!(exp_plan::MAX_TRIALS, exp_diagnostics::limits::MAX_TRIALS);
}

/// Every point's workloads, made from variants and fields, are those of the
/// same spec written without a sweep at that point's values.
#[test]
fn fields_and_variants_give_the_workloads_each_point_would_have_alone() {
    let swept = r#"
experiment "x" {
  duration = 60s
  sweep {
    n    = [10, 20]
    g    = [50ms, 1s, 2s]
    size = [128B, 256B]
    q    = [0, 2]
    first = [uniform, lockstep]
  }
  fleet "f" {
    devices    = n
    gap        = exponential(mean = g)
    payload    = json(size = size)
    qos        = q
    first_send = first
  }
}
"#;
    let plan = plan_of(swept);
    let fleet = &plan.workloads[0];
    assert_eq!(
        (fleet.parameters.clone(), fleet.variants.len()),
        (vec!["first".to_string()], 2)
    );
    assert_eq!(
        fleet.fields.len(),
        4,
        "devices (and the shard count), gap, payload, qos"
    );
    for point in 0..plan.point_count() as u32 {
        let values = plan.point(point).unwrap().values;
        let mut alone = swept.to_string();
        for (name, value) in &values {
            alone = alone.replace(&format!("= {name}"), &format!("= {}", value.label));
            alone = alone.replace(&format!("mean = {name}"), &format!("mean = {}", value.label));
            alone = alone.replace(&format!("size = {name}"), &format!("size = {}", value.label));
        }
        let start = alone.find("  sweep {").unwrap();
        let end = start + alone[start..].find("}\n").unwrap() + 2;
        alone.replace_range(start..end, "");
        let expected = plan_of(&alone).point(0).unwrap().workloads;
        let got = plan.point(point).unwrap().workloads;
        let strip = |w: &exp_plan::Workload| (w.config.clone(), w.shard.clone(), w.window.clone());
        assert_eq!(
            got.iter().map(strip).collect::<Vec<_>>(),
            expected.iter().map(strip).collect::<Vec<_>>(),
            "point {point}: {values:?}"
        );
    }
}

/// A million points over two parameters of one fleet: two fields of a
/// thousand values each, not a million variants.
#[test]
fn a_fleet_over_a_million_points_costs_its_values_not_their_product() {
    let plan = plan_of(
        r#"
experiment "x" {
  duration = 60s
  sweep {
    n = 1..1000 step 1
    g = 10ms..10s step 10ms
  }
  fleet "f" {
    devices = n
    gap     = g
  }
}
"#,
    );
    assert_eq!(plan.trial_count(), 1_000_000);
    let fleet = &plan.workloads[0];
    assert_eq!(fleet.variants.len(), 1);
    let values: usize = fleet.fields.iter().map(|f| f.values.len()).sum();
    assert_eq!(values, 2000, "devices (and its shard count), gap");
    let WorkloadConfig::Fleet(last) = &plan.workload_at(0, 999_999).unwrap().config.clone() else {
        panic!("a fleet")
    };
    assert_eq!(last.devices, 1000);
    assert_eq!(plan.workload_at(0, 999_999).unwrap().shard.count, Some(1000));
}

/// A range stays a range in the plan: a million values cost four numbers,
/// and each value and label is what the expanded list held.
#[test]
fn a_range_is_stored_as_its_ends_and_gives_every_value_on_demand() {
    let plan = plan_of(
        r#"
experiment "x" {
  duration = 60s
  sweep {
    n = 1..1000000 step 1
  }
  fleet "f" {
    devices      = n
    connect_rate = 100000/s
    gap          = 1s
  }
}
"#,
    );
    let Values::Range(range) = &plan.parameters[0].values else {
        panic!("a range, not {:?}", plan.parameters[0].values)
    };
    assert_eq!((range.count, range.unit), (1_000_000, RangeUnit::Int));
    assert_eq!(plan.point(999_999).unwrap().values["n"].label, "1000000");
    // The fleet's devices field holds a value per value of `n`; the parameter only its ends.
    let parameter = serde_json::to_string(&plan.parameters[0]).unwrap();
    assert!(parameter.len() < 200, "{parameter}");

    let plan = plan_of(
        r#"
experiment "x" {
  duration = 60s
  sweep {
    gap   = 250ms..2s step 250ms
    level = 10%..30% step 10%
  }
  fleet "f" {
    devices = 1
    gap     = gap
  }
  anomaly "a" {
    kind        = cpuoccupy
    utilization = level
  }
}
"#,
    );
    let labels: Vec<String> = (0..plan.point_count() as u32)
        .map(|p| plan.sweep_label(p))
        .step_by(3)
        .collect();
    assert_eq!(labels.first().map(String::as_str), Some("gap=250ms, level=10%"));
    assert_eq!(labels.last().map(String::as_str), Some("gap=2s, level=10%"));
    assert_eq!(
        plan.point(1).unwrap().values["level"].value,
        exp_plan::Value::Ratio(0.2)
    );
    assert_eq!(
        plan.point(23).unwrap().values["gap"].value,
        exp_plan::Value::DurationNs(2_000_000_000)
    );
}
