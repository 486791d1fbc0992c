//! One spec's static tests: it checks, it is formatted, and its plan equals
//! its snapshot.

use std::path::{Path, PathBuf};

use exp_check::{compile, FsLoader, Loader, Options};
use exp_diagnostics::{render_all, Code, RenderStyle, Severity, SourceMap};
use exp_plan::Plan;
use exp_syntax::ast::Item;

use super::discover::snapshot_path;

/// What testing one spec found.
pub struct SpecOutcome {
    pub spec: PathBuf,
    /// A module: imported by specs, without an experiment of its own.
    pub module: bool,
    pub failures: Vec<Failure>,
    /// Rendered warnings, when they are not failures.
    pub warnings: Option<String>,
    /// The plan, for `--run`, when the spec has one and checks.
    pub plan: Option<Plan>,
    pub snapshot: Snapshot,
    pub seconds: f64,
    /// `--accept` or `--review` wrote (or removed) its snapshot.
    pub accepted: bool,
}

pub enum Failure {
    /// Rendered diagnostics.
    Diagnostics(String),
    /// `expc fmt` would change it: the line diff.
    Unformatted(String),
    /// The plan differs from its snapshot.
    PlanChanged(exp_plan::diff::PlanDiff),
    /// No snapshot yet.
    NoSnapshot,
    /// The snapshot is not readable.
    BadSnapshot(String),
    /// `--run` failed.
    Run(String),
    /// A snapshot whose spec is gone or has no experiment.
    Orphan,
}

impl Failure {
    /// A few words, for the result line and JUnit's `message`.
    pub fn summary(&self) -> &'static str {
        match self {
            Failure::Diagnostics(_) => "diagnostics",
            Failure::Unformatted(_) => "not formatted",
            Failure::PlanChanged(_) => "plan changed",
            Failure::NoSnapshot => "no snapshot",
            Failure::BadSnapshot(_) => "unreadable snapshot",
            Failure::Run(_) => "run failed",
            Failure::Orphan => "snapshot without a spec",
        }
    }

    /// A failure that writing the snapshot settles.
    pub fn is_snapshot(&self) -> bool {
        matches!(
            self,
            Failure::PlanChanged(_) | Failure::NoSnapshot | Failure::BadSnapshot(_) | Failure::Orphan
        )
    }
}

/// Where the spec's plan stands against its snapshot.
pub enum Snapshot {
    /// Nothing to compare: a module, or a spec that does not check.
    None,
    Same,
    /// The snapshot text the plan writes at `path`, which holds something else.
    Differs {
        path: PathBuf,
        text: String,
    },
    /// This outcome is a snapshot without a spec.
    Orphan,
}

pub struct TestOptions {
    pub deny_warnings: bool,
    pub style: RenderStyle,
}

pub fn test_spec(spec: &Path, options: &TestOptions) -> SpecOutcome {
    let started = std::time::Instant::now();
    let mut outcome = SpecOutcome {
        spec: spec.to_path_buf(),
        module: false,
        failures: Vec::new(),
        warnings: None,
        plan: None,
        snapshot: Snapshot::None,
        seconds: 0.0,
        accepted: false,
    };
    check(spec, options, &mut outcome);
    outcome.seconds = started.elapsed().as_secs_f64();
    outcome
}

fn check(spec: &Path, options: &TestOptions, outcome: &mut SpecOutcome) {
    let name = spec.to_string_lossy();
    let text = match exp_check::read_source(spec) {
        Ok(text) => text,
        Err(e) => {
            outcome
                .failures
                .push(Failure::Diagnostics(format!("cannot read {name}: {e}\n")));
            return;
        }
    };
    let mut sources = SourceMap::new();
    let file = sources.add(name.as_ref(), text.as_str());
    let (module, syntax) = exp_syntax::parse(file, &text);
    outcome.module = !module
        .items
        .iter()
        .any(|item| matches!(item, Item::Block(b) if b.kind.name == "experiment"));
    if syntax.is_empty() {
        let formatted = exp_syntax::format(&module, &text);
        if formatted != text {
            outcome
                .failures
                .push(Failure::Unformatted(crate::line_diff::line_diff(&text, &formatted)));
        }
    }

    let compile_options = Options {
        seed: None,
        require_experiment: !outcome.module,
    };
    let compilation = compile(&name, &FsLoader, &compile_options);
    // A module's bindings are its exports: checked alone, nobody reads them.
    let shown: Vec<_> = compilation
        .diagnostics
        .iter()
        .filter(|d| !(outcome.module && d.code == Code::W0801))
        .cloned()
        .collect();
    let errors = shown.iter().any(|d| d.severity == Severity::Error);
    if !shown.is_empty() {
        let rendered = render_all(&shown, &compilation.sources, options.style);
        if errors || options.deny_warnings {
            outcome.failures.push(Failure::Diagnostics(rendered));
        } else {
            outcome.warnings = Some(rendered);
        }
    }
    if errors || outcome.module {
        return;
    }
    // Compiled again from the spec's own folder, so that the paths the plan
    // records (a corpus, a trace) do not depend on where `expc test` ran.
    let dir = spec
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = spec
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rooted = compile(&file_name, &DirLoader(dir), &compile_options);
    let Some(plan) = rooted.plan else {
        outcome.failures.push(Failure::Diagnostics(format!(
            "{name}: checked without errors but made no plan\n"
        )));
        return;
    };
    compare(spec, &plan, dir, outcome);
    outcome.plan = compilation.plan;
}

fn compare(spec: &Path, plan: &Plan, dir: &Path, outcome: &mut SpecOutcome) {
    let path = snapshot_path(spec);
    let text = super::data_files::snapshot_text(plan, dir);
    let stored = match exp_files::read_text(&path, crate::PLAN_CAP) {
        Ok(stored) => stored,
        Err(e) if e.is_not_found() => {
            outcome.failures.push(Failure::NoSnapshot);
            outcome.snapshot = Snapshot::Differs { path, text };
            return;
        }
        Err(e) => {
            let message = format!("cannot read {}: {e}", path.display());
            outcome.failures.push(Failure::BadSnapshot(message));
            outcome.snapshot = Snapshot::Differs { path, text };
            return;
        }
    };
    if stored == text {
        outcome.snapshot = Snapshot::Same;
        return;
    }
    let new: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    match serde_json::from_str::<serde_json::Value>(&stored) {
        Ok(old) => {
            let diff = exp_plan::diff::diff_snapshots(&old, &new);
            outcome.failures.push(Failure::PlanChanged(diff));
        }
        Err(e) => outcome
            .failures
            .push(Failure::BadSnapshot(format!("{} is not JSON: {e}", path.display()))),
    }
    outcome.snapshot = Snapshot::Differs { path, text };
}

/// Reads the paths the compiler asks for from one folder.
struct DirLoader<'a>(&'a Path);

impl Loader for DirLoader<'_> {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        exp_check::read_source(&self.0.join(path))
    }
}
