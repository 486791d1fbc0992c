//! docs/running.md ("Limits") embeds the table `limits::markdown_table()`
//! renders, and docs/language.md (§10) the table of every code by stage,
//! each between two marker lines; these tests fail when they drift apart.
//!
//! To refresh the sections after changing a limit or a code:
//!
//!     UPDATE_DOCS=1 cargo test -p exp-diagnostics --test docs

use std::path::PathBuf;

use exp_diagnostics::Code;

/// Replaces what lies between the markers of `section` in `doc` with
/// `generated`, or fails when they differ (unless UPDATE_DOCS=1).
fn check_generated(doc: &str, section: &str, generated: &str) {
    let path = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let (begin_marker, end_marker) = (
        format!("<!-- BEGIN GENERATED: {section} -->\n"),
        format!("<!-- END GENERATED: {section} -->"),
    );
    let begin = text.find(&begin_marker).expect("the BEGIN marker") + begin_marker.len();
    let end = text.find(&end_marker).expect("the END marker");
    assert!(begin <= end, "the markers are out of order");
    if text[begin..end] == *generated {
        return;
    }
    if std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1") {
        let updated = format!("{}{generated}{}", &text[..begin], &text[end..]);
        std::fs::write(&path, updated).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    panic!("the {section} table of docs/{doc} is out of date; run `UPDATE_DOCS=1 cargo test -p exp-diagnostics --test docs`");
}

#[test]
fn the_limits_table_of_running_md_matches_the_code() {
    check_generated("running.md", "limits", &exp_diagnostics::limits::markdown_table());
}

/// The stage each range of codes belongs to, in code order.
const STAGES: &[(&str, &str)] = &[
    ("E01", "syntax"),
    ("E02", "names and imports"),
    ("E03", "blocks and properties"),
    ("E04", "types and units"),
    ("E05", "values"),
    ("E06", "time"),
    ("E07", "sweeps and repetitions"),
    ("W08", "warnings"),
    ("E09", "compiler"),
    ("E10", "run preflight"),
    ("E11", "claims"),
    ("V01", "validity of fleets"),
    ("V02", "validity of traffic"),
    ("V03", "validity of anomalies"),
    ("V04", "validity of xml"),
    ("V05", "validity of the monitor"),
    ("V06", "validity of the host"),
];

#[test]
fn the_code_table_of_language_md_lists_every_code() {
    let mut table = String::from("| range | stage |\n|---|---|\n");
    for (prefix, stage) in STAGES {
        let codes: Vec<String> = Code::ALL
            .iter()
            .filter(|c| c.as_str().starts_with(prefix))
            .map(|c| format!("{} {}", c.as_str(), c.title()))
            .collect();
        table += &format!("| {prefix}xx | {stage}: {} |\n", codes.join(", "));
    }
    let staged = |c: &Code| STAGES.iter().any(|(prefix, _)| c.as_str().starts_with(prefix));
    let unstaged: Vec<&str> = Code::ALL.iter().filter(|c| !staged(c)).map(|c| c.as_str()).collect();
    assert!(unstaged.is_empty(), "codes without a stage in STAGES: {unstaged:?}");
    check_generated("language.md", "codes", &table);
}
