//! The run summary as text: a header with the run's status, then per table
//! and trial the rows and a line per numeric column (`units.rs` formats the
//! cells and leaves out identifiers and dates).

use exp_results::runner::Runner;
use exp_results::{RunStatus, RunView};

use super::units::column_cells;
use crate::RunSummary;

/// What the status alone does not say: who runs a running run, what
/// became of a crashed one and how to go on.
pub(super) fn status_note(view: &RunView) -> String {
    let unfinished_rows = if view.unfinished.is_empty() {
        String::new()
    } else {
        let tables: Vec<&str> = view.unfinished.keys().map(String::as_str).collect();
        format!(
            "; rows of unfinished trials are in tables/.partial/ ({})",
            tables.join(", ")
        )
    };
    match (&view.manifest.status, &view.runner) {
        (RunStatus::Crashed, Some(Runner::Gone(runner))) => format!(
            " (the runner, {runner}, is gone{unfinished_rows}; `expc run --resume {}` goes on with it)",
            view.dir.display()
        ),
        (RunStatus::Running, Some(Runner::Running(runner))) => format!(" ({runner}{unfinished_rows})"),
        _ => String::new(),
    }
}

/// The header (with `status_note` after the status), then `sections` (the
/// MQTT and traffic reports' text), then the tables.
pub(super) fn render(summary: &RunSummary, status_note: &str, sections: &str) -> String {
    let mut out = format!(
        "run {} of {:?}: {}{status_note}\n{}\n",
        summary.run_id,
        summary.experiment,
        summary.status.as_str(),
        summary.dir.display()
    );
    out.push_str(sections);
    for table in &summary.tables {
        out.push_str(&format!("\n== {}\n", table.table));
        for trial in &table.trials {
            out.push_str(&format!("trial {}: {} rows\n", trial.trial, trial.rows));
            if trial.columns.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "  {:<28} {:>8} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}\n",
                "column", "count", "mean", "min", "p50", "p95", "p99", "max"
            ));
            // Identifiers and dates are left out: their statistics mean nothing.
            for c in &trial.columns {
                let Some([mean, min, p50, p95, p99, max]) = column_cells(c) else {
                    continue;
                };
                out.push_str(&format!(
                    "  {:<28} {:>8} {mean:>11} {min:>11} {p50:>11} {p95:>11} {p99:>11} {max:>11}\n",
                    c.column, c.count
                ));
            }
        }
    }
    out
}
