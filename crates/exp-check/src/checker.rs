//! The checker's state: sources, diagnostics (deduplicated, since sweep
//! points re-check the same text), modules and their evaluated bindings.

use std::collections::BTreeMap;
use std::path::PathBuf;

use exp_diagnostics::{Code, Diagnostic, FileId, SourceMap, Span};
use exp_syntax::ast::{self, Item};

use crate::modules::{Loader, Program};
use crate::value::Value;
use crate::{FixedMap, FixedSet};

/// Cache key of a lowered property value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum LoweredKey {
    Attribute(Span, &'static str),
    Default(&'static str, &'static str),
}

pub(crate) struct Binding {
    pub value: Value,
    pub name_span: Span,
}

pub(crate) struct Checker<'a> {
    pub sources: SourceMap,
    pub loader: &'a dyn Loader,
    pub program: Program,
    diagnostics: Vec<Diagnostic>,
    seen: FixedSet<(Code, Option<Span>, String)>,
    /// Per module: evaluated `let`s.
    pub lets: Vec<BTreeMap<String, Binding>>,
    /// Per module: every `let` name with its span, evaluated or not (to tell a
    /// forward reference from an undefined name).
    pub declared: Vec<FixedMap<String, Span>>,
    /// Let bindings of the root module that were read.
    pub used: FixedSet<(usize, String)>,
    /// File → folder its relative paths resolve against.
    pub dirs: FixedMap<FileId, PathBuf>,
    /// Parsed registry defaults, by their text.
    pub defaults: FixedMap<&'static str, Option<ast::Expr>>,
    /// Names whose definition failed (sweep parameters): uses stay silent.
    pub poisoned: FixedSet<String>,
    /// Spans of the experiment's `sweep` blocks: a value written inside one
    /// is a sweep value, and range errors point at it rather than at its use.
    pub sweep_blocks: Vec<Span>,
    /// Lowered property values that are the same at every sweep point.
    pub lowered: FixedMap<LoweredKey, Option<serde_json::Value>>,
    /// The experiment block lost statements to syntax errors: `duration` may
    /// have been one, so "never ends" (E0605) would only repeat that error.
    pub experiment_damaged: bool,
}

/// Where names are looked up: a module's bindings and, inside workloads, the
/// current sweep point's parameters.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'s> {
    pub module: usize,
    pub sweep: Option<&'s BTreeMap<String, Value>>,
}

impl<'a> Checker<'a> {
    /// Whether any syntax error (E01xx) was reported.
    pub fn has_syntax_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.code.as_str().starts_with("E01"))
    }

    pub fn new(sources: SourceMap, loader: &'a dyn Loader, program: Program, diagnostics: Vec<Diagnostic>) -> Self {
        let root_dir = program.modules[program.root].dir.clone().unwrap_or_default();
        let dirs = program
            .modules
            .iter()
            .map(|m| (m.file, m.dir.clone().unwrap_or_else(|| root_dir.clone())))
            .collect();
        let count = program.modules.len();
        let mut checker = Checker {
            sources,
            loader,
            program,
            diagnostics: Vec::new(),
            seen: FixedSet::default(),
            lets: (0..count).map(|_| BTreeMap::new()).collect(),
            declared: vec![FixedMap::default(); count],
            used: FixedSet::default(),
            dirs,
            defaults: FixedMap::default(),
            lowered: FixedMap::default(),
            sweep_blocks: Vec::new(),
            poisoned: FixedSet::default(),
            experiment_damaged: false,
        };
        for d in diagnostics {
            checker.report(d);
        }
        checker
    }

    /// Records a diagnostic once, however many sweep points hit it.
    pub fn report(&mut self, diagnostic: Diagnostic) {
        let key = (diagnostic.code, diagnostic.primary_span(), diagnostic.message.clone());
        if self.seen.insert(key) {
            self.diagnostics.push(diagnostic);
        }
    }

    /// Whether `span` lies inside a `sweep` block.
    pub fn in_sweep(&self, span: Span) -> bool {
        self.sweep_blocks
            .iter()
            .any(|s| s.file == span.file && s.start <= span.start && span.end <= s.end)
    }

    pub fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    pub fn into_parts(mut self) -> (SourceMap, Vec<Diagnostic>) {
        self.diagnostics
            .sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start)));
        (self.sources, self.diagnostics)
    }

    /// Evaluates every module's `let`s in dependency order.
    pub fn evaluate_bindings(&mut self) {
        for module in 0..self.program.modules.len() {
            let lets: Vec<ast::Let> = self.program.modules[module]
                .ast
                .items
                .iter()
                .filter_map(|item| match item {
                    Item::Let(l) => Some(l.clone()),
                    _ => None,
                })
                .collect();
            // `let`s named like an import: reported, and never bound.
            let mut clashes: FixedSet<String> = FixedSet::default();
            // Looked up once per `let`: a map, not a scan of the items (100,000
            // `let`s took minutes).
            let imports = self.imports_by_alias(module);
            for l in &lets {
                let name = &l.name.name;
                if let Some(previous) = self.declared[module].get(name) {
                    let previous = *previous;
                    self.report(
                        Diagnostic::error(Code::E0202, format!("`{name}` is defined twice"))
                            .primary(l.name.span, "second definition")
                            .secondary(previous, "first defined here"),
                    );
                    continue;
                }
                if let Some(&import_span) = imports.get(name) {
                    self.report(
                        Diagnostic::error(Code::E0202, format!("`{name}` is already the name of an import"))
                            .primary(l.name.span, "this binding")
                            .secondary(import_span, "imported here")
                            .help("rename the binding, or give the import another name with `as`"),
                    );
                    clashes.insert(name.clone());
                    continue;
                }
                self.declared[module].insert(name.clone(), l.name.span);
            }
            for l in lets {
                // The first of two `let`s wins.
                if self.lets[module].contains_key(&l.name.name) {
                    continue;
                }
                if clashes.contains(&l.name.name) {
                    // Not bound to its value: from here on the name means
                    // `Value::Error`, so its uses stay silent instead of
                    // adding "is a module" errors; uses above the `let`
                    // still reach the import.
                    self.lets[module].insert(
                        l.name.name.clone(),
                        Binding {
                            value: Value::error(l.value.span),
                            name_span: l.name.span,
                        },
                    );
                    self.used.insert((module, l.name.name.clone()));
                    continue;
                }
                let scope = Scope { module, sweep: None };
                let mut value = self.eval(&l.value, scope);
                value.defined_at = Some(l.name.span);
                self.lets[module].insert(
                    l.name.name.clone(),
                    Binding {
                        value,
                        name_span: l.name.span,
                    },
                );
            }
        }
    }

    /// The span of each import (loaded or failed) by its alias; the first
    /// of two with one alias.
    fn imports_by_alias(&self, module: usize) -> FixedMap<String, Span> {
        let mut imports = FixedMap::default();
        for item in &self.program.modules[module].ast.items {
            if let Item::Import(import) = item {
                imports
                    .entry(crate::modules::default_alias(import))
                    .or_insert(import.span);
            }
        }
        imports
    }

    /// Warns about root-module bindings nobody read.
    pub fn report_unused_bindings(&mut self) {
        let root = self.program.root;
        let unused: Vec<(String, Span)> = self.lets[root]
            .iter()
            .filter(|(name, _)| !self.used.contains(&(root, (*name).clone())))
            .map(|(name, b)| (name.clone(), b.name_span))
            .collect();
        for (name, span) in unused {
            self.report(
                Diagnostic::warning(Code::W0801, format!("`{name}` is never used"))
                    .primary(span, "defined here")
                    .help("remove it, or use it in a workload or sweep"),
            );
        }
    }
}
