//! `cargo +nightly fuzz run check_plan`: specs generated from the grammar
//! and the registry (fuzz/gen/spec.rs) are checked and planned. Never a
//! panic; a plan comes only without errors, is the same twice (determinism)
//! and reads back from its JSON; every diagnostic renders and points into
//! its file.

#![no_main]

#[path = "../gen/spec.rs"]
mod spec;

use arbitrary::Unstructured;
use exp_check::{compile, Loader, Options};
use exp_diagnostics::{render_all, RenderStyle};
use libfuzzer_sys::fuzz_target;

/// The generated spec as the only file; every other path is missing.
struct OneFile(String);

impl Loader for OneFile {
    fn read(&self, path: &std::path::Path) -> std::io::Result<String> {
        if path == std::path::Path::new("fuzz.exp") {
            Ok(self.0.clone())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not in the fuzz input",
            ))
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(text) = spec::spec(&mut u) else { return };
    let options = Options {
        seed: None,
        require_experiment: true,
    };
    let loader = OneFile(text.clone());
    let first = compile("fuzz.exp", &loader, &options);
    let rendered = render_all(&first.diagnostics, &first.sources, RenderStyle::Plain);
    for d in &first.diagnostics {
        for label in &d.labels {
            let len = first.sources.get(label.span.file).text.len();
            assert!(label.span.end as usize <= len, "{rendered}\n{text}");
        }
    }
    assert_eq!(first.plan.is_some(), !first.has_errors() && first.plan.is_some());
    if first.has_errors() {
        assert!(first.plan.is_none(), "a plan despite errors:\n{rendered}\n{text}");
    }
    let Some(plan) = first.plan else { return };
    let json = serde_json::to_string(&plan).expect("a plan serializes");
    let back: exp_plan::Plan = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(serde_json::to_string(&back).expect("again"), json, "{text}");
    let second = compile("fuzz.exp", &loader, &options);
    let again = serde_json::to_string(&second.plan.expect("planned twice")).expect("serializes");
    assert_eq!(again, json, "not deterministic:\n{text}");
});
