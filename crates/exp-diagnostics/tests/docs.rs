//! docs/running.md ("Limits") embeds the table `limits::markdown_table()`
//! renders, between two marker lines; this test fails when they drift apart.
//!
//! To refresh the section after changing a limit:
//!
//!     UPDATE_DOCS=1 cargo test -p exp-diagnostics --test docs

use std::path::PathBuf;

const BEGIN: &str = "<!-- BEGIN GENERATED: limits -->\n";
const END: &str = "<!-- END GENERATED: limits -->";

#[test]
fn the_limits_table_of_running_md_matches_the_code() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/running.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let begin = text.find(BEGIN).expect("docs/running.md has the BEGIN marker") + BEGIN.len();
    let end = text.find(END).expect("docs/running.md has the END marker");
    assert!(begin <= end, "the markers are out of order");
    let generated = exp_diagnostics::limits::markdown_table();
    if text[begin..end] == generated {
        return;
    }
    if std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1") {
        let updated = format!("{}{generated}{}", &text[..begin], &text[end..]);
        std::fs::write(&path, updated).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    panic!("the limits table of docs/running.md is out of date; run `UPDATE_DOCS=1 cargo test -p exp-diagnostics --test docs`");
}
