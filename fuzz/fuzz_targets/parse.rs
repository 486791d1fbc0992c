//! `cargo +nightly fuzz run parse`: the parser never panics, whatever the
//! bytes; what parses cleanly formats to something that parses cleanly to
//! the same tree, which formats to itself; every diagnostic's span lies in
//! the source.

#![no_main]

use exp_diagnostics::FileId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|source: &str| {
    let (module, diagnostics) = exp_syntax::parse(FileId(0), source);
    for d in &diagnostics {
        for label in &d.labels {
            assert!(label.span.start <= label.span.end && label.span.end as usize <= source.len());
        }
    }
    if !diagnostics.is_empty() {
        return;
    }
    let formatted = exp_syntax::format(&module, source);
    let (again, diagnostics) = exp_syntax::parse(FileId(0), &formatted);
    assert!(
        diagnostics.is_empty(),
        "formatted source does not parse: {diagnostics:?}\n{formatted}"
    );
    assert_eq!(exp_syntax::dump(&module), exp_syntax::dump(&again));
    assert_eq!(exp_syntax::format(&again, &formatted), formatted);
});
