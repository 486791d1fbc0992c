//! Parser snapshot tests in the style of Ruff's: one input file per case under
//! `tests/inputs/{valid,invalid}/`, one snapshot per input.
//!
//! A valid snapshot holds the span-free tree and the formatted source; an
//! invalid one holds the rendered diagnostics and the tree of what recovery
//! kept. Besides the snapshot, each case checks what must hold whatever the
//! snapshot says (no errors for valid input, formatter round trip, spans).

mod common;

use std::fs;
use std::path::Path;

use exp_diagnostics::{render_all, RenderStyle, SourceMap};

fn read(path: &Path) -> (String, String) {
    let name = path
        .file_name()
        .expect("input has a name")
        .to_string_lossy()
        .into_owned();
    let source = fs::read_to_string(path).expect("input is readable UTF-8");
    (name, source)
}

#[test]
fn valid() {
    insta::glob!("inputs/valid/*.exp", |path| {
        let (name, source) = read(path);
        let mut map = SourceMap::new();
        let file = map.add(name.as_str(), source.as_str());
        let (module, diagnostics) = exp_syntax::parse(file, &source);
        assert!(
            diagnostics.is_empty(),
            "{name} should parse without errors:\n{}",
            render_all(&diagnostics, &map, RenderStyle::Plain)
        );
        common::assert_spans_are_tight(&module, &source);

        let tree = exp_syntax::dump(&module);
        let formatted = exp_syntax::format(&module, &source);
        common::assert_format_round_trip(&source, &formatted);

        insta::with_settings!({ omit_expression => true }, {
            insta::assert_snapshot!(format!("## Tree\n\n{tree}\n## Formatted\n\n{formatted}"));
        });
    });
}

#[test]
fn invalid() {
    insta::glob!("inputs/invalid/*.exp", |path| {
        let (name, source) = read(path);
        let mut map = SourceMap::new();
        let file = map.add(name.as_str(), source.as_str());
        let (module, diagnostics) = exp_syntax::parse(file, &source);
        assert!(!diagnostics.is_empty(), "{name} should have syntax errors");
        common::assert_diagnostic_spans_are_sane(&diagnostics, &source);
        common::assert_spans_are_tight(&module, &source);

        let errors = render_all(&diagnostics, &map, RenderStyle::Plain);
        let tree = exp_syntax::dump(&module);
        insta::with_settings!({ omit_expression => true }, {
            insta::assert_snapshot!(format!("## Errors\n\n{errors}\n## Recovered tree\n\n{tree}"));
        });
    });
}
