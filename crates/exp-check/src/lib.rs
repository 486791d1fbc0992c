//! The checking half of the exp compiler: imports, names, the schema registry,
//! types, units, ranges and time windows, sweep expansion, and lowering to the
//! Plan IR.
//!
//! [`compile`] reports every problem of a spec in one pass and returns a plan
//! only when there are no errors.

mod checker;
mod dist;
pub mod docs;
mod eval;
mod modules;
mod plan;
pub mod registry;
mod seeds;
mod structure;
mod sweep;
mod typing;
mod value;
mod workload;

pub use modules::{FsLoader, Loader, STDLIB};
pub use seeds::derive as derive_seed;
pub use sweep::MAX_TRIALS;

use exp_diagnostics::{Code, Diagnostic, SourceMap, Span};
use exp_plan::Plan;

use checker::Checker;
use modules::ModuleLoader;

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Overrides the experiment's `seed`.
    pub seed: Option<u64>,
    /// Report a missing experiment (planning needs one; checking a library
    /// file of `let`s does not).
    pub require_experiment: bool,
}

/// The outcome of compiling one spec.
pub struct Compilation {
    pub sources: SourceMap,
    /// Errors and warnings, ordered by file and position.
    pub diagnostics: Vec<Diagnostic>,
    /// Present when there are no errors and the file has an experiment.
    pub plan: Option<Plan>,
}

impl Compilation {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Compiles the spec at `root` (a path as the user gave it).
pub fn compile(root: &str, loader: &dyn Loader, options: &Options) -> Compilation {
    let mut sources = SourceMap::new();
    let mut diagnostics = Vec::new();
    let program = match ModuleLoader::new(loader, &mut sources, &mut diagnostics).load_root(root) {
        Ok(program) => program,
        Err(error) => {
            let file = sources.add(root, "");
            let diagnostic = Diagnostic::error(Code::E0204, format!("cannot read `{root}`: {error}"))
                .primary(Span::new(file, 0..0), "this file");
            return Compilation {
                sources,
                diagnostics: vec![diagnostic],
                plan: None,
            };
        }
    };
    let mut checker = Checker::new(sources, loader, program, diagnostics);
    checker.evaluate_bindings();
    let experiment = checker.find_experiment();
    let plan = match &experiment {
        Some(block) => checker.plan(block, options),
        None => {
            if options.require_experiment {
                let root = checker.program.modules[checker.program.root].file;
                checker.report(
                    Diagnostic::error(Code::E0306, "no experiment to plan")
                        .primary(Span::new(root, 0..0), "this file defines no `experiment` block")
                        .help("add `experiment \"name\" { ... }`"),
                );
            }
            None
        }
    };
    // In a file without an experiment, bindings are exports, not dead code.
    if experiment.is_some() {
        checker.report_unused_bindings();
    }
    let failed = checker.error_count() > 0;
    let (sources, diagnostics) = checker.into_parts();
    Compilation {
        sources,
        diagnostics,
        plan: if failed { None } else { plan },
    }
}
