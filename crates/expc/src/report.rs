//! `expc report RUN_DIR`: the MQTT fleet report, if the run has fleets,
//! then per-trial summaries of every table of the run.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use exp_report::{mqtt_report, summarize, MqttReport, RunSummary};
use exp_results::runner::Runner;
use exp_results::{open_run, RunStatus, RunView, Warning};

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
    let mut summary = summarize(&view).map_err(|e| e.to_string())?;
    let mut mqtt_warnings = Vec::new();
    let mqtt = mqtt_report(&view, &mut mqtt_warnings);
    merge_warnings(&mut summary.warnings, mqtt_warnings);
    let mut traffic_warnings = Vec::new();
    let traffic = exp_report::traffic_report(&view, &mut traffic_warnings);
    merge_warnings(&mut summary.warnings, traffic_warnings);
    let mut out = std::io::stdout().lock();
    let text = if args.json {
        let value = crate::traffic_report::add_json(json(&summary, mqtt.as_ref())?, traffic.as_ref())?;
        serde_json::to_string_pretty(&value).map_err(|e| e.to_string())? + "\n"
    } else {
        let mut mqtt_text = mqtt.as_ref().map(crate::mqtt_report::render).unwrap_or_default();
        mqtt_text.push_str(&traffic.as_ref().map(crate::traffic_report::render).unwrap_or_default());
        render(&summary, &status_note(&view), &mqtt_text)
    };
    // A closed pipe (`| head`) ends the output quietly.
    let _ = out.write_all(text.as_bytes());
    for warning in &summary.warnings {
        errln!("warning: {}: {}", warning.path.display(), warning.message);
    }
    Ok(ExitCode::SUCCESS)
}

/// Both readers see a damaged `mqtt_messages` file: warn about each file once.
fn merge_warnings(into: &mut Vec<Warning>, more: Vec<Warning>) {
    for warning in more {
        if !into.iter().any(|w| w.path == warning.path) {
            into.push(warning);
        }
    }
}

/// The summary's JSON with the MQTT report as `mqtt`, before the tables
/// as in the text (absent for a run without fleets).
fn json(summary: &RunSummary, mqtt: Option<&MqttReport>) -> Result<serde_json::Value, String> {
    let value = serde_json::to_value(summary).map_err(|e| e.to_string())?;
    let (Some(mqtt), serde_json::Value::Object(fields)) = (mqtt, &value) else {
        return Ok(value);
    };
    let mut mqtt = Some(serde_json::to_value(mqtt).map_err(|e| e.to_string())?);
    let mut out = serde_json::Map::new();
    for (key, field) in fields {
        if key == "tables" {
            if let Some(mqtt) = mqtt.take() {
                out.insert("mqtt".into(), mqtt);
            }
        }
        out.insert(key.clone(), field.clone());
    }
    if let Some(mqtt) = mqtt {
        out.insert("mqtt".into(), mqtt);
    }
    Ok(serde_json::Value::Object(out))
}

/// What the status alone does not say: who runs a running run, what
/// became of a crashed one and how to go on.
fn status_note(view: &RunView) -> String {
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

fn render(summary: &RunSummary, status_note: &str, mqtt: &str) -> String {
    let mut out = format!(
        "run {} of {:?}: {}{status_note}\n{}\n",
        summary.run_id,
        summary.experiment,
        summary.status.as_str(),
        summary.dir.display()
    );
    out.push_str(mqtt);
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
                let Some([mean, min, p50, p95, p99, max]) = crate::units::column_cells(c) else {
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
