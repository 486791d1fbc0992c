//! `expc run --resume` and the run directory, asserted from outside the
//! process: exit codes, messages, the files afterwards and their rows read
//! back through exp-parquet. Every run directory is named the way a user would (a
//! bare name, `.`, a symlink), every journal damage a crash or an editor can
//! cause is tolerated without losing a row, and a run directory moved away
//! while running stops its runner instead of being made again.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::{
    expc, files, read_parquet, rows_by_trial, run_dir, spawn_run, spawn_run_captured, text, wait_for, Scratch,
};
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};

/// Two 3 s trials of a memory leak with the monitor: a trial's checkpoint
/// holds monitor rows 2 s into it.
const SPEC: &str = r#"
experiment "resumed" {
  duration = 3s
  repeat   = 2
  anomaly "leak" {
    kind  = memleak
    size  = 1MiB
    rate  = 10/s
    limit = 8MiB
  }
  monitor { interval = 200ms }
}
"#;

fn write_spec(scratch: &Scratch) -> PathBuf {
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, SPEC).unwrap();
    spec
}

/// `expc run --resume ARG [extra]` from `cwd`.
fn resume(cwd: &Path, arg: impl AsRef<std::ffi::OsStr>, extra: &[&Path]) -> Output {
    let mut command: Command = expc();
    command.current_dir(cwd).arg("run").arg("--resume").arg(arg).args(extra);
    command.output().unwrap()
}

/// Waits until trial `trial` runs and its monitor rows reached a checkpoint.
fn checkpointed(out: &Path, trial: usize) -> PathBuf {
    wait_for(&format!("trial {trial}'s checkpoint"), Duration::from_secs(120), || {
        let dir = run_dir(out)?;
        let manifest = Manifest::read(&dir).ok()?;
        (manifest.trials.get(trial)?.status == TrialStatus::Running).then_some(())?;
        let partial = dir.join(format!("tables/.partial/system_metrics/trial={trial}"));
        files(&partial)
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "parquet"))
            .then_some(dir)
    })
}

/// A run killed with SIGKILL once trial 1 has a checkpoint (trial 0 complete).
fn crashed(scratch: &Scratch) -> PathBuf {
    let spec = write_spec(scratch);
    let out = scratch.0.join("runs");
    let mut child = spawn_run(&spec, &out);
    checkpointed(&out, 1);
    child.kill().unwrap();
    child.wait().unwrap();
    run_dir(&out).unwrap()
}

/// Every file below `dir` with its bytes, and every directory: what "left
/// exactly as it was" compares.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.insert(path.clone(), Vec::new());
            found.extend(snapshot(&path));
        } else {
            found.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    found
}

/// Rows of every Parquet file below `dir` (attempts, checkpoints, tables).
fn parquet_rows_below(dir: &Path) -> usize {
    files(dir)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .map(|p| read_parquet(p).height())
        .sum()
}

/// No byte measured before the resume is gone: every Parquet file that
/// was in the run is still in it, with the same bytes, wherever it moved.
fn assert_nothing_lost(before: &BTreeMap<PathBuf, Vec<u8>>, dir: &Path) {
    let after: Vec<Vec<u8>> = snapshot(dir).into_values().collect();
    for (path, bytes) in before {
        if path.extension().is_some_and(|e| e == "parquet") {
            assert!(after.contains(bytes), "{} is gone", path.display());
        }
    }
}

/// A finished run that completed: final name, no lock, every trial once,
/// the manifest's table counts those of its files.
fn assert_finished(dir: &Path) -> Manifest {
    assert!(
        !dir.file_name().unwrap().to_string_lossy().starts_with('.'),
        "{}",
        dir.display()
    );
    assert!(!dir.join("runner.lock").exists(), "no lock left behind");
    let manifest = Manifest::read(dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete);
    assert!(manifest.trials.iter().all(|t| t.status == TrialStatus::Complete));
    let rows = rows_by_trial(dir);
    let expected: Vec<u32> = manifest.trials.iter().map(|t| t.trial).collect();
    for table in ["trials", "system_metrics", "anomaly_timeline"] {
        let trials: Vec<u32> = rows.keys().filter(|(t, _)| t == table).map(|(_, n)| *n).collect();
        assert_eq!(trials, expected, "{table}");
    }
    for (table, record) in &manifest.tables {
        let on_disk: usize = rows.iter().filter(|((t, _), _)| t == table).map(|(_, n)| n).sum();
        assert_eq!(
            record.rows as usize, on_disk,
            "the manifest counts {table}'s rows on disk"
        );
    }
    manifest
}

#[test]
fn a_run_is_resumed_by_a_bare_name_and_every_other_path_to_it() {
    let scratch = Scratch::new("resume-paths");
    let dir = crashed(&scratch);
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let elsewhere = scratch.0.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    // Each form resumes a copy of the crashed run of its own.
    for form in ["bare", "dot-slash", "slash", "symlink"] {
        let parent = scratch.0.join(form).join("resumed");
        std::fs::create_dir_all(&parent).unwrap();
        let copied = Command::new("cp").arg("-a").arg(&dir).arg(&parent).status().unwrap();
        assert!(copied.success());
        let before = snapshot(&parent.join(&name));
        let output = match form {
            "bare" => resume(&parent, &name, &[]),
            "dot-slash" => resume(&parent, format!("./{name}"), &[]),
            "slash" => resume(&parent, format!("{name}/"), &[]),
            _ => {
                let link = elsewhere.join("latest");
                std::os::unix::fs::symlink(parent.join(&name), &link).unwrap();
                let output = resume(&elsewhere, "latest", &[]);
                assert!(
                    std::fs::symlink_metadata(&link).unwrap().is_symlink(),
                    "the link stays a link"
                );
                output
            }
        };
        assert_eq!(output.status.code(), Some(0), "{form}: {}", text(&output));
        let finished = run_dir(&scratch.0.join(form)).unwrap();
        assert_finished(&finished);
        assert_nothing_lost(&before, &finished);
    }

    // `.` from inside the run, and a relative path from elsewhere.
    let copy = scratch.0.join("relative/resumed");
    std::fs::create_dir_all(&copy).unwrap();
    assert!(Command::new("cp")
        .arg("-a")
        .arg(&dir)
        .arg(&copy)
        .status()
        .unwrap()
        .success());
    let output = resume(&dir, ".", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_finished(&run_dir(&scratch.0.join("runs")).unwrap());
    let output = resume(&elsewhere, format!("../relative/resumed/{name}"), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_finished(&run_dir(&scratch.0.join("relative")).unwrap());
}

#[test]
fn a_complete_run_is_left_exactly_as_it_was() {
    let scratch = Scratch::new("resume-complete");
    let spec = write_spec(&scratch);
    let out = scratch.0.join("runs");
    let output = expc().arg("run").arg(&spec).arg("--out").arg(&out).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let dir = run_dir(&out).unwrap();
    let experiment = dir.parent().unwrap();
    let before = snapshot(experiment);
    for (cwd, arg) in [
        (experiment, dir.file_name().unwrap()),
        (scratch.0.as_path(), dir.as_os_str()),
    ] {
        let output = resume(cwd, arg, &[]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("is complete: nothing to resume"),
            "{}",
            text(&output)
        );
        assert_eq!(snapshot(experiment), before, "not renamed, locked or rewritten");
    }

    // A runner that stopped between its last manifest and its rename: the
    // resume gives the run its final name, and nothing else.
    let partial = experiment.join(format!(".{}.partial", dir.file_name().unwrap().to_string_lossy()));
    std::fs::rename(&dir, &partial).unwrap();
    let output = resume(&scratch.0, &partial, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(snapshot(experiment), before);
}

#[test]
fn a_garbage_journal_line_hides_no_later_line_and_no_row() {
    let scratch = Scratch::new("resume-journal");
    let dir = crashed(&scratch);
    let crashed_rows = parquet_rows_below(&dir.join("tables/.partial/system_metrics/trial=1"));
    assert!(crashed_rows > 0);
    let journal = dir.join("manifest.journal");
    let lines = std::fs::read_to_string(&journal).unwrap();
    std::fs::write(&journal, format!("garbage{{{{\n{lines}")).unwrap();

    // Readers say which line they skipped, and still see trial 1 crashed.
    let report = expc().arg("report").arg(&dir).output().unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let stderr = String::from_utf8_lossy(&report.stderr);
    assert!(
        stderr.contains("manifest.journal: line 1: not a journal line"),
        "{stderr}"
    );
    let before = snapshot(&dir);

    let output = resume(&scratch.0, &dir, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("warning: ") && text(&output).contains("line 1"),
        "{}",
        text(&output)
    );
    let dir = run_dir(&scratch.0.join("runs")).unwrap();
    let manifest = assert_finished(&dir);
    assert_nothing_lost(&before, &dir);
    let attempts = &manifest.trials[1].attempts;
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_eq!(attempts[0].status, TrialStatus::Crashed);
    let kept = dir
        .join(attempts[0].files.as_ref().unwrap())
        .join("partial/system_metrics");
    assert_eq!(
        parquet_rows_below(&kept),
        crashed_rows,
        "the crashed trial's rows, kept"
    );
    assert!(
        manifest.trials[0].attempts.is_empty(),
        "trial 0 complete: kept, not run again"
    );
    assert!(manifest.resumes[0].warnings[0].contains("line 1: not a journal line"));
}

#[test]
fn a_journal_that_lost_every_line_still_loses_no_row() {
    let scratch = Scratch::new("resume-journal-lost");
    let dir = crashed(&scratch);
    let before = snapshot(&dir);
    std::fs::write(dir.join("manifest.journal"), b"").unwrap();
    let output = resume(&scratch.0, &dir, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let dir = run_dir(&scratch.0.join("runs")).unwrap();
    let manifest = assert_finished(&dir);
    assert_nothing_lost(&before, &dir);
    // Both trials looked never started; their files are attempts all the same.
    for trial in &manifest.trials {
        let attempt = &trial.attempts[..];
        assert!(
            matches!(attempt, [a] if a.files.is_some() && a.error.as_deref().unwrap().contains("files of this trial")),
            "{attempt:?}"
        );
    }
}

/// Removes `dir` while the runner may still be writing in it: a file it
/// makes between `remove_dir_all`'s emptying and its last `rmdir` fails that
/// call (ENOTEMPTY), so it is tried again until the directory is gone.
fn remove_while_written(dir: &Path) {
    for _ in 0..100 {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => continue,
            Err(e) => panic!("removing {}: {e}", dir.display()),
        }
    }
    panic!("{} kept being written for 100 removals", dir.display());
}

#[test]
fn a_run_directory_moved_while_running_stops_its_runner() {
    for removed in [false, true] {
        let scratch = Scratch::new(if removed { "resume-removed" } else { "resume-moved" });
        // One 8 s trial: moved 2 s in, well before its files are assembled.
        let spec = scratch.0.join("spec.exp");
        std::fs::write(&spec, SPEC.replace("3s", "8s").replace("repeat   = 2", "repeat   = 1")).unwrap();
        let out = scratch.0.join("runs");
        let child = spawn_run_captured(&spec, &out);
        let dir = checkpointed(&out, 0);
        let experiment = dir.parent().unwrap().to_path_buf();
        let moved = scratch.0.join("moved");
        let rows_before = parquet_rows_below(&dir);
        if removed {
            remove_while_written(&dir);
        } else {
            std::fs::rename(&dir, &moved).unwrap();
        }
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("was moved or removed while the run was writing it") && stderr.contains(".partial"),
            "{stderr}"
        );
        assert_eq!(
            std::fs::read_dir(&experiment).unwrap().count(),
            0,
            "nothing made again at the old path"
        );
        if removed {
            continue;
        }
        // The checkpoint may have been rewritten since, with more rows.
        assert!(
            parquet_rows_below(&moved) >= rows_before,
            "every row written is in the moved run"
        );
        let output = resume(&scratch.0, &moved, &[]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output));
        assert_finished(&scratch.0.join("moved"));
    }
}

#[test]
fn an_edited_plan_is_named_as_the_runs_plan_changing() {
    let scratch = Scratch::new("resume-plan");
    let dir = crashed(&scratch);
    let spec = scratch.0.join("spec.exp");
    let other = scratch.0.join("other.exp");
    std::fs::write(&other, SPEC.replace("repeat   = 2", "repeat   = 2\n  seed     = 99")).unwrap();
    let plan = dir.join("plan.json");
    let output = expc().arg("plan").arg(&other).arg("-o").arg(&plan).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let before = snapshot(&dir);
    let output = resume(&scratch.0, &dir, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the run's plan changed since it started"), "{stderr}");
    assert!(
        !stderr.contains("alone"),
        "no advice to do what was just done: {stderr}"
    );
    assert_eq!(snapshot(&dir), before, "nothing taken over");

    // The spec that started it puts the plan back, and the run goes on.
    std::fs::remove_file(&plan).unwrap();
    let output = resume(&scratch.0, &dir, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(
        text(&output).contains("cannot read the run's plan"),
        "{}",
        text(&output)
    );
    let output = resume(&scratch.0, &dir, &[&spec]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(text(&output).contains("written again"), "{}", text(&output));
    let dir = run_dir(&scratch.0.join("runs")).unwrap();
    let manifest = assert_finished(&dir);
    assert_eq!(
        exp_results::plan_sha256(&load_plan(&dir)).unwrap(),
        manifest.plan_sha256
    );
}

fn load_plan(dir: &Path) -> exp_plan::Plan {
    exp_plan::Plan::from_json(&std::fs::read(dir.join("plan.json")).unwrap()).unwrap()
}

#[test]
fn a_resume_while_the_runner_lives_is_refused_and_the_run_goes_on() {
    let scratch = Scratch::new("resume-live");
    let spec = write_spec(&scratch);
    let out = scratch.0.join("runs");
    let child = spawn_run_captured(&spec, &out);
    let dir = checkpointed(&out, 0);
    let output = resume(&scratch.0, &dir, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(
        text(&output).contains(&format!("being written by another process (pid {}", child.id())),
        "{}",
        text(&output)
    );
    let runner = child.wait_with_output().unwrap();
    assert_eq!(runner.status.code(), Some(0), "{}", text(&runner));
    assert_finished(&run_dir(&out).unwrap());
}

#[test]
fn earlier_attempts_and_damaged_files_are_kept_through_two_resumes() {
    let scratch = Scratch::new("resume-attempts");
    let dir = crashed(&scratch);
    // A checkpoint that is not Parquet, and an attempt-1 already there.
    for checkpoint in files(&dir.join("tables/.partial/system_metrics/trial=1")) {
        std::fs::write(checkpoint, b"not parquet").unwrap();
    }
    let earlier = dir.join("attempts/trial=1/attempt-1/tables/system_metrics");
    std::fs::create_dir_all(&earlier).unwrap();
    std::fs::write(earlier.join("part-0.parquet"), b"an earlier attempt").unwrap();
    let mut before = snapshot(&dir);

    // The first resume is killed in trial 1 too; the second completes.
    let mut first = expc()
        .arg("run")
        .arg("--resume")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let dir = wait_for("the resume to reach trial 1", Duration::from_secs(120), || {
        let dir = run_dir(&scratch.0.join("runs"))?;
        let manifest = Manifest::read(&dir).ok()?;
        (manifest.resumes.len() == 1).then_some(())?;
        Some(dir)
    });
    checkpointed(&scratch.0.join("runs"), 1);
    first.kill().unwrap();
    first.wait().unwrap();
    before.extend(snapshot(&dir));
    let output = resume(&scratch.0, &dir, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let dir = run_dir(&scratch.0.join("runs")).unwrap();
    let manifest = assert_finished(&dir);
    assert_nothing_lost(&before, &dir);
    let kept = |path: &str| std::fs::read(dir.join(path)).unwrap();
    assert_eq!(
        kept("attempts/trial=1/attempt-1/tables/system_metrics/part-0.parquet"),
        b"an earlier attempt"
    );
    let attempts: Vec<&str> = manifest.trials[1]
        .attempts
        .iter()
        .map(|a| a.files.as_deref().unwrap())
        .collect();
    assert_eq!(attempts, ["attempts/trial=1/attempt-2", "attempts/trial=1/attempt-3"]);
    assert!(files(&dir.join("attempts/trial=1/attempt-2/partial/system_metrics"))
        .iter()
        .all(|f| std::fs::read(f).unwrap() == b"not parquet"));
    assert_eq!(manifest.resumes.len(), 2);
    assert_eq!(manifest.resumes[1].previous_status, RunStatus::Crashed);
}
