//! `cargo fuzz run parse` (from crates/exp-syntax): the parser never panics,
//! and what parses cleanly formats to something that parses cleanly to the
//! same tree, which formats to itself.

#![no_main]

use exp_diagnostics::FileId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|source: &str| {
    let (module, diagnostics) = exp_syntax::parse(FileId(0), source);
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
