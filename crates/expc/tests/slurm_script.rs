//! `expc slurm` without `--submit` writes `job.sbatch` and `task.sh` and
//! nothing else: no cluster needed to check what they hold. A value with a
//! newline once ended an `#SBATCH` line and put a shell command into the job
//! (after which sbatch read no more `#SBATCH` lines); every value that
//! reaches the scripts is refused or quoted (issue 39).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::Path;
use std::process::Output;

use crate::common::{expc, text, Scratch};

const SPEC: &str = r#"
experiment "sbatch" {
  duration = 1s
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = 10%
    for         = 500ms
  }
}
"#;

fn slurm(spec: &Path, out: &Path, args: &[&str]) -> Output {
    expc()
        .arg("slurm")
        .arg(spec)
        .args(["--shards", "2", "--out"])
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

/// Every line of `job.sbatch` before the first command is an `#SBATCH`
/// line (or the shebang), and the commands are the two expc writes.
fn assert_well_formed(job: &str) {
    let lines: Vec<&str> = job.lines().collect();
    assert_eq!(lines[0], "#!/bin/bash", "{job}");
    let commands: Vec<&&str> = lines[1..].iter().filter(|l| !l.starts_with("#SBATCH ")).collect();
    assert_eq!(commands.len(), 2, "{job}");
    assert_eq!(*commands[0], "set -eu", "{job}");
    assert!(commands[1].starts_with("exec '"), "{job}");
}

#[test]
fn values_that_would_break_an_sbatch_line_are_refused() {
    let scratch = Scratch::new("slurm-values");
    let spec = scratch.0.join("study.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let out = scratch.0.join("runs");
    let refused = [
        (
            vec!["--partition", "debug\necho injected"],
            "--partition \"debug\\necho injected\"",
        ),
        (vec!["--time", "1:00:00\r"], "it holds the control character U+000D"),
        (
            vec!["--mem", "8 G"],
            "--mem \"8 G\" cannot be an `#SBATCH` line: it holds a space",
        ),
        (vec!["--sbatch-option=--account=lab\necho injected"], "U+000A"),
        (vec!["--sbatch-option=account=lab"], "an sbatch option starts with `-`"),
        (vec!["--partition", ""], "it is empty"),
        (vec!["--run-id", "a\nb"], "--run-id: invalid run id"),
        (vec!["--run-id", "../escape"], "--run-id: invalid run id"),
    ];
    for (args, expected) in refused {
        let output = slurm(&spec, &out, &args);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {}", text(&output));
        assert!(!out.exists(), "{args:?}: nothing is written");
    }

    // Accepted values, and a spec whose name holds a newline: its path
    // reaches only plan.json, never a script.
    let odd = scratch.0.join("odd\nname.exp");
    std::fs::write(&odd, SPEC).unwrap();
    let args = [
        "--partition",
        "debug,long",
        "--time",
        "1-12:00:00",
        "--mem",
        "8G",
        "--sbatch-option=--comment=two words",
        "--run-id",
        "r1",
        "--trials",
        "0",
    ];
    let output = slurm(&odd, &out, &args);
    assert!(output.status.success(), "{}", text(&output));
    let job_dir = out.join("sbatch/r1.slurm");
    let job = std::fs::read_to_string(job_dir.join("job.sbatch")).unwrap();
    assert_well_formed(&job);
    for line in [
        "#SBATCH --partition=debug,long",
        "#SBATCH --time=1-12:00:00",
        "#SBATCH --mem=8G",
        "#SBATCH --comment=two words",
    ] {
        assert!(job.lines().any(|l| l == line), "{line}: {job}");
    }
    let task = std::fs::read_to_string(job_dir.join("task.sh")).unwrap();
    assert_eq!(task.lines().count(), 4, "{task}");
    assert!(task.lines().last().unwrap().contains("--run-id 'r1' --shard"), "{task}");
    let plan: serde_json::Value = serde_json::from_slice(&std::fs::read(job_dir.join("plan.json")).unwrap()).unwrap();
    assert!(
        plan["source"]["root"].as_str().unwrap().ends_with("odd\nname.exp"),
        "{plan:?}"
    );
}

#[test]
fn an_out_that_cannot_be_a_directory_is_refused_before_anything_is_written() {
    let scratch = Scratch::new("slurm-out");
    let spec = scratch.0.join("study.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let dangling = scratch.0.join("runs");
    std::os::unix::fs::symlink(scratch.0.join("gone"), &dangling).unwrap();
    let output = slurm(&spec, &dangling, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("is a symbolic link to") && stderr.contains("which does not exist"),
        "{}",
        text(&output)
    );
    assert!(!scratch.0.join("gone").exists(), "nothing created through the link");
}
