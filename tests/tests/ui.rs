//! Diagnostic UI tests: every `tests/ui/*.exp` is an invalid spec whose
//! rendered diagnostics (as `expc plan` prints them, without colour) are
//! snapshotted. Files under `tests/ui/modules/` are only imported by them.
//!
//! Each input names the codes it must produce in a `// expect: E0302 ...`
//! comment, and the codes it must not produce (cascades of an error already
//! reported) in a `// expect-not: E0605 ...` comment; each
//! `// expect-help: TEXT` line must be the help of one of its diagnostics,
//! and no two diagnostics may share code and primary span (one mistake,
//! one report); that is checked whatever the snapshot says. A `// known-bug: ...`
//! comment marks a case where the compiler does not report them yet (the case
//! then fails once the bug is fixed, as a reminder to remove the comment). Accept new or changed
//! snapshots with `INSTA_UPDATE=always cargo test -p exp-tests`, then read them.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use exp_check::{compile, Options};
use exp_diagnostics::{render_all, Diagnostic, RenderStyle, SourceMap};

use common::{relative, RepoLoader};

#[test]
fn ui() {
    let mut count = 0;
    let mut failures: Vec<String> = Vec::new();
    insta::glob!("../ui", "*.exp", |path| {
        count += 1;
        failures.extend(check(path));
    });
    assert!(count >= 35, "expected at least 35 UI cases, found {count}");
    // Every case is snapshotted before failing, so one run shows them all.
    assert!(
        failures.is_empty(),
        "{} of {count} UI cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Snapshots one case; returns a description of each problem.
fn check(path: &Path) -> Vec<String> {
    let name = relative(path);
    let text = std::fs::read_to_string(path).expect("input is readable UTF-8");
    let options = Options {
        seed: None,
        require_experiment: true,
    };
    let compilation = compile(&name, &RepoLoader::new(), &options);
    let rendered = render_all(&compilation.diagnostics, &compilation.sources, RenderStyle::Plain);

    let mut problems = Vec::new();
    if !compilation.has_errors() {
        problems.push(format!("{name}: expected errors, got:\n{rendered}"));
    }
    if compilation.plan.is_some() {
        problems.push(format!("{name}: has errors but produced a plan"));
    }
    let expected = expected_codes(&text);
    if expected.is_empty() {
        problems.push(format!("{name}: needs a `// expect: CODE ...` comment"));
    }
    let found: BTreeSet<&str> = compilation.diagnostics.iter().map(|d| d.code.as_str()).collect();
    let missing: Vec<&String> = expected.iter().filter(|c| !found.contains(c.as_str())).collect();
    match (known_bug(&text), missing.is_empty()) {
        (None, false) => problems.push(format!(
            "{name}: expected {missing:?} among the diagnostics, got:\n{rendered}"
        )),
        (Some(_), true) => problems.push(format!(
            "{name}: the known bug is fixed (every expected code is reported): remove its `// known-bug:` line"
        )),
        (Some(bug), false) => eprintln!("{name}: known bug, {missing:?} not reported yet: {bug}"),
        (None, true) => {}
    }
    // `// expect-not:` codes would only repeat an error already reported.
    let cascades: Vec<String> = codes_after(&text, "// expect-not:")
        .into_iter()
        .filter(|c| found.contains(c.as_str()))
        .collect();
    if !cascades.is_empty() {
        problems.push(format!("{name}: {cascades:?} must not be reported, got:\n{rendered}"));
    }
    for diagnostic in &compilation.diagnostics {
        problems.extend(misplaced_labels(diagnostic, &compilation.sources, &name));
    }
    for help in text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("// expect-help:"))
    {
        let help = help.trim();
        if !compilation.diagnostics.iter().any(|d| d.help.as_deref() == Some(help)) {
            problems.push(format!("{name}: no diagnostic has the help `{help}`, got:\n{rendered}"));
        }
    }
    let mut reported = BTreeSet::new();
    for d in &compilation.diagnostics {
        let span = d.primary_span().map(|s| (s.file, s.start, s.end));
        if !reported.insert((d.code.as_str(), span)) {
            problems.push(format!(
                "{name}: {} reported twice at one place:\n{rendered}",
                d.code.as_str()
            ));
        }
    }

    let file_name = path
        .file_name()
        .expect("input has a name")
        .to_string_lossy()
        .into_owned();
    insta::with_settings!({
        snapshot_suffix => file_name,
        description => format!("expc plan {name}"),
        omit_expression => true,
    }, {
        insta::assert_snapshot!("diagnostics", rendered);
    });
    problems
}

/// A `// known-bug: ...` comment: the compiler does not yet report every
/// expected code. The case passes while the bug lasts and fails once it is
/// fixed, so the line is removed with the fix.
fn known_bug(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|line| line.trim().strip_prefix("// known-bug:"))
        .map(str::trim)
}

/// Codes listed in `// expect:` comments.
fn expected_codes(text: &str) -> BTreeSet<String> {
    codes_after(text, "// expect:")
}

/// Codes listed in comments that start with `prefix`.
fn codes_after(text: &str, prefix: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix(prefix))
        .flat_map(|codes| codes.split_whitespace().map(str::to_string))
        .collect()
}

/// Every diagnostic must point at a real place: a primary label, and every
/// label inside its file.
fn misplaced_labels(diagnostic: &Diagnostic, sources: &SourceMap, name: &str) -> Vec<String> {
    let code = diagnostic.code.as_str();
    let mut problems = Vec::new();
    if diagnostic.primary_span().is_none() {
        problems.push(format!("{name}: {code} has no primary label"));
    }
    for label in &diagnostic.labels {
        let len = sources.get(label.span.file).text.len();
        if label.span.start > label.span.end || label.span.end as usize > len {
            problems.push(format!(
                "{name}: {code} label `{}` lies outside its file",
                label.message
            ));
        }
    }
    problems
}
