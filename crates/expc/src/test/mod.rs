//! `expc test`: a spec library's tests. Every spec checks without errors and
//! is formatted; every experiment's plan equals its snapshot
//! (`DIR/__snapshots__/NAME.plan.json` beside `DIR/NAME.exp`); with `--run`,
//! every experiment's first trial runs, shortened, and writes rows.
//! docs/testing.md is the user's guide.

mod data_files;
mod discover;
mod junit;
mod live;
mod render;
mod spec;

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use exp_diagnostics::RenderStyle;

use discover::{discover, snapshot_path, spec_of};
use spec::{test_spec, Failure, Snapshot, SpecOutcome, TestOptions};

/// `--run` without `--time-scale`: a 10 min trial runs for 6 s.
const DEFAULT_TIME_SCALE: f64 = 0.01;

/// Exit status when the tests could not run at all (a path that does not
/// exist, no spec found), as opposed to 1: tests ran and some failed.
const CANNOT_TEST: u8 = 2;

#[derive(clap::Args)]
pub struct Args {
    /// Specs, or folders searched recursively for `*.exp` [default: .]
    paths: Vec<PathBuf>,
    /// Write every new or changed plan as its snapshot, and remove snapshots
    /// whose spec is gone.
    #[arg(long, conflicts_with = "review")]
    accept: bool,
    /// Show each new or changed plan and ask whether to accept it (needs a terminal).
    #[arg(long)]
    review: bool,
    /// Also write the results as JUnit XML to FILE, for CI systems.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Fail on warnings too, not only on errors.
    #[arg(long)]
    deny_warnings: bool,
    /// Also run each experiment's first trial, shortened by --time-scale,
    /// and check that every workload and the monitor wrote rows.
    #[arg(long)]
    run: bool,
    /// With --run: multiply every time on the experiment's timeline by this
    /// factor [default: 0.01].
    #[arg(long, requires = "run")]
    time_scale: Option<f64>,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if args.review && !interactive {
        return Err("--review asks about each plan on a terminal; without one, use --accept".into());
    }
    let time_scale = args.time_scale.unwrap_or(DEFAULT_TIME_SCALE);
    exp_runtime::check_time_scale(time_scale).map_err(|e| format!("--time-scale: {e}"))?;
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let library = match discover(&paths) {
        Ok(library) if library.specs.is_empty() && library.snapshots.is_empty() => {
            errln!("error: no `.exp` file under {}", shown(&paths));
            return Ok(ExitCode::from(CANNOT_TEST));
        }
        Ok(library) => library,
        Err(message) => {
            errln!("error: {message}");
            return Ok(ExitCode::from(CANNOT_TEST));
        }
    };
    // JUnit files hold plain text; a terminal gets colours.
    let style = if args.junit.is_none() && std::io::stdout().is_terminal() {
        RenderStyle::Color
    } else {
        RenderStyle::Plain
    };
    let options = TestOptions {
        deny_warnings: args.deny_warnings,
        style,
    };

    let started = Instant::now();
    let mut outcomes = Vec::new();
    let mut interrupted = false;
    for spec in &library.specs {
        let mut outcome = test_spec(spec, &options);
        let mut claims = String::new();
        if let (true, Some(plan)) = (args.run, &outcome.plan) {
            let run_started = Instant::now();
            match live::run_first_trial(spec, plan, time_scale) {
                Ok(verdicts) => claims = exp_report::claims::text(&verdicts),
                Err(failure) => {
                    outcome.failures.push(Failure::Run(failure.message));
                    interrupted = failure.interrupted;
                }
            }
            outcome.seconds += run_started.elapsed().as_secs_f64();
        }
        if args.accept {
            accept(&mut outcome)?;
        }
        print_line(&outcome);
        // The claims over that one trial: reported, not failed (one scaled repetition has no interval).
        for line in claims.lines() {
            outln!("    {line}");
        }
        outcomes.push(outcome);
        if interrupted {
            errln!("interrupted: the remaining specs were not tested");
            break;
        }
    }
    // Specs left untested after Ctrl-C would make their snapshots look orphaned.
    let orphaned = if interrupted {
        Vec::new()
    } else {
        orphans(&library.snapshots, &outcomes)
    };
    for snapshot in orphaned {
        let mut outcome = orphan_outcome(snapshot);
        if args.accept {
            accept(&mut outcome)?;
        }
        print_line(&outcome);
        outcomes.push(outcome);
    }
    if args.review {
        review(&mut outcomes)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let passed = print_results(&outcomes, seconds);
    if let Some(path) = &args.junit {
        let xml = junit::junit_xml(&outcomes, details, seconds);
        exp_files::write_file(path, xml.as_bytes()).map_err(|e| e.to_string())?;
    }
    Ok(if passed { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Every failure in full, then the verdict; whether every spec passed.
fn print_results(outcomes: &[SpecOutcome], seconds: f64) -> bool {
    let failed: Vec<&SpecOutcome> = outcomes.iter().filter(|o| !o.failures.is_empty()).collect();
    if !failed.is_empty() {
        outln!("\nfailures:");
        for outcome in &failed {
            outln!(
                "\n---- {} ----\n{}",
                outcome.spec.display(),
                details(outcome).trim_end()
            );
        }
    }
    let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
    outln!(
        "\nexpc test: {verdict}. {} of {} specs passed, {} failed; {seconds:.2} s",
        outcomes.len() - failed.len(),
        outcomes.len(),
        failed.len()
    );
    if failed.iter().any(|o| matches!(o.snapshot, Snapshot::Differs { .. })) {
        outln!("New and changed plans: `expc test --accept` writes them as snapshots, `--review` asks about each.");
    }
    failed.is_empty()
}

fn shown(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `test iot/a.exp ... ok`, as test runners print it.
fn print_line(outcome: &SpecOutcome) {
    let mut status = if outcome.failures.is_empty() {
        "ok".to_string()
    } else {
        let reasons: Vec<&str> = outcome.failures.iter().map(Failure::summary).collect();
        format!("FAILED ({})", reasons.join(", "))
    };
    if outcome.module && outcome.failures.is_empty() {
        status.push_str(" (module)");
    }
    if outcome.accepted {
        status.push_str(" (snapshot accepted)");
    }
    outln!("test {} ... {status}", outcome.spec.display());
    if let Some(warnings) = &outcome.warnings {
        out!("{warnings}");
    }
}

/// Everything a failed spec's failures say, as text.
fn details(outcome: &SpecOutcome) -> String {
    let spec = outcome.spec.display();
    let snapshot = snapshot_path(&outcome.spec);
    let mut text = String::new();
    for failure in &outcome.failures {
        let part = match failure {
            Failure::Diagnostics(rendered) => rendered.clone(),
            Failure::Unformatted(diff) => format!(
                "not formatted (`expc fmt {spec}` formats it); `-` is the file, `+` what `expc fmt` writes:\n{diff}"
            ),
            Failure::PlanChanged(diff) => format!(
                "the plan differs from its snapshot {}:\n{}",
                snapshot.display(),
                render::render_diff(diff)
            ),
            Failure::NoSnapshot => format!("no plan snapshot yet ({})\n", snapshot.display()),
            Failure::BadSnapshot(message) => format!("{message}\n"),
            Failure::Run(message) => format!("--run: {message}\n"),
            Failure::Orphan => format!(
                "a snapshot without a spec: no experiment {} plans to it\n",
                spec_of(&outcome.spec).unwrap_or_default().display()
            ),
        };
        text.push_str(&part);
    }
    text
}

/// Snapshots in the searched folders that no tested experiment wrote.
fn orphans<'a>(snapshots: &'a [PathBuf], outcomes: &[SpecOutcome]) -> Vec<&'a PathBuf> {
    let owned: Vec<PathBuf> = outcomes
        .iter()
        .filter(|o| !o.module)
        .map(|o| snapshot_path(&o.spec))
        .collect();
    snapshots.iter().filter(|s| !owned.contains(s)).collect()
}

fn orphan_outcome(snapshot: &Path) -> SpecOutcome {
    SpecOutcome {
        spec: snapshot.to_path_buf(),
        module: false,
        failures: vec![Failure::Orphan],
        warnings: None,
        plan: None,
        snapshot: Snapshot::Orphan,
        seconds: 0.0,
        accepted: false,
    }
}

/// Writes the outcome's new snapshot (or removes an orphan) and drops the
/// failures that it settles.
fn accept(outcome: &mut SpecOutcome) -> Result<(), String> {
    match &outcome.snapshot {
        Snapshot::Differs { path, text } => exp_files::write_file(path, text.as_bytes()).map_err(|e| e.to_string())?,
        Snapshot::Orphan => {
            std::fs::remove_file(&outcome.spec).map_err(|e| format!("cannot remove {}: {e}", outcome.spec.display()))?
        }
        Snapshot::None | Snapshot::Same => return Ok(()),
    }
    outcome.snapshot = Snapshot::Same;
    outcome.accepted = true;
    outcome.failures.retain(|f| !f.is_snapshot());
    Ok(())
}

/// `--review`: each new, changed or orphaned snapshot, with a question.
fn review(outcomes: &mut [SpecOutcome]) -> Result<(), String> {
    let mut all = false;
    let stdin = std::io::stdin();
    for outcome in outcomes.iter_mut() {
        if matches!(outcome.snapshot, Snapshot::None | Snapshot::Same) {
            continue;
        }
        if !all {
            outln!("\n==== {} ====\n{}", outcome.spec.display(), details(outcome));
            out!("accept? [y]es, [n]o, [a]ll the rest, [q]uit: ");
            let _ = std::io::stdout().flush();
            let mut answer = String::new();
            if stdin.lock().read_line(&mut answer).map_err(|e| e.to_string())? == 0 {
                return Ok(());
            }
            match answer.trim() {
                "y" | "yes" => {}
                "a" | "all" => all = true,
                "q" | "quit" => return Ok(()),
                _ => continue,
            }
        }
        accept(outcome)?;
        outln!("accepted: {}", outcome.spec.display());
    }
    Ok(())
}
