//! How `expc test` shows a changed plan: the plan diff in words
//! (`exp_plan::diff_text`), one indented line per change.

use exp_plan::diff::PlanDiff;

pub fn render_diff(diff: &PlanDiff) -> String {
    let mut out = String::new();
    for line in exp_plan::diff_text::lines(diff) {
        out.push_str("  ");
        out.push_str(&line);
        out.push('\n');
    }
    if diff.changes.is_empty() {
        out.push_str("  (the snapshot's text differs, but not what it plans: `--accept` rewrites it)\n");
    }
    out
}
