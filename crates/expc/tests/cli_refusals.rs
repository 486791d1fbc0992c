//! Command-line input refused with the rule it breaks (issue 39): a shard
//! count past what a shard holds, an `--out` that cannot be a directory;
//! and the dry run's total of a study longer than `u64` nanoseconds hold.
//! Each through the binary, from outside.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::Path;
use std::process::Output;

use crate::common::{expc, text, Scratch};

const SPEC: &str = r#"
experiment "refusals" {
  duration = 1s
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = 10%
    for         = 500ms
  }
}
"#;

fn run(spec: &Path, args: &[&str]) -> Output {
    expc().arg("run").arg(spec).args(args).output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_shard_names_the_rule_it_breaks() {
    let scratch = Scratch::new("refusals-shard");
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let cases = [
        ("0/4294967296", "N must be a whole number from 1 to 4,294,967,295"),
        ("0/0", "N must be a whole number from 1 to 4,294,967,295"),
        ("4/4", "K must be from 0 to N − 1 = 3"),
        ("1-2", "is not a shard: write K/N"),
    ];
    for (shard, rule) in cases {
        let output = run(&spec, &["--dry-run", "--shard", shard]);
        assert_eq!(output.status.code(), Some(2), "{shard}: {}", text(&output));
        assert!(stderr(&output).contains(rule), "{shard}: {}", text(&output));
    }
}

#[test]
fn an_out_that_cannot_be_a_directory_says_why() {
    let scratch = Scratch::new("refusals-out");
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let dangling = scratch.0.join("runs");
    let target = scratch.0.join("elsewhere");
    std::os::unix::fs::symlink(&target, &dangling).unwrap();
    let file = scratch.0.join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = |p: &Path| p.to_str().unwrap().to_string();
    let cases = [
        (
            out(&dangling),
            format!(
                "--out {} is a symbolic link to {}, which does not exist",
                dangling.display(),
                target.display()
            ),
        ),
        (
            out(&file),
            format!("--out {} is a file, not a directory", file.display()),
        ),
        (
            out(&file.join("sub")),
            format!("{} is a file, not a directory", file.display()),
        ),
    ];
    for (dir, message) in cases {
        for dry in [false, true] {
            let mut args = vec!["--out", dir.as_str()];
            if dry {
                args.push("--dry-run");
            }
            let output = run(&spec, &args);
            assert_eq!(output.status.code(), Some(1), "{args:?}: {}", text(&output));
            assert!(stderr(&output).contains(&message), "{args:?}: {}", text(&output));
            assert!(!stderr(&output).contains("File exists"), "{}", text(&output));
        }
    }
    assert!(!target.exists(), "nothing was created through the link");
    // A link to a directory is a directory.
    std::fs::create_dir(&target).unwrap();
    let output = run(&spec, &["--out", &out(&dangling), "--dry-run"]);
    assert!(output.status.success(), "{}", text(&output));
}

#[test]
fn the_dry_run_total_of_a_very_long_study_is_counted_in_years() {
    let scratch = Scratch::new("refusals-total");
    let spec = scratch.0.join("long.exp");
    // 4,000 points × 25 repetitions = 100,000 trials of 2^53 − 1 ns (104
    // days) each (at most 4,000 devices on the embedded broker): 28,542 years, far
    // past the 584 years u64 nanoseconds hold (the total used to saturate
    // at "about 5124095 h").
    std::fs::write(
        &spec,
        r#"
experiment "long" {
  duration = 9007199254740991ns
  repeat   = 25
  sweep { n = 1..4000 step 1 }
  fleet "plant" {
    devices = n
    gap     = constant(1s)
    for     = 1s
  }
}
"#,
    )
    .unwrap();
    let output = run(&spec, &["--dry-run"]);
    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("each trial 104 d 5 h 59 min 59 s, about 28,542 years in all"),
        "{}",
        text(&output)
    );
}
