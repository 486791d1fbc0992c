//! `expc report RUN_DIR`: the MQTT fleet report, if the run has fleets,
//! then per-trial summaries of every table of the run. exp-report reads the
//! run and renders it; this chooses text or JSON and prints it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use exp_report::{mqtt_report, summarize};
use exp_results::{open_run, Warning};

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
        let value = exp_report::json::report(&summary, mqtt.as_ref(), traffic.as_ref()).map_err(|e| e.to_string())?;
        serde_json::to_string_pretty(&value).map_err(|e| e.to_string())? + "\n"
    } else {
        exp_report::text::report(&view, &summary, mqtt.as_ref(), traffic.as_ref())
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
