//! `expc slurm`: a study on a Slurm cluster. Slurm schedules; expc writes
//! what it runs. The spec is compiled once (`plan.json`, so every task runs
//! the same plan even if the spec changes meanwhile), and an sbatch script
//! runs either
//!
//! - `--shards N`: a job array of N tasks, task K running `expc run
//!   --shard K/N` (a duration-balanced share of the trials), or
//! - `--split N`: one job of N tasks started by `srun` (one per node by
//!   default), task K running `expc run --split K/N` (part K of every
//!   trial's workloads, each trial started together),
//!
//! all into one run directory under `--out`, which must be on a file system
//! every node shares. `--submit` hands the script to `sbatch`; `--wait` waits
//! for the job, then merges the run's manifest and says how it ended.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::SystemTime;

use exp_results::manifest::RunStatus;

#[derive(clap::Args)]
pub struct Args {
    /// A spec (`.exp`) or a plan (`.json`).
    file: PathBuf,
    /// A job array of N tasks, each running a share of the trials (`--shard K/N`).
    #[arg(long, value_name = "N", required_unless_present = "split", conflicts_with = "split")]
    shards: Option<u32>,
    /// One job of N tasks (`srun`), each running part K of every trial's
    /// workloads (`--split K/N`).
    #[arg(long, value_name = "N")]
    split: Option<u32>,
    /// Nodes of a `--split` job [default: one per task].
    #[arg(long, requires = "split")]
    nodes: Option<u32>,
    /// The partition (`#SBATCH --partition`).
    #[arg(long)]
    partition: Option<String>,
    /// Time limit of each task, as Slurm writes it (`30`, `2:00:00`, `1-12`).
    #[arg(long)]
    time: Option<String>,
    /// CPUs of each task (`#SBATCH --cpus-per-task`).
    #[arg(long)]
    cpus_per_task: Option<u32>,
    /// Memory of each node (`#SBATCH --mem`), e.g. `8G`.
    #[arg(long)]
    mem: Option<String>,
    /// Any other sbatch option, as written after `#SBATCH ` (repeatable),
    /// e.g. `--sbatch-option=--account=lab`.
    #[arg(long = "sbatch-option", value_name = "OPTION")]
    sbatch_options: Vec<String>,
    /// Where run directories go, on a file system every node shares.
    #[arg(long, default_value = "runs")]
    out: PathBuf,
    /// The run's id [default: the time and the plan's hash].
    #[arg(long)]
    run_id: Option<String>,
    /// Passed to every `expc run`.
    #[arg(long)]
    time_scale: Option<f64>,
    /// Run only these trials (as `expc run --trials`).
    #[arg(long)]
    trials: Option<String>,
    /// Override the experiment's seed (specs only).
    #[arg(long)]
    seed: Option<u64>,
    /// Hand the script to `sbatch`.
    #[arg(long)]
    submit: bool,
    /// With `--submit`: wait for the job, merge its manifest and report.
    #[arg(long, requires = "submit")]
    wait: bool,
}

/// How the job's tasks divide the run.
enum Layout {
    Shards(u32),
    Split { tasks: u32, nodes: u32 },
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let layout = match (args.shards, args.split) {
        (Some(n), None) if n > 0 => Layout::Shards(n),
        (None, Some(n)) if n > 0 => Layout::Split {
            tasks: n,
            nodes: args.nodes.unwrap_or(n).clamp(1, n),
        },
        _ => return Err("--shards or --split needs at least 1 task".into()),
    };
    if let Some(scale) = args.time_scale {
        exp_runtime::check_time_scale(scale).map_err(|e| e.to_string())?;
    }
    check_sbatch_values(&args)?;
    if let Some(run_id) = &args.run_id {
        exp_results::check_component("run id", run_id).map_err(|e| format!("--run-id: {e}"))?;
    }
    let Some((plan, _)) = crate::run::load(&args.file, args.seed)? else {
        return Ok(ExitCode::FAILURE);
    };
    if let Some(trials) = &args.trials {
        exp_runtime::TrialSelection::parse(trials, plan.trial_count()).map_err(|e| format!("--trials: {e}"))?;
    }
    let sha = exp_results::plan_sha256(&plan).map_err(|e| e.to_string())?;
    let run_id = args
        .run_id
        .clone()
        .unwrap_or_else(|| exp_results::new_run_id(SystemTime::now(), &sha));
    let out = absolute(&args.out)?;
    let experiment_dir = out.join(exp_results::experiment_dir_name(&plan.experiment.name));
    crate::out_dir::check(&args.out, &experiment_dir)?;
    let run_dir = experiment_dir.join(&run_id);
    // Beside the run directory, not in it: the job's files are no results.
    let job_dir = run_dir.with_file_name(format!("{run_id}.slurm"));
    if job_dir
        .to_string_lossy()
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "{:?}: `#SBATCH --output` cannot hold a path with spaces or control characters; choose an --out without them",
            job_dir
        ));
    }
    std::fs::create_dir_all(&job_dir).map_err(|e| format!("cannot create {}: {e}", job_dir.display()))?;
    let plan_path = job_dir.join("plan.json");
    let plan_json = serde_json::to_string_pretty(&plan).map_err(|e| e.to_string())? + "\n";
    write(&plan_path, &plan_json)?;
    let expc = std::env::current_exe().map_err(|e| format!("cannot find the expc executable: {e}"))?;
    write_executable(
        &job_dir.join("task.sh"),
        &task_script(&expc, &plan_path, &out, &run_id, &layout, &args),
    )?;
    let job = job_dir.join("job.sbatch");
    write(&job, &job_script(&plan.experiment.name, &job_dir, &layout, &args))?;
    outln!(
        "wrote {} (plan {}, run {})",
        job.display(),
        &sha[..8],
        run_dir.display()
    );
    if !args.submit {
        outln!("submit it with: sbatch {}", job.display());
        return Ok(ExitCode::SUCCESS);
    }
    submit(&job, args.wait)?;
    if !args.wait {
        outln!(
            "when it has run: expc run --merge {0}   (or expc report {0})",
            run_dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let manifest = exp_results::write_merged(&run_dir)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "the job wrote no manifest in {}: see {}",
                run_dir.display(),
                job_dir.display()
            )
        })?;
    crate::summary::print_run(&run_dir, &manifest);
    Ok(match manifest.status {
        RunStatus::Complete => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}

/// Every option value written into an `#SBATCH` line holds no control
/// character: a newline would end the line, the rest would be a shell
/// command in the job, and sbatch reads no `#SBATCH` line after a command.
/// The partition, time and memory are single words; another option starts
/// with `-`.
fn check_sbatch_values(args: &Args) -> Result<(), String> {
    let words = [("partition", &args.partition), ("time", &args.time), ("mem", &args.mem)];
    let words = words
        .into_iter()
        .filter_map(|(name, value)| Some((name, value.as_deref()?, true)));
    let options = args.sbatch_options.iter().map(|o| ("sbatch-option", o.as_str(), false));
    for (name, value, word) in words.chain(options) {
        let why = if let Some(c) = value.chars().find(|c| c.is_control()) {
            format!("it holds the control character U+{:04X}", u32::from(c))
        } else if value.trim().is_empty() {
            "it is empty".to_string()
        } else if word && value.chars().any(char::is_whitespace) {
            "it holds a space".to_string()
        } else if !word && !value.starts_with('-') {
            "an sbatch option starts with `-`, e.g. `--account=lab`".to_string()
        } else {
            continue;
        };
        return Err(format!("--{name} {value:?} cannot be an `#SBATCH` line: {why}"));
    }
    Ok(())
}

/// What each task runs: `expc run` of the plan, as shard or part K.
fn task_script(expc: &Path, plan: &Path, out: &Path, run_id: &str, layout: &Layout, args: &Args) -> String {
    let part = match layout {
        Layout::Shards(n) => format!("--shard \"${{SLURM_ARRAY_TASK_ID}}/{n}\""),
        Layout::Split { .. } => "--split \"${SLURM_PROCID}/${SLURM_NTASKS}\"".to_string(),
    };
    let mut command = format!(
        "exec {} run {} --out {} --run-id {} {part}",
        quote(&expc.to_string_lossy()),
        quote(&plan.to_string_lossy()),
        quote(&out.to_string_lossy()),
        quote(run_id)
    );
    if let Some(scale) = args.time_scale {
        let _ = write!(command, " --time-scale {scale}");
    }
    if let Some(trials) = &args.trials {
        let _ = write!(command, " --trials {}", quote(trials));
    }
    format!("#!/bin/bash\n# One task of an expc Slurm job (written by `expc slurm`).\nset -eu\n{command}\n")
}

/// The sbatch script: resources as `#SBATCH` lines, then the tasks.
fn job_script(experiment: &str, job_dir: &Path, layout: &Layout, args: &Args) -> String {
    let mut lines = vec![
        "#!/bin/bash".to_string(),
        format!(
            "#SBATCH --job-name=expc-{}",
            exp_results::experiment_dir_name(experiment)
        ),
    ];
    let output = match layout {
        Layout::Shards(n) => {
            lines.push(format!("#SBATCH --array=0-{}", n - 1));
            "slurm-%A_%a.out"
        }
        Layout::Split { tasks, nodes } => {
            lines.push(format!("#SBATCH --ntasks={tasks}"));
            lines.push(format!("#SBATCH --nodes={nodes}"));
            "slurm-%j.out"
        }
    };
    lines.push(format!("#SBATCH --output={}", job_dir.join(output).display()));
    let options = [
        ("partition", args.partition.clone()),
        ("time", args.time.clone()),
        ("cpus-per-task", args.cpus_per_task.map(|c| c.to_string())),
        ("mem", args.mem.clone()),
    ];
    for (name, value) in options {
        if let Some(value) = value {
            lines.push(format!("#SBATCH --{name}={value}"));
        }
    }
    lines.extend(args.sbatch_options.iter().map(|o| format!("#SBATCH {o}")));
    let task = quote(&job_dir.join("task.sh").to_string_lossy());
    lines.push("set -eu".into());
    lines.push(match layout {
        // Each array task is one `expc run --shard`.
        Layout::Shards(_) => format!("exec {task}"),
        // One `expc run --split` per task; srun starts them all.
        Layout::Split { .. } => format!("exec srun --kill-on-bad-exit=0 {task}"),
    });
    lines.join("\n") + "\n"
}

/// `sbatch --parsable [--wait] JOB`; prints the job id.
fn submit(job: &Path, wait: bool) -> Result<(), String> {
    let mut sbatch = Command::new("sbatch");
    sbatch.arg("--parsable");
    if wait {
        sbatch.arg("--wait");
    }
    let output = sbatch
        .arg(job)
        .output()
        .map_err(|e| format!("cannot run sbatch (is Slurm's client installed and SLURM_CONF set?): {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let id = stdout.lines().next().unwrap_or("").trim();
    if !id.is_empty() {
        outln!("submitted job {id}");
    }
    // With --wait, a failed task makes sbatch fail too: the merged manifest
    // then says which trials failed, so only a refused submission is an error.
    if !output.status.success() && (id.is_empty() || !wait) {
        return Err(format!(
            "sbatch failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(())
}

/// `text` as one word for bash, whatever it holds.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("cannot resolve {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn write_executable(path: &Path, text: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_bash() {
        assert_eq!(quote("plain"), "'plain'");
        assert_eq!(quote("it's $HOME"), r"'it'\''s $HOME'");
    }
}
