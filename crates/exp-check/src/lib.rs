//! The checking half of the exp compiler: imports, names, the schema registry,
//! types, units, ranges and time windows, sweep expansion, and lowering to the
//! Plan IR.
//!
//! [`compile`] reports every problem of a spec in one pass and returns a plan
//! only when there are no errors.

mod checker;
mod claims;
mod ctor;
mod density;
mod dist;
pub mod docs;
mod eval;
mod field;
mod modules;
mod overlap;
mod plan;
mod point_value;
mod query;
mod ramp;
pub mod registry;
mod repeat;
mod runtime_rules;
mod structure;
mod sweep;
mod typing;
mod value;
mod window;
mod workload;

pub use exp_plan::seeds::derive as derive_seed;
pub use exp_plan::MAX_TRIALS;
pub use modules::{normalize as normalize_path, read_source, stem_alias, FsLoader, Loader, SOURCE_CAP, STDLIB};

use exp_diagnostics::{Code, Diagnostic, SourceMap, Span};
use exp_plan::Plan;

use checker::Checker;
use modules::ModuleLoader;

/// Hash maps and sets with a fixed hasher (SipHash, zero keys): what the
/// checker does must not change from run to run, nor the coverage a fuzzer
/// sees. Inputs are the user's own specs, so flooding is no concern.
pub(crate) type FixedMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<std::hash::DefaultHasher>>;
pub(crate) type FixedSet<T> = std::collections::HashSet<T, std::hash::BuildHasherDefault<std::hash::DefaultHasher>>;

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
            // No code frame: the file has no text to show (an empty frame
            // looked like an empty file).
            let diagnostic = Diagnostic::error(Code::E0204, format!("cannot read `{root}`: {error}"))
                .help("check the path: `expc check` and `expc plan` take a `.exp` file");
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
            let module = &checker.program.modules[checker.program.root];
            if options.require_experiment {
                let (span, label) = no_experiment_anchor(&checker);
                checker.report(
                    Diagnostic::error(Code::E0306, "no experiment to plan")
                        .primary(span, label)
                        .help("add `experiment \"name\" { ... }`"),
                );
            } else if module.ast.items.is_empty() && !checker.has_syntax_errors() {
                // A module defines something; a file with nothing in it was
                // most likely saved empty by mistake.
                let span = Span::new(module.file, 0..0);
                checker.report(
                    Diagnostic::warning(Code::W0802, "this file defines nothing")
                        .primary(span, "empty")
                        .help("add an `experiment` block, or `let` bindings for other specs to import"),
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

/// Where E0306 points: the root file's first top-level block (which is then
/// not an experiment), else its first item, else its start (an empty file).
fn no_experiment_anchor(checker: &Checker) -> (Span, &'static str) {
    let module = &checker.program.modules[checker.program.root];
    let items = &module.ast.items;
    let block = items.iter().find_map(|item| match item {
        exp_syntax::ast::Item::Block(b) => Some(b),
        _ => None,
    });
    match (block, items.first()) {
        (Some(block), _) => (block.kind.span, "not an `experiment` block"),
        (None, Some(item)) => (item.span(), "this file has only imports and bindings"),
        (None, None) => (Span::new(module.file, 0..0), "this file defines nothing"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves one spec as every file.
    struct OneFile(String);

    impl Loader for OneFile {
        fn read(&self, _: &std::path::Path) -> std::io::Result<String> {
            Ok(self.0.clone())
        }
    }

    /// The indented example of an explanation, if it is a whole spec.
    fn whole_file_example(explanation: &str) -> Option<String> {
        let (_, rest) = explanation.split_once("Example:\n\n")?;
        let example: Vec<&str> = rest
            .lines()
            .take_while(|line| line.is_empty() || line.starts_with("    "))
            .map(|line| line.strip_prefix("    ").unwrap_or(line))
            .collect();
        let example = example.join("\n");
        let first = example.trim_start();
        (first.starts_with("experiment") || first.starts_with("let ")).then_some(example)
    }

    /// `expc explain` must not describe behaviour the checker does not have:
    /// each whole-spec example reports the code it explains.
    #[test]
    fn whole_spec_examples_of_explanations_report_their_code() {
        let mut checked = Vec::new();
        for code in Code::ALL {
            let Some(example) = whole_file_example(code.explanation()) else {
                continue;
            };
            let options = Options {
                seed: None,
                require_experiment: false,
            };
            let compilation = compile("example.exp", &OneFile(example.clone()), &options);
            let found: Vec<&str> = compilation.diagnostics.iter().map(|d| d.code.as_str()).collect();
            assert!(
                found.contains(&code.as_str()),
                "the example of {code:?} reports {found:?}:\n{example}"
            );
            checked.push(*code);
        }
        assert!(
            checked.contains(&Code::E0104) && checked.contains(&Code::E0301),
            "{checked:?}"
        );
    }
}
