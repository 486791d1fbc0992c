//! `cargo xtask new-kind` on a copy of the workspace's tracked files: a
//! kind added with it touches only the files it generates and the marked
//! lists, and (the ignored test) the copy builds and runs the new kind.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The throw-away kind the tests add.
const KIND: &str = "scaffold_probe";

/// The kind's own files.
const GENERATED: &[&str] = &[
    "crates/exp-check/src/registry/scaffold_probe.rs",
    "crates/exp-plan/src/scaffold_probe.rs",
    "crates/exp-runtime/src/scaffold_probe/check.rs",
    "crates/exp-runtime/src/scaffold_probe/mod.rs",
    "specs/scaffold_probe/scaffold_probe.exp",
];

/// The files with a marked list (and the docs it adds a line or a section to).
const EXTENDED: &[&str] = &[
    "crates/exp-check/src/registry/mod.rs",
    "crates/exp-claims/src/rows.rs",
    "crates/exp-plan/src/lib.rs",
    "crates/exp-plan/src/workload.rs",
    "crates/exp-report/src/expected.rs",
    "crates/exp-runtime/src/kinds.rs",
    "crates/exp-runtime/src/lib.rs",
    "docs/language.md",
    "docs/running.md",
];

fn workspace() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("..")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git").current_dir(dir).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The workspace's tracked files as they are in the working tree, copied
/// to a temporary directory and committed there, so `git status` shows
/// what the scaffold changed.
fn copy_of_workspace() -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let listed = git(&workspace(), &["ls-files", "-z"]);
    for path in listed.split('\0').filter(|path| !path.is_empty()) {
        let from = workspace().join(path);
        if !from.is_file() {
            continue; // deleted in the working tree
        }
        let to = copy.path().join(path);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(&from, &to).unwrap();
    }
    git(copy.path(), &["init", "-q"]);
    git(copy.path(), &["add", "-A"]);
    let identity = [
        "-c",
        "user.name=xtask",
        "-c",
        "user.email=xtask@localhost",
        "-c",
        "commit.gpgsign=false",
    ];
    git(
        copy.path(),
        &[&identity[..], &["commit", "-q", "--no-verify", "-m", "copy"]].concat(),
    );
    copy
}

fn scaffold(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("new-kind")
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap()
}

fn changed_files(root: &Path) -> BTreeSet<String> {
    git(root, &["status", "--porcelain", "--untracked-files=all"])
        .lines()
        .map(|line| line[3..].to_string())
        .collect()
}

#[test]
fn a_new_kind_touches_its_own_files_and_the_marked_lists_only() {
    let copy = copy_of_workspace();
    let root = copy.path();
    for (name, why) in [
        ("xml", "exists"),
        ("monitor", "exists"),
        ("audit", "is taken"),
        ("types", "is taken"),
        ("Ticker", "not a kind name"),
        ("tick-er", "not a kind name"),
        ("struct", "keyword"),
    ] {
        let output = scaffold(root, &[name, "--skip-reference"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success() && stderr.contains(why), "`{name}`: {stderr}");
    }
    assert!(changed_files(root).is_empty(), "a refused name changed files");

    let output = scaffold(root, &[KIND, "--skip-reference"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let expected: BTreeSet<String> = GENERATED.iter().chain(EXTENDED).map(|path| path.to_string()).collect();
    assert_eq!(changed_files(root), expected);

    // The marked lists gained lines and lost none (language.md's row of
    // workload kinds is one line rewritten).
    for line in git(root, &["diff", "--numstat"]).lines() {
        let [added, removed, path] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("{line}")
        };
        let most = if path == "docs/language.md" { 1 } else { 0 };
        assert!(removed.parse::<u32>().unwrap() <= most, "{path} lost lines: {line}");
        assert!(added.parse::<u32>().unwrap() > 0, "{path}");
    }

    // The generated Rust parses and is as rustfmt writes it.
    let rust: Vec<&&str> = GENERATED.iter().filter(|path| path.ends_with(".rs")).collect();
    let rustfmt = Command::new("rustfmt")
        .args(["--check", "--edition", "2021"])
        .args(rust.iter().map(|path| root.join(path)))
        .output()
        .unwrap();
    assert!(rustfmt.status.success(), "{}", String::from_utf8_lossy(&rustfmt.stdout));

    // The spec parses, and its workload block is the new kind's.
    let spec = fs::read_to_string(root.join(GENERATED[4])).unwrap();
    let (module, diagnostics) = exp_syntax::parse(exp_diagnostics::FileId(0), &spec);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(format!("{module:?}").contains(&format!("\"{KIND}\"")), "{module:?}");

    // A second kind of the same name is refused.
    let again = scaffold(root, &[KIND, "--skip-reference"]);
    assert!(!again.status.success(), "the kind was added twice");
}

/// The copy with the new kind builds, and runs the generated spec to a
/// complete run whose table has rows and which `expc report` summarises.
#[test]
#[ignore = "builds a copy of the workspace (about 14 min from nothing on 2 busy cores): cargo test -p xtask -- --ignored"]
fn the_new_kind_builds_and_runs() {
    let copy = copy_of_workspace();
    let root = copy.path();
    // Its own target directory: in the copy, or XTASK_COPY_TARGET_DIR to
    // keep one between runs.
    let target = std::env::var_os("XTASK_COPY_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    // With the reference: the copy's docs test builds and rewrites it.
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["new-kind", KIND, "--root"])
        .arg(root)
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let reference = git(root, &["diff", "docs/language.md"]);
    assert!(reference.contains(&format!("+### `{KIND} \"NAME\"")), "{reference}");

    let build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["build", "--quiet", "-p", "expc"])
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .unwrap();
    assert!(build.status.success(), "{}", String::from_utf8_lossy(&build.stderr));

    let expc = target.join("debug/expc");
    let out = root.join("runs");
    let run = Command::new(&expc)
        .current_dir(root)
        .args(["run", GENERATED[4], "--time-scale", "0.1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let experiment = fs::read_dir(&out).unwrap().flatten().next().unwrap().path();
    let dir = fs::read_dir(experiment).unwrap().flatten().next().unwrap().path();
    let manifest: serde_json::Value = serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "complete", "{manifest}");
    let rows = manifest["tables"][format!("{KIND}_ticks")]["rows"].as_u64();
    assert!(rows.is_some_and(|rows| rows > 0), "{manifest}");

    let report = Command::new(&expc).arg("report").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        report.status.success() && text.contains(&format!("{KIND}_ticks")),
        "{text}"
    );
}
