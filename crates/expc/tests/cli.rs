//! Integration tests of the `expc` binary: exit codes, determinism, seeds,
//! formatting, `explain` and help texts, each run in its own process.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// The repository root: relative paths in the commands below resolve from it.
fn repo_root() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `expc ARGS` in the repository root.
fn expc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_expc"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("expc runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// Asserts the exit code, showing both streams when it differs.
fn assert_exit(output: &Output, code: i32, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "{what}: expected exit code {code}\n--- stdout\n{}\n--- stderr\n{}",
        stdout(output),
        stderr(output)
    );
}

/// A file in the system's temporary folder with a name no other test (or
/// concurrent test run) uses, removed when dropped.
struct TempSpec {
    path: PathBuf,
}

impl TempSpec {
    fn new(name: &str, text: &str) -> TempSpec {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
        let file = format!("expc-cli-{}-{unique}-{name}.exp", std::process::id());
        let path = std::env::temp_dir().join(file);
        std::fs::write(&path, text).expect("temporary spec is writable");
        TempSpec { path }
    }

    fn arg(&self) -> &str {
        self.path.to_str().expect("temporary path is UTF-8")
    }

    fn read(&self) -> String {
        std::fs::read_to_string(&self.path).expect("temporary spec is readable")
    }
}

impl Drop for TempSpec {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

const QUICKSTART: &str = "examples/quickstart.exp";

/// 3 sweep points × 2 repetitions = 6 trials.
const SWEEP_SPEC: &str = r#"experiment "seeds" {
  duration = 10s
  repeat   = 2
  sweep {
    load = [20%, 40%, 60%]
  }

  anomaly "contention" {
    kind        = cpuoccupy
    utilization = load
  }

  fleet "sensors" {
    devices = 5
    gap     = exponential(mean = 100ms)
  }
}
"#;

#[test]
fn plan_is_byte_identical_across_processes() {
    let first = expc(&["plan", QUICKSTART]);
    let second = expc(&["plan", QUICKSTART]);
    assert_exit(&first, 0, "expc plan quickstart");
    assert_exit(&second, 0, "expc plan quickstart (again)");
    assert!(!first.stdout.is_empty(), "expc plan printed nothing");
    assert!(
        first.stdout == second.stdout,
        "two runs of `expc plan {QUICKSTART}` differ"
    );
    let plan: Value = serde_json::from_slice(&first.stdout).expect("the plan is JSON");
    assert_eq!(plan["source"]["root"], QUICKSTART);
}

#[test]
fn seed_changes_only_the_seeds() {
    let spec = TempSpec::new("sweep", SWEEP_SPEC);
    let plan = |seed: &str| -> Value {
        let output = expc(&["plan", spec.arg(), "--seed", seed]);
        assert_exit(&output, 0, &format!("expc plan --seed {seed}"));
        serde_json::from_slice(&output.stdout).expect("the plan is JSON")
    };
    let mut one = plan("1");
    let mut two = plan("2");

    assert_eq!(one["experiment"]["seed"], 1);
    assert_eq!(two["experiment"]["seed"], 2);
    let plans = [&one, &two].map(|p| exp_plan::Plan::from_json(p.to_string().as_bytes()).expect("a valid plan"));
    assert_eq!(plans[0].trial_count(), 6, "3 sweep points × 2 repetitions");
    assert_eq!(plans[0].point_count(), 3);

    // Trials are derived from the master seed, the only seed the plan holds.
    one["experiment"].as_object_mut().expect("an object").remove("seed");
    two["experiment"].as_object_mut().expect("an object").remove("seed");
    assert_eq!(one, two, "plans with different --seed differ in more than their seed");
    let (seeds_one, seeds_two) = (seeds(&plans[0]), seeds(&plans[1]));

    // Every derived seed changes with the master seed, and no two trials share one.
    for (a, b) in seeds_one.trial.iter().zip(&seeds_two.trial) {
        assert_ne!(a, b, "a trial seed does not depend on --seed");
    }
    for (a, b) in seeds_one.workload.iter().zip(&seeds_two.workload) {
        assert_ne!(a, b, "a workload seed does not depend on --seed");
    }
    let mut distinct = seeds_one.trial.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), seeds_one.trial.len(), "two trials share a seed");
    assert_eq!(seeds_one.workload.len(), 12, "6 trials × 2 workloads");
}

struct Seeds {
    trial: Vec<u64>,
    workload: Vec<u64>,
}

/// The trial and workload seeds of every trial, in plan order.
fn seeds(plan: &exp_plan::Plan) -> Seeds {
    let mut seeds = Seeds {
        trial: Vec::new(),
        workload: Vec::new(),
    };
    for trial in plan.trials() {
        seeds.trial.push(trial.seed);
        seeds.workload.extend(trial.seeds.values());
    }
    seeds
}

#[test]
fn check_fails_on_an_invalid_spec() {
    let spec = TempSpec::new(
        "invalid",
        "experiment \"x\" {\n  duration = 10s\n\n  fleet \"f\" {\n    devices = 10\n    gap     = 100ms\n    devces  = 20\n  }\n}\n",
    );
    let output = expc(&["check", spec.arg()]);
    assert_exit(&output, 1, "expc check on an invalid spec");
    let errors = stderr(&output);
    assert!(errors.contains("E0302"), "expected E0302 on stderr:\n{errors}");
    assert!(
        errors.contains("did you mean `devices`?"),
        "expected a suggestion on stderr:\n{errors}"
    );
    assert!(stdout(&output).is_empty(), "diagnostics belong on stderr");
}

/// A spec that cannot be read has no text to frame: the message and a help,
/// not an empty code frame (`1 │` over nothing).
#[test]
fn check_of_a_missing_file_shows_no_empty_frame() {
    let output = expc(&["check", "no-such-spec.exp"]);
    assert_exit(&output, 1, "expc check on a missing file");
    let errors = stderr(&output);
    assert!(
        errors.contains("error[E0204]: cannot read `no-such-spec.exp`"),
        "{errors}"
    );
    assert!(errors.contains("help: check the path"), "{errors}");
    assert!(
        !errors.contains('│') && !errors.contains('┌'),
        "an empty code frame:\n{errors}"
    );
}

#[test]
fn check_passes_on_a_valid_spec() {
    let output = expc(&["check", QUICKSTART]);
    assert_exit(&output, 0, "expc check quickstart");
    assert!(stderr(&output).contains("ok"), "expected `ok`:\n{}", stderr(&output));
}

#[test]
fn plan_fails_on_an_invalid_spec() {
    let spec = TempSpec::new("no-experiment", "let gap = 100ms\n");
    let output = expc(&["plan", spec.arg()]);
    assert_exit(&output, 1, "expc plan on a file without an experiment");
    assert!(
        stderr(&output).contains("E0306"),
        "expected E0306:\n{}",
        stderr(&output)
    );
    assert!(output.stdout.is_empty(), "no plan may be printed when there are errors");
}

#[test]
fn fmt_check_rejects_then_fmt_fixes() {
    let messy = "experiment \"x\" {   duration=10s\n anomaly \"a\" {kind=cpuoccupy\n   for = 5s}}\n";
    let spec = TempSpec::new("unformatted", messy);

    let check = expc(&["fmt", "--check", spec.arg()]);
    assert_exit(&check, 1, "expc fmt --check on an unformatted file");
    assert!(stderr(&check).contains("not formatted"), "{}", stderr(&check));
    assert_eq!(spec.read(), messy, "`fmt --check` must not change the file");

    let fix = expc(&["fmt", spec.arg()]);
    assert_exit(&fix, 0, "expc fmt");
    let formatted = spec.read();
    assert_ne!(formatted, messy, "expc fmt changed nothing");
    assert!(
        formatted.contains("  duration = 10s\n"),
        "unexpected formatting:\n{formatted}"
    );

    let recheck = expc(&["fmt", "--check", spec.arg()]);
    assert_exit(&recheck, 0, "expc fmt --check after expc fmt");
    let again = expc(&["fmt", spec.arg()]);
    assert_exit(&again, 0, "expc fmt on a formatted file");
    assert_eq!(spec.read(), formatted, "expc fmt is not idempotent");

    // Formatting keeps the meaning: both versions check clean.
    assert_exit(&expc(&["check", spec.arg()]), 0, "expc check after expc fmt");
}

/// Statements written on one line are split onto their own lines and must be
/// aligned as a run in the same pass, or a second `expc fmt` changes the file.
#[test]
fn fmt_is_idempotent_for_statements_on_one_line() {
    let spec = TempSpec::new(
        "one-line",
        "experiment \"x\" {\n  anomaly \"a\" { kind = cpuoccupy  for = 5s }\n}\n",
    );
    assert_exit(&expc(&["fmt", spec.arg()]), 0, "expc fmt");
    let once = spec.read();
    let check = expc(&["fmt", "--check", spec.arg()]);
    assert_exit(&expc(&["fmt", spec.arg()]), 0, "expc fmt (again)");
    let twice = spec.read();
    assert_eq!(once, twice, "a second `expc fmt` changed the file");
    assert_exit(&check, 0, "expc fmt --check after expc fmt");
}

#[test]
fn fmt_never_rewrites_a_file_that_does_not_parse() {
    let broken = "experiment \"x\" {\n  duration 10s\n}\n";
    let spec = TempSpec::new("broken", broken);
    let output = expc(&["fmt", spec.arg()]);
    assert_exit(&output, 1, "expc fmt on a file with a syntax error");
    assert!(stderr(&output).contains("E0101"), "{}", stderr(&output));
    assert_eq!(spec.read(), broken);
}

#[test]
fn explain_prints_the_explanation() {
    let output = expc(&["explain", "E0302"]);
    assert_exit(&output, 0, "expc explain E0302");
    let text = stdout(&output);
    assert!(text.contains("unknown property"), "{text}");
    assert_eq!(stdout(&expc(&["explain", "e0302"])), text, "codes are case-insensitive");

    let list = expc(&["explain", "--list"]);
    assert_exit(&list, 0, "expc explain --list");
    assert!(stdout(&list).contains("E0302  unknown property"), "{}", stdout(&list));

    let unknown = expc(&["explain", "E9999"]);
    assert_exit(&unknown, 1, "expc explain of an unknown code");
    assert!(stderr(&unknown).contains("E9999"), "{}", stderr(&unknown));
}

#[test]
fn plan_as_yaml() {
    let output = expc(&["plan", QUICKSTART, "--format", "yaml"]);
    assert_exit(&output, 0, "expc plan --format yaml");
    let text = stdout(&output);
    assert!(!text.trim_start().starts_with('{'), "expected YAML, got JSON:\n{text}");
    for key in ["plan_version", "experiment", "quickstart", "variants", "contention"] {
        assert!(text.contains(key), "`{key}` missing from the YAML plan:\n{text}");
    }
    assert_eq!(
        stdout(&expc(&["plan", QUICKSTART, "--format", "yaml"])),
        text,
        "YAML output is not deterministic"
    );
}

#[test]
fn plan_to_a_file_matches_stdout() {
    let out = TempSpec::new("plan-output", "");
    let written = expc(&["plan", QUICKSTART, "-o", out.arg()]);
    assert_exit(&written, 0, "expc plan -o");
    assert!(written.stdout.is_empty(), "with -o nothing goes to stdout");
    assert_eq!(out.read(), stdout(&expc(&["plan", QUICKSTART])));
}

/// Subcommands listed under `Commands:` in `expc --help`, except `help`.
fn subcommands() -> Vec<String> {
    let help = stdout(&expc(&["--help"]));
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn top_level_help_has_examples() {
    let output = expc(&["--help"]);
    assert_exit(&output, 0, "expc --help");
    let text = stdout(&output);
    assert!(text.contains("Examples"), "`expc --help` shows no examples:\n{text}");
}

#[test]
fn every_subcommand_help_has_examples() {
    let names = subcommands();
    for expected in ["check", "plan", "fmt", "explain", "run", "report", "calibrate"] {
        assert!(
            names.iter().any(|n| n == expected),
            "`{expected}` missing from `expc --help`: {names:?}"
        );
    }
    for name in &names {
        let output = expc(&[name, "--help"]);
        assert_exit(&output, 0, &format!("expc {name} --help"));
        let text = stdout(&output);
        assert!(
            text.contains("Examples"),
            "`expc {name} --help` shows no examples:\n{text}"
        );
    }
}

#[test]
fn version_is_printed() {
    let output = expc(&["--version"]);
    assert_exit(&output, 0, "expc --version");
    assert!(stdout(&output).starts_with("expc "), "{}", stdout(&output));
}

/// Every command that prints ends quietly when its reader has gone away
/// (`expc plan spec | head -2`): no panic, no "Broken pipe" message.
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let root = repo_root();
    let commands: [&[&str]; 7] = [
        &["plan", "specs/traffic/structure-rtt.exp"],
        &["plan", "specs/traffic/structure-rtt.exp", "--format", "yaml"],
        &["run", "specs/iot/message-size.exp", "--dry-run"],
        &["check", "specs/iot/message-size.exp"],
        &["explain", "E0101"],
        &["fmt", "--check", "examples/quickstart.exp"],
        &["--help"],
    ];
    for args in commands {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_expc"))
            .current_dir(&root)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader is gone before the first line is written.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let err = stderr(&output);
        assert!(
            output.status.code().is_some_and(|c| c != 101) && !err.contains("panicked") && !err.contains("Broken pipe"),
            "expc {args:?}: {:?}\n{err}",
            output.status
        );
    }
}
