//! `expc run`: compile (or load) a plan, preflight it, run it, summarise it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use exp_diagnostics::{render_all, SourceMap};
use exp_plan::Plan;
use exp_results::manifest::RunStatus;
use exp_runtime::{Cancel, Events, PreflightIssue, RunError, RunOptions, TrialSelection};

use crate::style;

#[derive(clap::Args)]
pub struct Args {
    /// A spec (`.exp`) or a plan printed by `expc plan` (`.json`). With
    /// `--resume`, optional: it must give the plan that started the run.
    #[arg(required_unless_present_any = ["resume", "merge"])]
    file: Option<PathBuf>,
    /// Go on with the run in RUN_DIR (interrupted, failed or crashed):
    /// complete trials are kept, the others run again, with the run's own
    /// plan and options. A complete run is left as it is (exit 0).
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["trials", "time_scale", "seed", "dry_run", "out"])]
    resume: Option<PathBuf>,
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
    /// pauses) by this factor; e.g. 0.05 runs a 3 min trial in 9 s [default: 1].
    #[arg(long)]
    time_scale: Option<f64>,
    /// Run even when preflight finds too little memory.
    #[arg(long)]
    force: bool,
    /// Override the experiment's seed (specs only).
    #[arg(long)]
    seed: Option<u64>,
    /// Run shard K of N: a deterministic, duration-balanced share of the
    /// trials, into the run directory every shard names with `--run-id`
    /// (on a shared file system for shards on several hosts). With
    /// `--resume`: go on with that shard.
    #[arg(long, value_name = "K/N", conflicts_with = "split")]
    shard: Option<exp_runtime::ShardSpec>,
    /// Run part K of N of every trial's workloads (a fleet's devices, a
    /// traffic workload's connections, an xml workload's documents), each
    /// trial started together with the other parts; into the run directory
    /// every part names with `--run-id`. Under `srun`:
    /// `--split $SLURM_PROCID/$SLURM_NTASKS`.
    #[arg(long, value_name = "K/N")]
    split: Option<exp_runtime::ShardSpec>,
    /// The run's id (its directory's name) instead of one made from the time
    /// and the plan's hash.
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// Write the merged manifest of a sharded run (`manifest.json` beside
    /// its shards' fragments) and say how the run stands.
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["file", "resume", "shard", "dry_run"])]
    merge: Option<PathBuf>,
    /// `repeat until` counts trials an audit found invalid too (by default
    /// it leaves them out; docs/running.md, "Validity").
    #[arg(long)]
    include_invalid: bool,
    /// Set a bound of the trials' audits, e.g. `others_cpu_share=0.5`
    /// (repeatable; names and defaults in docs/running.md, "Validity").
    /// A resumed run keeps the bounds it started with.
    #[arg(long, value_name = "NAME=VALUE", conflicts_with = "resume")]
    validity_bound: Vec<String>,
    /// When the run ends (complete, aborted by a claim, interrupted or
    /// failed), write its claims' verdicts as JUnit XML to FILE, as `expc
    /// report RUN_DIR --junit FILE` writes them (a shard or split part
    /// alone does not judge: report the merged run).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["dry_run", "merge"])]
    junit: Option<PathBuf>,
    /// Serve the run's live counters for Prometheus at http://ADDR/metrics
    /// (a port alone is on 127.0.0.1; names in docs/running.md, "Watching a run").
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["dry_run", "merge"])]
    metrics: Option<String>,
    /// Serve a live page of the run (progress, trial order, validity
    /// flags, the report's figures) at the URL printed, with its token
    /// [default ADDR: 127.0.0.1 on a free port].
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0", conflicts_with_all = ["dry_run", "merge"])]
    watch: Option<String>,
    /// Let --metrics and --watch listen on an address other than loopback.
    #[arg(long)]
    listen_beyond_loopback: bool,
}

impl Args {
    fn serving(&self) -> Result<crate::serving::Serving, String> {
        crate::serving::Serving::bind(
            self.metrics.as_deref(),
            self.watch.as_deref(),
            self.listen_beyond_loopback,
        )
    }
}

/// The audits' bounds: the defaults with each `--validity-bound` set.
fn bounds(args: &Args) -> Result<exp_results::validity::Bounds, String> {
    args.validity_bound
        .iter()
        .try_fold(exp_results::validity::Bounds::default(), |bounds, setting| {
            bounds.with(setting).map_err(|e| e.to_string())
        })
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the expc executable: {e}"))?;
    let launcher = exp_anomaly::Launcher {
        program: exe,
        args: vec!["__anomaly-kernel".into()],
    };
    if let Some(dir) = &args.merge {
        return merge(dir);
    }
    if let Some(path) = &args.junit {
        crate::run_junit::check_junit(path)?;
    }
    if let Some(dir) = &args.resume {
        return resume(dir, &args, launcher);
    }
    let Some(file) = &args.file else {
        return Err("give a spec or a plan to run".into());
    };
    let (plan, sources) = match load(file, args.seed)? {
        Some(loaded) => loaded,
        None => return Ok(ExitCode::FAILURE),
    };
    let trials = args
        .trials
        .as_deref()
        .map(|text| TrialSelection::parse(text, plan.trial_count()))
        .transpose()
        .map_err(|e| format!("--trials: {e}"))?;
    let time_scale = args.time_scale.unwrap_or(1.0);
    exp_runtime::check_time_scale(time_scale).map_err(|e| e.to_string())?;
    let spec_dir = file.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let options = RunOptions {
        out_root: args.out.clone(),
        trials,
        time_scale,
        force: args.force,
        launcher,
        spec_dir,
        shard: args.shard,
        run_id: args.run_id.clone(),
        split: args.split,
        bounds: bounds(&args)?,
        include_invalid: args.include_invalid,
    };
    let experiment_dir = args.out.join(exp_results::experiment_dir_name(&plan.experiment.name));
    crate::out_dir::check(&args.out, &experiment_dir)?;
    if args.dry_run {
        return dry_run(&plan, &options, &sources);
    }
    let junit = crate::run_junit::Junit::new(args.junit.as_deref(), args.include_invalid);
    execute(&sources, junit, args.serving()?, |events, cancel| async {
        exp_runtime::run(&plan, options, events, cancel).await
    })
}

/// `--resume RUN_DIR [FILE]`: the run's own plan (or FILE's, which must be
/// the same) and options.
fn resume(dir: &Path, args: &Args, launcher: exp_anomaly::Launcher) -> Result<ExitCode, String> {
    let role = args
        .shard
        .or(args.split)
        .map_or(exp_results::Role::Whole, |s| exp_results::Role::Shard(s.index));
    let (given, sources) = match &args.file {
        Some(file) => match load(file, None)? {
            Some((plan, sources)) => (Some(plan), sources),
            None => return Ok(ExitCode::FAILURE),
        },
        None => (None, SourceMap::new()),
    };
    let (plan, recorded) = exp_runtime::resume::load(dir, role, given).map_err(|e| e.to_string())?;
    // The run by its own path: a bare name, `.` or a symlink named it.
    let dir = recorded.dir.as_path();
    announce(dir, recorded.complete);
    for warning in &recorded.warnings {
        errln!("warning: {warning}");
    }
    let spec_dir = recorded
        .spec_dir
        .or_else(|| args.file.as_ref().and_then(|f| f.parent()).map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    let options = RunOptions {
        out_root: dir.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        trials: recorded.trials,
        time_scale: recorded.time_scale,
        force: recorded.forced || args.force,
        launcher,
        spec_dir,
        shard: args.shard,
        run_id: None,
        split: args.split,
        bounds: recorded.bounds,
        include_invalid: args.include_invalid,
    };
    let junit = crate::run_junit::Junit::new(args.junit.as_deref(), args.include_invalid);
    execute(&sources, junit, args.serving()?, |events, cancel| async {
        exp_runtime::resume(dir, &plan, options, events, cancel).await
    })
}

/// Says what is taken over (a crashed run's runner is named), or that a
/// complete run has nothing to resume.
fn announce(dir: &Path, complete: bool) {
    let Ok((manifest, writers)) = exp_results::read_run(dir) else {
        return;
    };
    if complete {
        errln!("run {} is complete: nothing to resume", manifest.run_id);
        return;
    }
    let gone = writers.iter().find_map(|(_, runner)| match runner {
        Some(exp_results::runner::Runner::Gone(info)) if manifest.status == RunStatus::Crashed => {
            Some(format!("; its runner ({info}) is gone"))
        }
        _ => None,
    });
    errln!(
        "resuming run {}: {}{}",
        manifest.run_id,
        manifest.status.as_str(),
        gone.unwrap_or_default()
    );
}

/// `--merge RUN_DIR`: the shards' fragments as one `manifest.json`.
fn merge(dir: &Path) -> Result<ExitCode, String> {
    let manifest = exp_results::write_merged(dir)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "{} has no shard manifests (manifest-shard-<k>.json) to merge",
                dir.display()
            )
        })?;
    crate::summary::print_run(dir, &manifest);
    Ok(match manifest.status {
        RunStatus::Complete => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}

/// Runs `start` with progress on the terminal and signals turned into
/// cancellation; prints how it ended, and writes `--junit`.
fn execute<F, Fut>(
    sources: &SourceMap,
    junit: crate::run_junit::Junit,
    serving: crate::serving::Serving,
    start: F,
) -> Result<ExitCode, String>
where
    F: FnOnce(Events, Cancel) -> Fut,
    Fut: std::future::Future<Output = Result<exp_runtime::RunOutcome, RunError>>,
{
    match drive(start, true, serving)? {
        Ok(outcome) => {
            crate::summary::print_run(&outcome.run_dir, &outcome.manifest);
            if !junit.write(&outcome.run_dir, &outcome.manifest) {
                return Ok(ExitCode::FAILURE);
            }
            Ok(match outcome.manifest.status {
                // Complete: the claims' verdicts say how it went (0, 3 refuted, 4 inconclusive).
                RunStatus::Complete => crate::claims::exit_code(&outcome.manifest.claims),
                // Stopped by an `abort` claim: refuted (3), not interrupted.
                _ if outcome.manifest.aborted_by.is_some() => crate::claims::exit_code(&outcome.manifest.claims),
                RunStatus::Interrupted => ExitCode::from(130),
                _ => ExitCode::FAILURE,
            })
        }
        Err(RunError::Preflight(issues)) => {
            print_issues(&issues, sources);
            Ok(ExitCode::FAILURE)
        }
        Err(error) => Err(error.to_string()),
    }
}

/// Runs `start` on a runtime of its own, with SIGINT and SIGTERM turned into
/// cancellation; its events are shown when `progress` is set, its live
/// counters served as `serving` asks.
pub(crate) fn drive<F, Fut>(
    start: F,
    progress: bool,
    serving: crate::serving::Serving,
) -> Result<Result<exp_runtime::RunOutcome, RunError>, String>
where
    F: FnOnce(Events, Cancel) -> Fut,
    Fut: std::future::Future<Output = Result<exp_runtime::RunOutcome, RunError>>,
{
    // One worker: the runtime's only async work is fleets' device I/O, and
    // a second worker mostly woke up to steal a task, a context switch per
    // few messages (`bench/fleet-scale.sh bench/fleet-scale.exp --trials 0
    // --time-scale 0.3`, alternating: 19.1–21.5 µs of runner CPU per message
    // with two workers, 17.7 with one). Blocking work has its own threads.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (events, rx) = if progress {
        let (tx, rx) = std::sync::mpsc::channel();
        (Events::new(tx), Some(rx))
    } else {
        (Events::none(), None)
    };
    // Said before the progress bar takes the terminal's last line.
    serving.start(events.live())?;
    let renderer = rx.map(|rx| {
        let (finished, live) = (finished.clone(), events.live().clone());
        std::thread::spawn(move || crate::progress::render(rx, finished, &live))
    });
    let cancel = Cancel::new();
    let result = runtime.block_on(async {
        let watcher = exp_runtime::signals::install(cancel.clone(), events.clone())
            .map_err(|e| format!("cannot take over SIGINT and SIGTERM: {e}"))?;
        let signals = tokio::spawn(watcher);
        let result = start(events, cancel).await;
        signals.abort();
        Ok::<_, String>(result)
    })?;
    finished.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Some(renderer) = renderer {
        let _ = renderer.join();
    }
    Ok(result)
}

/// The plan and, when it was compiled here, its sources (for spans).
pub(crate) fn load(file: &Path, seed: Option<u64>) -> Result<Option<(Plan, SourceMap)>, String> {
    let yaml = crate::yaml::is_yaml_path(file);
    if yaml || file.extension().is_some_and(|e| e == "json") {
        if seed.is_some() {
            return Err(
                "--seed applies to specs; a plan's seeds are fixed (recompile it with `expc plan --seed`)".into(),
            );
        }
        // The bounded reader: a FIFO would block and /dev/zero never end.
        let mut bytes =
            exp_files::read_bytes(file, crate::PLAN_CAP).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        if yaml {
            let text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", file.display()))?;
            let json = crate::yaml::from_yaml(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            bytes = serde_json::to_vec(&json).map_err(|e| e.to_string())?;
        }
        let plan = Plan::from_json(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
        return Ok(Some((plan, SourceMap::new())));
    }
    let compilation = crate::compile_spec(file, seed);
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
    err!("{}", render_all(&diagnostics, sources, style()));
    errln!("preflight failed: nothing was started and nothing was written");
}

fn dry_run(plan: &Plan, options: &RunOptions, sources: &SourceMap) -> Result<ExitCode, String> {
    // A shard lists the trials it would run, not the whole plan's.
    let shard_selection;
    let options = match options.shard {
        Some(shard) => {
            let trials = exp_runtime::shard_trials(plan, options.trials.as_ref(), shard);
            if trials.is_empty() {
                outln!("shard {shard} has no trials: the plan's trials all go to other shards");
                return Ok(ExitCode::SUCCESS);
            }
            let text = crate::summary::ranges(&trials);
            shard_selection = RunOptions {
                trials: Some(TrialSelection::parse(&text, plan.trial_count()).map_err(|e| e.to_string())?),
                ..options.clone()
            };
            &shard_selection
        }
        None => options,
    };
    let issues = exp_runtime::preflight(&exp_runtime::PreflightInput {
        plan,
        out_root: &options.out_root,
        force: options.force,
        spec_dir: &options.spec_dir,
    });
    crate::summary::print_schedule(plan, options);
    if issues.is_empty() {
        outln!("preflight: ok");
        Ok(ExitCode::SUCCESS)
    } else {
        print_issues(&issues, sources);
        Ok(ExitCode::FAILURE)
    }
}
