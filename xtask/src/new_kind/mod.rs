//! `cargo xtask new-kind NAME`: a workload kind that compiles, runs and
//! writes a table, from which its author starts (docs/architecture.md,
//! "Adding a workload kind"). It writes the kind's own files, adds one
//! line (or arm) to each marked list ([`markers`]), formats what it
//! touched and regenerates docs/language.md's reference. Everything is
//! checked before anything is written: a refused name or a missing marker
//! leaves the workspace as it was.

mod markers;
mod names;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use names::Names;

pub struct Options {
    pub name: String,
    /// The workspace's root directory.
    pub root: PathBuf,
    /// Whether to run the docs test that rewrites language.md's reference.
    pub regenerate_reference: bool,
}

/// Why the scaffold stopped.
#[derive(Debug)]
pub enum Error {
    Refused(String),
    Io(PathBuf, std::io::Error),
    Marker(&'static str, String),
    Step(&'static str, String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Refused(why) => write!(f, "{why}"),
            Error::Io(path, e) => write!(f, "{}: {e}", path.display()),
            Error::Marker(file, why) => write!(f, "{file}: {why}"),
            Error::Step(step, why) => write!(f, "{step} failed: {why}"),
        }
    }
}

/// The kind's own files: path template → contents template.
const GENERATED: &[(&str, &str)] = &[
    (
        "crates/exp-check/src/registry/{name}.rs",
        include_str!("../../templates/registry.rs.tmpl"),
    ),
    (
        "crates/exp-plan/src/{name}.rs",
        include_str!("../../templates/plan.rs.tmpl"),
    ),
    (
        "crates/exp-runtime/src/{name}/mod.rs",
        include_str!("../../templates/runtime_mod.rs.tmpl"),
    ),
    (
        "crates/exp-runtime/src/{name}/check.rs",
        include_str!("../../templates/runtime_check.rs.tmpl"),
    ),
    ("specs/{name}/{name}.exp", include_str!("../../templates/spec.exp.tmpl")),
];

const RUNNING_MD: &str = "docs/running.md";
const LANGUAGE_MD: &str = "docs/language.md";
/// The end of §4.3's row of workload kinds, where the kind's name goes.
const WORKLOADS_ROW_END: &str = " (workloads) | in `experiment` |";

/// What it did, and what the author does next.
pub struct Report {
    names: Names,
    written: Vec<String>,
}

pub fn new_kind(options: &Options) -> Result<Report, Error> {
    let names = Names::new(&options.name).map_err(Error::Refused)?;
    let root = options.root.as_path();
    refuse_existing(root, &names)?;
    let mut files: BTreeMap<String, String> = GENERATED
        .iter()
        .map(|(path, text)| (names.fill(path), names.fill(text)))
        .collect();
    for insertion in markers::INSERTIONS {
        let text = match files.get(insertion.file) {
            Some(text) => text.clone(),
            None => read(root, insertion.file)?,
        };
        let text = markers::insert(&text, insertion.list, &names.fill(insertion.lines))
            .map_err(|why| Error::Marker(insertion.file, why))?;
        files.insert(insertion.file.to_string(), text);
    }
    files.insert(
        RUNNING_MD.into(),
        read(root, RUNNING_MD)? + &names.fill(include_str!("../../templates/running.md.tmpl")),
    );
    files.insert(
        LANGUAGE_MD.into(),
        with_workload_row(&read(root, LANGUAGE_MD)?, &names)?,
    );

    for (path, text) in &files {
        let path = root.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Io(dir.to_path_buf(), e))?;
        }
        std::fs::write(&path, text).map_err(|e| Error::Io(path.clone(), e))?;
    }
    let rust: Vec<&String> = files.keys().filter(|path| path.ends_with(".rs")).collect();
    run(
        "rustfmt",
        Command::new("rustfmt")
            .args(["--edition", "2021"])
            .args(&rust)
            .current_dir(root),
    )?;
    // rustfmt may join a comment to the line above it; the next kind
    // needs every marker on a line of its own.
    for insertion in markers::INSERTIONS {
        markers::insert(&read(root, insertion.file)?, insertion.list, "")
            .map_err(|why| Error::Marker(insertion.file, format!("after rustfmt: {why}")))?;
    }
    if options.regenerate_reference {
        run(
            "regenerating docs/language.md's reference",
            Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["test", "--quiet", "-p", "exp-check", "--test", "docs"])
                .env("UPDATE_DOCS", "1")
                .current_dir(root),
        )?;
    }
    Ok(Report {
        names,
        written: files.into_keys().collect(),
    })
}

/// Refuses a kind the workspace has, or a name its files would overwrite
/// (an exp-runtime module such as `monitor`, a registry file such as `types`).
fn refuse_existing(root: &Path, names: &Names) -> Result<(), Error> {
    let registry = root.join("crates/exp-check/src/registry");
    let entries = std::fs::read_dir(&registry).map_err(|e| Error::Io(registry.clone(), e))?;
    let declaration = format!("kind: \"{}\",", names.snake);
    for entry in entries.flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        if text.contains(&declaration) {
            return Err(Error::Refused(format!("the block kind `{}` exists", names.snake)));
        }
    }
    let taken = GENERATED
        .iter()
        .map(|(path, _)| names.fill(path))
        .chain([
            names.fill("crates/exp-runtime/src/{name}.rs"),
            names.fill("crates/exp-runtime/src/{name}"),
            names.fill("crates/exp-plan/src/{name}"),
        ])
        .find(|path| root.join(path).exists());
    match taken {
        Some(path) => Err(Error::Refused(format!("`{}` is taken: {path} exists", names.snake))),
        None => Ok(()),
    }
}

fn read(root: &Path, path: &str) -> Result<String, Error> {
    let path = root.join(path);
    std::fs::read_to_string(&path).map_err(|e| Error::Io(path, e))
}

/// language.md with the kind in §4.3's row of workload kinds.
fn with_workload_row(text: &str, names: &Names) -> Result<String, Error> {
    if text.matches(WORKLOADS_ROW_END).count() != 1 {
        return Err(Error::Marker(
            LANGUAGE_MD,
            format!("no single row ending `{WORKLOADS_ROW_END}`"),
        ));
    }
    Ok(text.replacen(WORKLOADS_ROW_END, &format!(", `{}`{WORKLOADS_ROW_END}", names.snake), 1))
}

fn run(step: &'static str, command: &mut Command) -> Result<(), Error> {
    let output = command.output().map_err(|e| Error::Step(step, e.to_string()))?;
    if output.status.success() {
        return Ok(());
    }
    Err(Error::Step(step, String::from_utf8_lossy(&output.stderr).into_owned()))
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Names { snake, .. } = &self.names;
        writeln!(f, "new workload kind `{snake}`; written:")?;
        for path in &self.written {
            writeln!(f, "  {path}")?;
        }
        write!(
            f,
            "next (docs/architecture.md, \"Adding a workload kind\"):
  - make it the kind you mean: registry/{snake}.rs, exp-plan/src/{snake}.rs, exp-runtime/src/{snake}/
  - INSTA_UPDATE=always cargo test -p exp-tests --test ui (the blocks an experiment accepts)
  - language.md §6.1: its row metric; expc test specs/{snake} --accept, and read the snapshot
  - a run test in crates/expc/tests/; cargo fmt --all"
        )
    }
}
