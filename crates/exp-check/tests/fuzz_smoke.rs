//! A short, deterministic fuzz run on stable, in `cargo test`: a few hundred
//! specs generated from the grammar and the registry by the generator of
//! the cargo-fuzz target `check_plan` (fuzz/gen/spec.rs), fed from a fixed
//! pseudo-random byte stream. The same properties as the fuzz target: no
//! panic, a plan only without errors, the same plan twice, a plan that
//! reads back from its JSON, labels inside their files; and the parser's
//! round trip through the formatter. The long runs are in fuzz/README.md.

#[path = "../../../fuzz/gen/spec.rs"]
mod spec;

use arbitrary::Unstructured;
use exp_check::{compile, Loader, Options};
use exp_diagnostics::FileId;

struct OneFile(String);

impl Loader for OneFile {
    fn read(&self, path: &std::path::Path) -> std::io::Result<String> {
        if path == std::path::Path::new("fuzz.exp") {
            Ok(self.0.clone())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not in the smoke input",
            ))
        }
    }
}

/// `len` bytes of a xorshift stream.
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// The fuzz target's properties for one spec; whether it planned.
fn holds_properties(text: &str) -> bool {
    let options = Options {
        seed: None,
        require_experiment: true,
    };
    let loader = OneFile(text.to_string());
    let compilation = compile("fuzz.exp", &loader, &options);
    for d in &compilation.diagnostics {
        for label in &d.labels {
            let len = compilation.sources.get(label.span.file).text.len();
            assert!(label.span.end as usize <= len, "{d:?}\n{text}");
        }
    }
    let (module, syntax) = exp_syntax::parse(FileId(0), text);
    if syntax.is_empty() {
        let formatted = exp_syntax::format(&module, text);
        let (again, errors) = exp_syntax::parse(FileId(0), &formatted);
        assert!(errors.is_empty(), "{formatted}");
        assert_eq!(exp_syntax::dump(&module), exp_syntax::dump(&again), "{text}");
    }
    let Some(plan) = compilation.plan else {
        return false;
    };
    assert!(!compilation.diagnostics.iter().any(|d| d.is_error()), "{text}");
    let json = serde_json::to_string(&plan).expect("serializes");
    let back: exp_plan::Plan = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(serde_json::to_string(&back).expect("again"), json);
    let again = compile("fuzz.exp", &loader, &options).plan.expect("planned twice");
    assert_eq!(
        serde_json::to_string(&again).expect("again"),
        json,
        "not deterministic:\n{text}"
    );
    true
}

#[test]
fn generated_specs_check_and_plan_without_panicking() {
    let (mut planned, mut refused) = (0, 0);
    for seed in 0..200u64 {
        let data = bytes(seed, 2048);
        let text = spec::spec(&mut Unstructured::new(&data)).expect("generator");
        if holds_properties(&text) {
            planned += 1;
        } else {
            refused += 1;
        }
    }
    // The generator must reach planning, not only errors.
    eprintln!("{planned} planned, {refused} refused");
    assert!(
        planned >= 10,
        "only {planned} of 200 generated specs planned ({refused} refused)"
    );
}

/// Inputs the fuzzer kept in `fuzz/regressions/check_plan/`, through the
/// same generator and properties as the fuzz target.
fn regression_input(name: &str) -> String {
    let path = std::path::Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions/check_plan")
        .join(name);
    let data = std::fs::read(&path).expect("readable");
    spec::spec(&mut Unstructured::new(&data)).expect("generator")
}

#[test]
fn the_fuzzers_float_regression_holds_the_properties() {
    holds_properties(&regression_input("plan-float-roundtrip"));
}

/// Found by `cargo fuzz run check_plan`: a fleet naming a swept parameter of
/// 431,000 values in all its 30 properties was lowered once per value (11 s
/// in a release build). A block may now vary in at most 10,000 combinations
/// (E0705); fleet properties stored as fields do not count.
#[test]
fn the_fuzzers_slow_sweep_holds_the_properties() {
    holds_properties(&regression_input("slow-large-sweep"));
}

/// Found by `cargo fuzz run check_plan`: a plan's floats (a rate swept by a
/// range in another unit) read back from its JSON one ulp off
/// (949.6283333333332 for 949.6283333333333), so a plan run from
/// `plan.json` was not the plan compiled. serde_json now parses floats
/// exactly (`float_roundtrip`).
#[test]
fn regression_plan_floats_read_back_exactly() {
    let text = "experiment \"fuzz\" {\n  sweep {\n    p1 = 6163/min..57223/min step 42942/h\n  }\n}\n";
    let options = Options {
        seed: None,
        require_experiment: true,
    };
    let plan = compile("fuzz.exp", &OneFile(text.into()), &options)
        .plan
        .expect("plans");
    let json = serde_json::to_string(&plan).expect("serializes");
    let back: exp_plan::Plan = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, plan);
    assert_eq!(serde_json::to_string(&back).expect("again"), json);
}
