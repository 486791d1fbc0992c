//! `expc run`: compile (or load) a plan, preflight it, run it, summarise it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use exp_check::{compile, FsLoader, Options};
use exp_diagnostics::{render_all, SourceMap};
use exp_plan::Plan;
use exp_results::manifest::RunStatus;
use exp_runtime::{Cancel, Events, PreflightIssue, RunError, RunOptions, TrialSelection};

use crate::style;

#[derive(clap::Args)]
pub struct Args {
    /// A spec (`.exp`) or a plan printed by `expc plan` (`.json`).
    file: PathBuf,
    /// Where run directories go: `<out>/<experiment>/<run-id>/`.
    #[arg(long, default_value = "runs")]
    out: PathBuf,
    /// Run only these trials, e.g. `0`, `3,5-7`.
    #[arg(long)]
    trials: Option<String>,
    /// Check the plan against this machine and show what would run; start nothing.
    #[arg(long)]
    dry_run: bool,
    /// Multiply every time on the experiment's timeline (trial length, windows,
    /// pauses) by this factor; e.g. 0.05 runs a 3 min trial in 9 s.
    #[arg(long, default_value_t = 1.0)]
    time_scale: f64,
    /// Run even when preflight finds too little memory.
    #[arg(long)]
    force: bool,
    /// Override the experiment's seed (specs only).
    #[arg(long)]
    seed: Option<u64>,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let (plan, sources) = match load(&args)? {
        Some(loaded) => loaded,
        None => return Ok(ExitCode::FAILURE),
    };
    let trials = args
        .trials
        .as_deref()
        .map(|text| TrialSelection::parse(text, plan.trials.len() as u32))
        .transpose()
        .map_err(|e| format!("--trials: {e}"))?;
    let spec_dir = args.file.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the expc executable: {e}"))?;
    let options = RunOptions {
        out_root: args.out.clone(),
        trials,
        time_scale: args.time_scale,
        force: args.force,
        launcher: exp_anomaly::Launcher {
            program: exe,
            args: vec!["__anomaly-kernel".into()],
        },
        spec_dir,
    };
    if args.dry_run {
        return dry_run(&plan, &options, &sources);
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    let progress = std::thread::spawn(move || crate::progress::render(rx));
    let events = Events::new(tx);
    let cancel = Cancel::new();
    let result = runtime.block_on(async {
        let signals = tokio::spawn(exp_runtime::signals::escalate_on_signals(
            cancel.clone(),
            events.clone(),
        ));
        let result = exp_runtime::run(&plan, options, events, cancel).await;
        signals.abort();
        result
    });
    let _ = progress.join();
    match result {
        Ok(outcome) => {
            crate::summary::print_run(&outcome.run_dir, &outcome.manifest);
            Ok(match outcome.manifest.status {
                RunStatus::Complete => ExitCode::SUCCESS,
                RunStatus::Interrupted => ExitCode::from(130),
                _ => ExitCode::FAILURE,
            })
        }
        Err(RunError::Preflight(issues)) => {
            print_issues(&issues, &sources);
            Ok(ExitCode::FAILURE)
        }
        Err(error) => Err(error.to_string()),
    }
}

/// The plan and, when it was compiled here, its sources (for spans).
fn load(args: &Args) -> Result<Option<(Plan, SourceMap)>, String> {
    if args.file.extension().is_some_and(|e| e == "json") {
        if args.seed.is_some() {
            return Err(
                "--seed applies to specs; a plan's seeds are fixed (recompile it with `expc plan --seed`)".into(),
            );
        }
        let text =
            std::fs::read_to_string(&args.file).map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
        let plan: Plan =
            serde_json::from_str(&text).map_err(|e| format!("{} is not a plan: {e}", args.file.display()))?;
        if plan.plan_version != exp_plan::PLAN_VERSION {
            return Err(format!(
                "{} has plan version {}; this expc runs version {} (recompile the spec)",
                args.file.display(),
                plan.plan_version,
                exp_plan::PLAN_VERSION
            ));
        }
        return Ok(Some((plan, SourceMap::new())));
    }
    let options = Options {
        seed: args.seed,
        require_experiment: true,
    };
    let compilation = compile(&args.file.to_string_lossy(), &FsLoader, &options);
    eprint!(
        "{}",
        render_all(&compilation.diagnostics, &compilation.sources, style())
    );
    Ok(compilation.plan.map(|plan| (plan, compilation.sources)))
}

fn print_issues(issues: &[PreflightIssue], sources: &SourceMap) {
    let diagnostics: Vec<_> = issues
        .iter()
        .map(|issue| {
            let located = issue.origin.as_ref().and_then(|o| {
                sources
                    .locate(&o.file, o.line as usize, o.column as usize)
                    .map(|span| (o, span))
            });
            match (located, &issue.origin) {
                (Some((_, span)), _) => issue.diagnostic.clone().primary(span, "this workload"),
                (None, Some(o)) => issue
                    .diagnostic
                    .clone()
                    .note(format!("at {}:{}:{}", o.file, o.line, o.column)),
                (None, None) => issue.diagnostic.clone(),
            }
        })
        .collect();
    eprint!("{}", render_all(&diagnostics, sources, style()));
    eprintln!("preflight failed: nothing was started and nothing was written");
}

fn dry_run(plan: &Plan, options: &RunOptions, sources: &SourceMap) -> Result<ExitCode, String> {
    let issues = exp_runtime::preflight(&exp_runtime::PreflightInput {
        plan,
        out_root: &options.out_root,
        force: options.force,
        spec_dir: &options.spec_dir,
    });
    crate::summary::print_schedule(plan, options);
    if issues.is_empty() {
        println!("preflight: ok");
        Ok(ExitCode::SUCCESS)
    } else {
        print_issues(&issues, sources);
        Ok(ExitCode::FAILURE)
    }
}
