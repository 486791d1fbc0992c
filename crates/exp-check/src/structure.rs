//! Block structure: which blocks may appear where, labels, unknown and
//! repeated properties. Values are checked later, per sweep point.

use exp_diagnostics::{closest, Code, Diagnostic};
use exp_syntax::ast::{Attribute, Block, Item, Member};

use crate::checker::Checker;
use crate::registry::{self, BlockSchema, Prop, Role};
use crate::FixedMap;

impl Checker<'_> {
    /// The root file's experiment, after reporting every block that is out of place.
    pub(crate) fn find_experiment(&mut self) -> Option<Block> {
        let mut found: Option<Block> = None;
        for index in 0..self.program.modules.len() {
            let is_root = index == self.program.root;
            let blocks: Vec<Block> = self.program.modules[index]
                .ast
                .items
                .iter()
                .filter_map(|item| match item {
                    Item::Block(b) => Some(b.clone()),
                    _ => None,
                })
                .collect();
            for block in blocks {
                let kind = block.kind.name.as_str();
                match registry::block(kind) {
                    None => {
                        let suggestion = closest(kind, registry::BLOCKS.iter().map(|b| b.kind));
                        self.report(
                            Diagnostic::error(Code::E0301, format!("unknown block kind `{kind}`"))
                                .primary(block.kind.span, "not a block kind")
                                .with_help(suggestion.map(|s| format!("did you mean `{s}`?"))),
                        );
                    }
                    Some(schema) if schema.role != Role::Experiment => {
                        self.report(
                            Diagnostic::error(Code::E0304, format!("`{kind}` blocks belong inside an experiment"))
                                .primary(block.kind.span, "at the top level")
                                .help("move it into `experiment \"NAME\" { ... }`"),
                        );
                    }
                    Some(_) if !is_root => {
                        self.report(
                            Diagnostic::error(Code::E0304, "imported files may not define experiments")
                                .primary(block.kind.span, "in an imported file")
                                .help(
                                    "imported files hold `let` bindings and imports; plan this file directly instead",
                                ),
                        );
                    }
                    Some(schema) => {
                        self.check_structure(&block, schema);
                        match &found {
                            Some(first) => {
                                let first_span = first.kind.span;
                                self.report(
                                    Diagnostic::error(Code::E0304, "a spec holds one experiment")
                                        .primary(block.kind.span, "second experiment")
                                        .secondary(first_span, "first experiment")
                                        .help("put each experiment in its own file; share definitions with `import`"),
                                );
                            }
                            None => found = Some(block),
                        }
                    }
                }
            }
        }
        found
    }

    /// Checks a block's members against its schema, recursively.
    fn check_structure(&mut self, block: &Block, schema: &'static BlockSchema) {
        self.check_label(block, schema);
        if schema.role == Role::Sweep {
            self.sweep_blocks.push(block.span);
        }
        let allowed = allowed_props(block, schema);
        let mut seen: FixedMap<&str, &Attribute> = FixedMap::default();
        let mut singletons: FixedMap<&str, &Block> = FixedMap::default();
        let mut labels: FixedMap<String, &Block> = FixedMap::default();
        for member in &block.members {
            match member {
                Member::Attribute(attr) => {
                    let key = attr.key.name.as_str();
                    if let Some(first) = seen.get(key) {
                        let code = if schema.role == Role::Sweep {
                            Code::E0701
                        } else {
                            Code::E0206
                        };
                        self.report(
                            Diagnostic::error(code, format!("`{key}` is set twice"))
                                .primary(attr.key.span, "set again here")
                                .secondary(first.key.span, "first set here"),
                        );
                        continue;
                    }
                    seen.insert(key, attr);
                    if schema.role != Role::Sweep && !allowed.iter().any(|p| p.name == key) {
                        self.unknown_property(attr, block, schema, &allowed);
                    }
                }
                Member::Block(child) => {
                    let kind = child.kind.name.as_str();
                    let Some(child_schema) = registry::block(kind).filter(|_| schema.children().contains(&kind)) else {
                        self.misplaced_child(child, schema);
                        continue;
                    };
                    if child_schema.labelled {
                        if let Some(label) = &child.label {
                            if let Some(first) = labels.get(&label.value) {
                                self.report(
                                    Diagnostic::error(Code::E0202, format!("two blocks are named \"{}\"", label.value))
                                        .primary(label.span, "second block with this name")
                                        .secondary(first.label.as_ref().map_or(first.span, |l| l.span), "first one")
                                        .help("workload names label tables and seeds: make them unique"),
                                );
                            } else {
                                labels.insert(label.value.clone(), child);
                            }
                        }
                    } else if let Some(first) = singletons.get(kind) {
                        self.report(
                            Diagnostic::error(Code::E0304, format!("only one `{kind}` block is allowed here"))
                                .primary(child.kind.span, "second one")
                                .secondary(first.kind.span, "first one")
                                .help("merge them into one block"),
                        );
                        continue;
                    } else {
                        singletons.insert(kind, child);
                    }
                    self.check_structure(child, child_schema);
                }
                Member::Expect(expect) if schema.role != Role::Experiment => {
                    self.report(
                        Diagnostic::error(Code::E1112, format!("`expect` is not allowed in `{}`", schema.kind))
                            .primary(expect.keyword.span, "not allowed here")
                            .help("claims belong directly in the `experiment` block"),
                    );
                }
                Member::Expect(_) => {}
            }
        }
        if !block.recovered && schema.role != Role::Sweep {
            for prop in &allowed {
                // `devcies = 10`: the unknown property's E0302 already says
                // to rename it; "needs `devices`" would offer to add a second.
                let misspelt = || {
                    seen.keys()
                        .any(|k| !allowed.iter().any(|p| p.name == *k) && closest(k, [prop.name]).is_some())
                };
                if prop.default == registry::Default::Required && !seen.contains_key(prop.name) && !misspelt() {
                    self.report(
                        Diagnostic::error(Code::E0303, format!("`{}` needs `{}`", schema.kind, prop.name))
                            .primary(block.kind.span, format!("missing `{}`", prop.name))
                            .note(format!("`{}` ({}): {}", prop.name, prop.ty.describe(), prop.doc)),
                    );
                }
            }
        }
    }

    /// A child block whose kind is unknown (E0301), or known but not allowed
    /// in this block (E0304).
    fn misplaced_child(&mut self, child: &Block, schema: &BlockSchema) {
        let kind = child.kind.name.as_str();
        let allowed = if schema.children().is_empty() {
            "none".to_string()
        } else {
            schema.children().join(", ")
        };
        let note = format!("blocks allowed in `{}`: {allowed}", schema.kind);
        let diagnostic = if registry::block(kind).is_some() {
            Diagnostic::error(Code::E0304, format!("`{kind}` is not allowed in `{}`", schema.kind))
                .primary(child.kind.span, "not allowed here")
                .with_help(parents(kind).map(|p| format!("`{kind}` blocks belong in `{p}`")))
        } else {
            // Prefer a kind this block accepts; else any kind, saying where it goes.
            let help = match closest(kind, schema.children().iter().copied()) {
                Some(s) => Some(format!("did you mean `{s}`?")),
                None => closest(kind, registry::BLOCKS.iter().map(|b| b.kind)).map(|s| match parents(s) {
                    Some(p) => format!("did you mean `{s}`? (`{s}` blocks belong in `{p}`)"),
                    None => format!("did you mean `{s}`?"),
                }),
            };
            Diagnostic::error(Code::E0301, format!("unknown block kind `{kind}`"))
                .primary(child.kind.span, "not a block kind")
                .with_help(help)
        };
        self.report(diagnostic.note(note));
    }

    fn check_label(&mut self, block: &Block, schema: &BlockSchema) {
        match (&block.label, schema.labelled) {
            (None, true) => self.report(
                Diagnostic::error(Code::E0305, format!("`{}` blocks need a name", schema.kind))
                    .primary(block.kind.span, "no name")
                    .help(format!("e.g. `{} \"name\" {{ ... }}`", schema.kind)),
            ),
            (Some(label), false) => self.report(
                Diagnostic::error(Code::E0305, format!("`{}` blocks take no name", schema.kind))
                    .primary(label.span, "remove this name"),
            ),
            (Some(label), true) if label.value.is_empty() => self.report(
                Diagnostic::error(Code::E0305, "a block name cannot be empty").primary(label.span, "empty name"),
            ),
            _ => {}
        }
    }

    fn unknown_property(&mut self, attr: &Attribute, block: &Block, schema: &BlockSchema, allowed: &[Prop]) {
        let key = attr.key.name.as_str();
        let mut candidates: Vec<&str> = allowed.iter().map(|p| p.name).collect();
        candidates.extend(schema.children().iter().copied());
        let suggestion = closest(key, candidates.iter().copied());
        let mut diagnostic = Diagnostic::error(Code::E0302, format!("unknown property `{key}` in `{}`", schema.kind))
            .primary(attr.key.span, format!("not a property of `{}`", schema.kind))
            .with_help(suggestion.map(|s| format!("did you mean `{s}`?")));
        // A workload's extent is its window; the trial's length is the
        // experiment's (docs/language.md §13).
        if key == "duration" && allowed.iter().any(|p| p.name == "for") {
            diagnostic = diagnostic.with_help(Some(
                "a workload runs for its window: `for = 30s` (or `until`); `duration` sets the whole trial's length, in the `experiment` block".to_string(),
            ));
        }
        if let Some(other) = schema.variants.iter().find(|v| v.props.iter().any(|p| p.name == key)) {
            let kind = variant_name(block).unwrap_or("this kind");
            diagnostic = diagnostic.note(format!("`{key}` belongs to `kind = {}`, not `{kind}`", other.name));
        }
        self.report(diagnostic);
    }
}

/// The kinds of block that may contain a block of `kind`, joined for messages
/// (`None` for the top-level `experiment`).
fn parents(kind: &str) -> Option<String> {
    let parents: Vec<&str> = registry::BLOCKS
        .iter()
        .filter(|b| b.children().contains(&kind))
        .map(|b| b.kind)
        .collect();
    (!parents.is_empty()).then(|| parents.join("` or `"))
}

/// The literal `kind = NAME` of a block with variants, if written literally.
pub(crate) fn variant_name(block: &Block) -> Option<&str> {
    block.members.iter().find_map(|m| match m {
        Member::Attribute(a) if a.key.name == "kind" => match &a.value.kind {
            exp_syntax::ast::ExprKind::Path(p) if p.segments.len() == 1 => Some(p.segments[0].name.as_str()),
            _ => None,
        },
        _ => None,
    })
}

/// Properties a block accepts: its own, timing for workloads, and its
/// variant's.
pub(crate) fn allowed_props(block: &Block, schema: &BlockSchema) -> Vec<Prop> {
    schema.accepted_props(variant_name(block))
}
