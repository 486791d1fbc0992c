//! `expc report RUN_DIR`: per-trial summaries of every table of a run.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use exp_results::{open_run, summarize, RunSummary};

use crate::summary::number;

#[derive(clap::Args)]
pub struct Args {
    /// A run directory (`runs/<experiment>/<run-id>`).
    dir: PathBuf,
    /// Print the summary as JSON for machines.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let view = open_run(&args.dir).map_err(|e| e.to_string())?;
    let summary = summarize(&view).map_err(|e| e.to_string())?;
    let mut out = std::io::stdout().lock();
    let text = if args.json {
        serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())? + "\n"
    } else {
        render(&summary)
    };
    // A closed pipe (`| head`) ends the output quietly.
    let _ = out.write_all(text.as_bytes());
    for warning in &summary.warnings {
        eprintln!("warning: {}: {}", warning.path.display(), warning.message);
    }
    Ok(ExitCode::SUCCESS)
}

fn render(summary: &RunSummary) -> String {
    let mut out = format!(
        "run {} of {:?}: {}\n{}\n",
        summary.run_id,
        summary.experiment,
        summary.status.as_str(),
        summary.dir.display()
    );
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
            for c in &trial.columns {
                let cell = |v: Option<f64>| v.map_or_else(|| "-".to_string(), number);
                out.push_str(&format!(
                    "  {:<28} {:>8} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}\n",
                    c.column,
                    c.count,
                    cell(c.mean),
                    cell(c.min),
                    cell(c.p50),
                    cell(c.p95),
                    cell(c.p99),
                    cell(c.max)
                ));
            }
        }
    }
    out
}
