//! A plan file is held to the language's bounds: for every property and
//! every function argument the registry bounds (exp-check `registry/`), a
//! compiled plan with that value set just outside its range is refused —
//! by the plan's types when it is read, or by preflight (exp-runtime
//! `plan_limits.rs` and each kind's `check.rs`) with the finding of that
//! very bound — and the plan at the bound itself is not, so a hand-edited
//! plan cannot run what no spec could ask for and the runtime refuses
//! nothing a spec may ask for. Another check refusing the value too (the
//! embedded broker's device limit) does not count: it would hide a runtime
//! copy of the bound that was loosened. The registry is walked, not
//! listed: a new bound is checked the day it is declared (a function gets
//! a place to be called in `call_site`).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::Path;

use exp_check::registry::{self, BlockSchema, Prop, Ty};
use exp_plan::Plan;
use exp_syntax::units::Dimension;
use serde_json::Value;

/// Serves one spec.
struct OneFile(String);

impl exp_check::Loader for OneFile {
    fn read(&self, _: &Path) -> std::io::Result<String> {
        Ok(self.0.clone())
    }
}

/// `value` in the spec's syntax for a property of type `ty`.
fn literal(ty: &Ty, value: f64) -> Option<String> {
    let quantity = |d: &Dimension| match d {
        Dimension::Duration => Some(format!("{value}ns")),
        Dimension::Bytes => Some(format!("{value}B")),
        Dimension::Bandwidth => Some(format!("{value}bit/s")),
        Dimension::Rate => Some(format!("{value}/s")),
        Dimension::Percent => Some(format!("{}%", value * 100.0)),
    };
    match ty {
        Ty::Int => Some(format!("{value}")),
        Ty::Float => Some(format!("{value:?}")),
        Ty::Quantity(d) => quantity(d),
        Ty::List(inner) => literal(inner, value).map(|v| format!("[{v}]")),
        Ty::OneOf([first, ..]) => literal(first, value),
        _ => None,
    }
}

/// A spec with one workload (or part) whose property `prop` is `value`.
fn spec(block: &str, variant: Option<&str>, prop: &str, value: &str) -> String {
    let setting = format!("{prop} = {value}");
    let kind = variant.map(|v| format!("kind = {v}\n")).unwrap_or_default();
    // The properties every block of its kind needs, unless `prop` is one.
    let base = |props: &[(&str, &str)]| -> String {
        props
            .iter()
            .filter(|(name, _)| *name != prop)
            .map(|(name, value)| format!("{name} = {value}\n "))
            .collect()
    };
    // Lockstep: a gap under test may have no mean to spread first sends over.
    let fleet = base(&[("devices", "2"), ("gap", "1s"), ("first_send", "lockstep")]);
    let body = match block {
        "fleet" => format!("fleet \"f\" {{\n {fleet}{setting}\n }}"),
        "broker" => format!("fleet \"f\" {{\n {fleet}broker {{\n {setting}\n }}\n }}"),
        "traffic" => format!(
            "traffic \"t\" {{\n {}{setting}\n }}",
            base(&[(
                "vectors",
                "synthetic(connections = 2, arrival = constant(1ms), epochs = 0, request = 10B, response = 10B)"
            )])
        ),
        "xml" => format!(
            "xml \"x\" {{\n corpus = \"specs/xml/corpus\"\n {}{setting}\n }}",
            base(&[("documents", "2")])
        ),
        "anomaly" => format!("anomaly \"a\" {{\n {kind} {setting}\n }}"),
        "monitor" => format!("monitor {{\n {setting}\n }}"),
        _ => return String::new(),
    };
    format!("experiment \"bounds\" {{\n seed = 1\n duration = 2s\n {body}\n}}\n")
}

/// The first object key under `json` naming `prop` in a plan's units.
fn find_key<'a>(json: &'a mut Value, prop: &str) -> Option<&'a mut Value> {
    let names = ["", "_ns", "_bytes", "_ratio", "_per_s", "_bit_per_s"].map(|s| format!("{prop}{s}"));
    match json {
        Value::Object(map) => {
            if let Some(key) = map.keys().find(|k| names.contains(k)).cloned() {
                return map.get_mut(&key);
            }
            map.values_mut().find_map(|v| find_key(v, prop))
        }
        Value::Array(items) => items.iter_mut().find_map(|v| find_key(v, prop)),
        _ => None,
    }
}

/// Just outside `[min, max]` on one side, as a JSON number like `like`.
fn outside(bound: f64, above: bool, like: &Value) -> Value {
    let integer = like.is_u64() || like.is_i64();
    let step = if integer { 1.0 } else { (bound.abs() * 1e-3).max(1e-3) };
    let x = if above { bound + step } else { bound - step };
    if integer {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

/// Preflight's errors for `plan`.
fn preflight_errors(plan: &Plan) -> Vec<String> {
    let root = repo();
    let issues = exp_runtime::preflight(&exp_runtime::PreflightInput {
        plan,
        out_root: &std::env::temp_dir(),
        force: true,
        spec_dir: &root,
    });
    issues.into_iter().map(|i| i.diagnostic.message).collect()
}

/// The value under `keys` in `json`: each key the first found below the
/// one before.
fn find_path<'a>(json: &'a mut Value, keys: &[&str]) -> Option<&'a mut Value> {
    keys.iter().try_fold(json, |inside, key| find_key(inside, key))
}

/// Whether preflight's `error` is the refusal of `prop`'s own `bound`: it
/// names both. Preflight's out-of-bounds finding names the property by its
/// plan key (`` fleet `f`: `devices` is 1000001, outside 1 to 1000000 ``,
/// `` `payload.size_bytes` `` for a function's argument); the rules an
/// anomaly's child or the MQTT client applies name it in words (`buffer of
/// 4095 bytes is too small: at least 4096 bytes per core`, `QoS 3 is not an
/// MQTT level (0, 1 or 2)`; `message must be positive` for an integer's
/// least value, 1). The embedded broker's device limit names the devices
/// but not their bound, so it alone does not count.
fn names_the_bound(error: &str, prop: &str, bound: f64) -> bool {
    let names_prop = error.to_lowercase().contains(&prop.to_lowercase());
    let names_bound = error
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-'))
        .any(|number| number.parse::<f64>().is_ok_and(|n| n == bound));
    let positive = bound == 1.0 && error.contains(&format!("{prop} must be positive"));
    names_prop && names_bound || positive
}

/// How a plan whose value under `keys` is `bad` is refused: by its types
/// when read, or by the finding of that bound (see [`names_the_bound`]),
/// which the plan at the bound does not have. The plan at the bound must
/// pass preflight's checks of that value.
fn refused(plan: &Plan, keys: &[&str], bound: f64, bad: Value) -> Result<String, String> {
    let prop = keys.last().copied().unwrap_or_default();
    let before = preflight_errors(plan);
    let names_prop = |e: &&String| e.contains(&format!("`{prop}")) || e.contains(&format!(".{prop}"));
    if let Some(error) = before.iter().find(names_prop) {
        return Err(format!("the bound itself is refused by preflight: {error}"));
    }
    let mut json = serde_json::to_value(plan).unwrap();
    let slot = find_path(&mut json, keys).ok_or_else(|| format!("no plan key for `{prop}`"))?;
    *match slot {
        Value::Array(items) => items.first_mut().unwrap(),
        other => other,
    } = bad.clone();
    let changed = match Plan::from_json(&serde_json::to_vec(&json).unwrap()) {
        Err(e) => return Ok(format!("read: {e}")),
        Ok(changed) => changed,
    };
    let after = preflight_errors(&changed);
    let new: Vec<&String> = after.iter().filter(|e| !before.contains(e)).collect();
    match new.iter().find(|e| names_the_bound(e, prop, bound)) {
        Some(e) => Ok(format!("preflight: {e}")),
        None if new.is_empty() => Err(format!("`{prop}` = {bad} passes preflight (errors: {after:?})")),
        None => Err(format!(
            "`{prop}` = {bad} is refused, but not by its bound's finding: {new:?}"
        )),
    }
}

fn repo() -> std::path::PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every bounded property of every workload kind, its variants and parts.
fn bounded() -> Vec<(&'static str, Option<&'static str>, &'static Prop)> {
    let mut out = Vec::new();
    let mut add = |schema: &'static BlockSchema| {
        for prop in schema.props {
            out.push((schema.kind, None, prop));
        }
        for variant in schema.variants {
            for prop in variant.props {
                out.push((schema.kind, Some(variant.name), prop));
            }
        }
    };
    for kind in ["fleet", "broker", "traffic", "xml", "anomaly", "monitor"] {
        add(registry::block(kind).unwrap());
    }
    out.retain(|(_, _, p)| p.min.is_some() || p.max.is_some());
    out
}

#[test]
fn every_registry_bound_is_enforced_on_a_plan_file() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (block, variant, prop) in bounded() {
        let variant = variant.or((block == "anomaly").then_some("cpuoccupy"));
        for (bound, above) in [(prop.max, true), (prop.min, false)] {
            let Some(bound) = bound else { continue };
            let case = format!(
                "{block}{} `{}` {} {bound}",
                variant.map(|v| format!(" {v}")).unwrap_or_default(),
                prop.name,
                if above { ">" } else { "<" }
            );
            let Some(value) = literal(&prop.ty, bound) else {
                failures.push(format!("{case}: no literal for its type"));
                continue;
            };
            let compiled = exp_check::compile(
                "bounds.exp",
                &OneFile(spec(block, variant, prop.name, &value)),
                &exp_check::Options {
                    seed: None,
                    require_experiment: true,
                },
            );
            let Some(plan) = compiled.plan else {
                failures.push(format!(
                    "{case}: the bound itself does not compile: {:?}",
                    compiled.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
                ));
                continue;
            };
            let mut json = serde_json::to_value(&plan).unwrap();
            let like = find_key(&mut json, prop.name).map(|v| match v {
                Value::Array(items) => items[0].clone(),
                v => v.clone(),
            });
            let Some(like) = like else {
                failures.push(format!("{case}: no plan key"));
                continue;
            };
            match refused(&plan, &[prop.name], bound, outside(bound, above, &like)) {
                Ok(_) => checked += 1,
                Err(why) => failures.push(format!("{case}: {why}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} bounds checked; not enforced on a plan file:\n{}",
        checked,
        failures.join("\n")
    );
    assert!(checked > 40, "only {checked} bounds checked");
}

/// Where a function whose arguments the registry bounds is called in a
/// spec: the block, the property it is given to and the plan key the call
/// lowers to. A function with a new bounded argument fails the test below
/// until it has one.
fn call_site(function: &str) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match function {
        "lognormal" | "pareto" | "weibull" | "gamma" => ("fleet", "gap", "gap"),
        "json" => ("fleet", "payload", "json"),
        "synthetic" => ("traffic", "vectors", "synthetic"),
        "paths" => ("traffic", "rtt", "paths"),
        _ => return None,
    })
}

/// A value of type `ty` that any bound of the registry's functions accepts,
/// for the arguments a call needs besides the one under test.
fn valid(ty: &Ty) -> Option<&'static str> {
    Some(match ty {
        Ty::Int => "1",
        Ty::Float => "1.0",
        Ty::Quantity(Dimension::Bytes) | Ty::Dist(Some(Dimension::Bytes)) => "256B",
        // A gap's mean stays above 1 ms whatever shape is under test.
        Ty::Quantity(Dimension::Duration) | Ty::Dist(Some(Dimension::Duration)) | Ty::Dist(None) => "1s",
        _ => return None,
    })
}

/// `function(...)` with `param` set to `value` and every argument it needs
/// (and `scale`, which Pareto needs one of three for) set to a valid value.
fn call(function: &registry::FnSchema, param: &str, value: &str) -> Option<String> {
    let mut args = vec![format!("{param} = {value}")];
    for other in function.params.iter().filter(|p| p.name != param) {
        let needed = matches!(other.default, registry::Default::Required) || other.name == "scale";
        if needed {
            args.push(format!("{} = {}", other.name, valid(&other.ty)?));
        }
    }
    Some(format!("{}({})", function.name, args.join(", ")))
}

#[test]
fn every_function_argument_bound_is_enforced_on_a_plan_file() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for function in registry::FUNCTIONS {
        for param in function.params.iter().filter(|p| p.min.is_some() || p.max.is_some()) {
            let Some((block, property, key)) = call_site(function.name) else {
                failures.push(format!("{}: no place to call it in `call_site`", function.name));
                continue;
            };
            for (bound, above) in [(param.max, true), (param.min, false)] {
                let Some(bound) = bound else { continue };
                let case = format!(
                    "{}({} {} {bound})",
                    function.name,
                    param.name,
                    if above { ">" } else { "<" }
                );
                let Some(text) = literal(&param.ty, bound).and_then(|v| call(function, param.name, &v)) else {
                    failures.push(format!("{case}: no literal for its arguments"));
                    continue;
                };
                let compiled = exp_check::compile(
                    "bounds.exp",
                    &OneFile(spec(block, None, property, &text)),
                    &exp_check::Options {
                        seed: None,
                        require_experiment: true,
                    },
                );
                let Some(plan) = compiled.plan else {
                    failures.push(format!(
                        "{case}: `{text}` does not compile: {:?}",
                        compiled.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
                    ));
                    continue;
                };
                let mut json = serde_json::to_value(&plan).unwrap();
                let like = find_path(&mut json, &[key, param.name]).map(|v| match v {
                    Value::Array(items) => items[0].clone(),
                    v => v.clone(),
                });
                let Some(like) = like else {
                    failures.push(format!("{case}: no plan key under `{key}`"));
                    continue;
                };
                match refused(&plan, &[key, param.name], bound, outside(bound, above, &like)) {
                    Ok(_) => checked += 1,
                    Err(why) => failures.push(format!("{case}: {why}")),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{checked} argument bounds checked; not enforced on a plan file:\n{}",
        failures.join("\n")
    );
    assert!(checked >= 10, "only {checked} argument bounds checked");
}
