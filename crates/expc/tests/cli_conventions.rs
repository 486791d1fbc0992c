//! The command-line conventions people expect: shell completions that load
//! in a real bash, `fmt -` and `fmt --check` with a diff, YAML plans chosen
//! by their extension and run like JSON ones, and a language reference that
//! lists every command.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{expc, text, Scratch};

const FIRST_FLEET: &str = "examples/01-first-fleet.exp";

fn repo_root() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn bash_completes_commands_and_options_from_the_generated_script() {
    let script = expc().args(["completions", "bash"]).output().unwrap();
    assert!(script.status.success(), "{}", text(&script));
    let dir = Scratch::new("completions");
    let path = dir.0.join("expc.bash");
    std::fs::write(&path, &script.stdout).unwrap();
    // What bash's completion machinery does on TAB: set the words and call
    // the function `complete -F` registered.
    let probe = format!(
        "source {}\n\
         complete -p expc\n\
         COMP_WORDS=(expc te); COMP_CWORD=1; _expc expc te expc; echo \"commands: ${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(expc test --ju); COMP_CWORD=2; _expc expc --ju test; echo \"options: ${{COMPREPLY[*]}}\"\n",
        path.display()
    );
    let bash = Command::new("bash").args(["--norc", "-c", &probe]).output().unwrap();
    let out = String::from_utf8_lossy(&bash.stdout);
    assert!(bash.status.success(), "{}", text(&bash));
    assert!(out.contains("-F _expc expc"), "{out}");
    assert!(out.contains("commands: test"), "{out}");
    assert!(out.contains("options: --junit"), "{out}");
    for shell in ["zsh", "fish"] {
        let output = expc().args(["completions", shell]).output().unwrap();
        assert!(
            output.status.success() && output.stdout.len() > 1000,
            "{}",
            text(&output)
        );
    }
}

#[test]
fn fmt_dash_formats_standard_input_and_check_shows_the_diff() {
    let run = |args: &[&str], input: &str| {
        let mut child = expc()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let formatted = run(&["fmt", "-"], "let   x = 1\n");
    assert!(formatted.status.success(), "{}", text(&formatted));
    assert_eq!(String::from_utf8_lossy(&formatted.stdout), "let x = 1\n");

    let check = run(&["fmt", "--check", "-"], "let   x = 1\n");
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(check.stdout.is_empty());
    let err = String::from_utf8_lossy(&check.stderr);
    assert!(err.contains("   1 - let   x = 1\n   1 + let x = 1"), "{err}");
    assert_eq!(run(&["fmt", "--check", "-"], "let x = 1\n").status.code(), Some(0));

    // Text that does not parse: diagnostics, and nothing an editor would
    // take for the formatted text.
    let broken = run(&["fmt", "-"], "let x = \n");
    assert_eq!(broken.status.code(), Some(1), "{}", text(&broken));
    assert!(broken.stdout.is_empty());
    assert!(String::from_utf8_lossy(&broken.stderr).contains("error[E"));

    // A file's --check shows the same diff.
    let dir = Scratch::new("fmt-check-diff");
    let spec = dir.0.join("spec.exp");
    std::fs::write(&spec, "let   x = 1\n").unwrap();
    let file_check = expc().arg("fmt").arg("--check").arg(&spec).output().unwrap();
    assert_eq!(file_check.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&file_check.stderr).contains("   1 + let x = 1"));
}

#[test]
fn a_plan_written_as_yaml_runs_like_the_json_plan() {
    let dir = Scratch::new("yaml-plan");
    let (yaml, json) = (dir.0.join("plan.yaml"), dir.0.join("plan.json"));
    for path in [&yaml, &json] {
        let output = expc()
            .current_dir(repo_root())
            .args(["plan", FIRST_FLEET, "-o"])
            .arg(path)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output));
    }
    let yaml_text = std::fs::read_to_string(&yaml).unwrap();
    assert!(yaml_text.starts_with("plan_version: "), "{yaml_text}");
    // Plain keys and compact sequences of mappings (`- name: …`).
    assert!(
        !yaml_text.contains("\"experiment\":") && !yaml_text.contains("-\n"),
        "{yaml_text}"
    );
    // The same schedule and preflight from either file.
    let dry = |plan: &Path| {
        let output = expc().arg("run").arg(plan).arg("--dry-run").output().unwrap();
        assert!(output.status.success(), "{}", text(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert_eq!(dry(&yaml), dry(&json));
    // A YAML plan is checked like a JSON one.
    std::fs::write(
        &yaml,
        yaml_text.replace(&format!("plan_version: {}", exp_plan::PLAN_VERSION), "plan_version: 3"),
    )
    .unwrap();
    let old = expc().arg("run").arg(&yaml).arg("--dry-run").output().unwrap();
    assert_eq!(old.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&old.stderr).contains("plan version 3"),
        "{}",
        text(&old)
    );
}

/// docs/language.md §12 names every command `expc --help` lists.
#[test]
fn the_language_reference_lists_every_command() {
    let help = expc().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert!(commands.len() >= 14, "{commands:?}");
    let reference = std::fs::read_to_string(repo_root().join("docs/language.md")).unwrap();
    let section = reference
        .split("## 12. Command line")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap();
    for command in commands {
        assert!(
            section.contains(&format!("| `expc {command}")),
            "docs/language.md §12 does not list `expc {command}`"
        );
    }
}

#[test]
fn check_prints_one_json_object_per_diagnostic_and_warns_of_an_empty_file() {
    let dir = Scratch::new("message-format");
    let spec = dir.0.join("spec.exp");
    std::fs::write(
        &spec,
        "experiment \"x\" {\n  duration = 10s\n  fleet \"f\" {\n    devices = 1e3\n  }\n}\n",
    )
    .unwrap();
    let output = expc()
        .args(["check", "--message-format", "json"])
        .arg(&spec)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let devices = lines
        .iter()
        .find(|d| d["code"] == "E0401")
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(devices["severity"], "error");
    assert_eq!(devices["labels"][0]["line"], 4);
    assert_eq!(devices["labels"][0]["column"], 15);
    assert_eq!(devices["labels"][0]["primary"], true);
    assert_eq!(
        devices["help"],
        "an integer is written without a decimal point or exponent: `1000`"
    );
    // Every problem of the file is there: the fleet also lacks `gap`.
    assert!(lines.iter().any(|d| d["code"] == "E0303"), "{lines:?}");
    assert!(output.stderr.is_empty(), "{}", text(&output));

    let empty = dir.0.join("empty.exp");
    std::fs::write(&empty, "// nothing yet\n").unwrap();
    let output = expc().arg("check").arg(&empty).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("warning[W0802]: this file defines nothing"));
}

/// A dry run's times read as h/min/s, and a workload active in 103 windows
/// lists the first and counts the rest.
#[test]
fn a_dry_run_shows_totals_in_hours_and_counts_the_windows_it_leaves_out() {
    let output = expc()
        .current_dir(repo_root())
        .args(["run", "specs/traffic/bandwidth-variability.exp", "--dry-run"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(out.contains("each trial 1 h, about 3 h 2 min in all"), "{out}");
    assert!(
        out.contains("0 s–5 s, 35 s–40 s, 1 min 10 s–1 min 15 s, 1 min 45 s–1 min 50 s, … and 99 more"),
        "{out}"
    );
}
