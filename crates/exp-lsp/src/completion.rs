//! `textDocument/completion`: what may be written at the cursor, from the
//! schema registry (block kinds, properties of the block and of the chosen
//! anomaly `kind`, enumeration members, distributions and their arguments,
//! units of the expected dimension) and from the file's names and imports.

use std::ops::Range;

use exp_check::registry::{self, Default, FnKind, FnSchema, Ty, FUNCTIONS};
use exp_check::STDLIB;
use exp_syntax::units::UNITS;
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, InsertTextFormat, MarkupContent, MarkupKind,
    TextEdit,
};

use crate::analysis::Analysis;
use crate::context::{record_fields, Context};
use crate::cursor::{cursor, Expected, Spot};
use crate::insert::Insert;
use crate::markdown;
use crate::scope::Names;
use crate::text::LineIndex;

pub struct Options {
    /// The client expands `$1` placeholders.
    pub snippets: bool,
}

pub fn complete(context: &Context, offset: usize, options: &Options) -> Vec<CompletionItem> {
    let cursor = cursor(&context.analysis, offset);
    let mut items = Items {
        list: Vec::new(),
        replace: cursor.replace,
        snippets: options.snippets,
        index: LineIndex::new(context.text()),
    };
    if let Some(entries) = crate::claims::completions(&context.analysis, offset, &cursor.spot) {
        entries
            .into_iter()
            .for_each(|e| items.push(&e.label, e.kind, e.detail, e.docs, e.insert));
        return items.list;
    }
    match cursor.spot {
        Spot::TopLevel => top_level(&mut items),
        Spot::Member { frame } => members(&mut items, &context.analysis, frame),
        Spot::Value(expected) => {
            values(&mut items, expected.ty);
            names(&mut items, context, expected);
        }
        Spot::Argument { function, named } => {
            arguments(&mut items, function, &named);
            let frame = context.analysis.frames_around(offset).first().copied();
            let expected = Expected {
                ty: None,
                in_workload: crate::scope::in_workload(&context.analysis, frame),
            };
            names(&mut items, context, expected);
        }
        Spot::Unit(expected) => units(&mut items, expected),
        Spot::MemberOf { head } => members_of(&mut items, context, &head),
        Spot::ImportPath => import_paths(&mut items, context.text(), offset),
        Spot::Nothing => {}
    }
    items.list
}

struct Items<'a> {
    list: Vec<CompletionItem>,
    replace: Range<usize>,
    snippets: bool,
    index: LineIndex<'a>,
}

impl Items<'_> {
    /// An item replacing the partial word with `insert` (a snippet when the
    /// client takes them, else `plain`).
    fn push(&mut self, label: &str, kind: CompletionItemKind, detail: String, docs: Option<String>, insert: Insert) {
        let (text, format) = match (&insert, self.snippets) {
            (Insert::Snippet { snippet, .. }, true) => (snippet.clone(), InsertTextFormat::SNIPPET),
            (Insert::Snippet { plain, .. }, false) | (Insert::Plain(plain), _) => {
                (plain.clone(), InsertTextFormat::PLAIN_TEXT)
            }
        };
        self.list.push(CompletionItem {
            label: label.to_string(),
            kind: Some(kind),
            detail: Some(detail).filter(|d| !d.is_empty()),
            documentation: docs.map(|value| {
                Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value,
                })
            }),
            // Registry items first, in registry order; names after them.
            sort_text: Some(format!("{:04}", self.list.len())),
            filter_text: Some(label.to_string()),
            insert_text_format: Some(format),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                range: self.index.range(self.replace.clone()),
                new_text: text,
            })),
            ..CompletionItem::default()
        });
    }
}

fn top_level(items: &mut Items) {
    let k = CompletionItemKind::KEYWORD;
    items.push(
        "experiment",
        CompletionItemKind::MODULE,
        "block".into(),
        registry::block("experiment").map(markdown::block),
        block_insert("experiment", true),
    );
    let import = Insert::Snippet {
        snippet: "import \"$1\"".into(),
        plain: "import \"\"".into(),
    };
    items.push(
        "import",
        k,
        "import \"std/NAME\" or \"./file.exp\"".into(),
        None,
        import,
    );
    let binding = Insert::Snippet {
        snippet: "let ${1:name} = $0".into(),
        plain: "let ".into(),
    };
    items.push("let", k, "let NAME = value".into(), None, binding);
}

fn block_insert(kind: &str, labelled: bool) -> Insert {
    if labelled {
        Insert::Snippet {
            snippet: format!("{kind} \"${{1:name}}\" {{\n\t$0\n}}"),
            plain: format!("{kind} \"\" {{\n}}"),
        }
    } else {
        Insert::Snippet {
            snippet: format!("{kind} {{\n\t$0\n}}"),
            plain: format!("{kind} {{\n}}"),
        }
    }
}

/// Properties of the block (and of its anomaly `kind`) not set yet, and the
/// blocks it may hold.
fn members(items: &mut Items, analysis: &Analysis, frame: usize) {
    let Some(schema) = analysis.block_kind(frame).and_then(registry::block) else {
        return;
    };
    let present = analysis.properties(frame);
    for prop in schema.accepted_props(analysis.variant(frame)) {
        if present.iter().any(|(key, _)| *key == prop.name) {
            continue;
        }
        let insert = Insert::Plain(format!("{} = ", prop.name));
        let docs = markdown::prop(&prop, schema.kind);
        items.push(
            prop.name,
            CompletionItemKind::PROPERTY,
            prop.ty.describe(),
            Some(docs),
            insert,
        );
    }
    let children: Vec<&str> = analysis
        .frames
        .iter()
        .filter(|f| f.parent == Some(frame))
        .filter_map(|f| match &f.kind {
            crate::analysis::FrameKind::Block { kind } => Some(kind.as_str()),
            _ => None,
        })
        .collect();
    for child in schema.children().iter().filter_map(|c| registry::block(c)) {
        // A block without a label may appear once.
        if !child.labelled && children.contains(&child.kind) {
            continue;
        }
        let insert = block_insert(child.kind, child.labelled);
        items.push(
            child.kind,
            CompletionItemKind::MODULE,
            "block".into(),
            Some(markdown::block(child)),
            insert,
        );
    }
}

/// Members, booleans, distributions and constructors a value of `ty` may be.
fn values(items: &mut Items, ty: Option<Ty>) {
    match ty {
        Some(Ty::Enum(members)) => {
            for member in members {
                items.push(
                    member,
                    CompletionItemKind::ENUM_MEMBER,
                    String::new(),
                    None,
                    Insert::Plain((*member).into()),
                );
            }
        }
        Some(Ty::Bool) => {
            for value in ["true", "false"] {
                items.push(
                    value,
                    CompletionItemKind::VALUE,
                    "boolean".into(),
                    None,
                    Insert::Plain(value.into()),
                );
            }
        }
        Some(Ty::Dist(_)) => {
            for function in FUNCTIONS.iter().filter(|f| f.kind == FnKind::Distribution) {
                call(items, function);
            }
        }
        Some(Ty::Ctor(name)) => {
            if let Some(function) = registry::function(name) {
                call(items, function);
            }
        }
        Some(Ty::OneOf(options)) => options.iter().for_each(|option| values(items, Some(*option))),
        Some(_) => {}
        None => FUNCTIONS.iter().for_each(|function| call(items, function)),
    }
}

/// A call with its required arguments as placeholders.
fn call(items: &mut Items, function: &FnSchema) {
    let required: Vec<&str> = function
        .params
        .iter()
        .filter(|p| p.default == Default::Required)
        .map(|p| p.name)
        .collect();
    let placeholders: Vec<String> = required
        .iter()
        .enumerate()
        .map(|(i, name)| format!("{name} = ${}", i + 1))
        .collect();
    let insert = Insert::Snippet {
        snippet: format!("{}({})", function.name, placeholders.join(", ")),
        plain: format!("{}(", function.name),
    };
    let kind = CompletionItemKind::FUNCTION;
    items.push(
        function.name,
        kind,
        markdown::signature(function),
        Some(markdown::function(function)),
        insert,
    );
}

fn arguments(items: &mut Items, function: &FnSchema, named: &[String]) {
    for param in function.params.iter().filter(|p| !named.iter().any(|n| n == p.name)) {
        let docs = markdown::argument(function, param);
        let insert = Insert::Plain(format!("{} = ", param.name));
        items.push(
            param.name,
            CompletionItemKind::FIELD,
            param.ty.describe(),
            Some(docs),
            insert,
        );
    }
}

/// The file's `let`s, its imports and, in workloads, the sweep parameters.
fn names(items: &mut Items, context: &Context, expected: Expected) {
    let text = context.text();
    let names: &Names = &context.names;
    let sweep = names.sweep.iter().filter(|_| expected.in_workload);
    for (binding, what) in sweep
        .map(|b| (b, "sweep parameter"))
        .chain(names.lets.iter().map(|b| (b, "let")))
    {
        let detail = format!("{what} = {}", one_line(&text[binding.value.clone()]));
        items.push(
            &binding.name,
            CompletionItemKind::VARIABLE,
            detail,
            None,
            Insert::Plain(binding.name.clone()),
        );
    }
    for import in &names.imports {
        let detail = format!("import \"{}\"", import.target);
        items.push(
            &import.alias,
            CompletionItemKind::MODULE,
            detail,
            None,
            Insert::Plain(import.alias.clone()),
        );
    }
}

fn units(items: &mut Items, expected: Expected) {
    let dimension = expected.dimension();
    for (unit, unit_dimension, _) in UNITS {
        if dimension.is_some_and(|d| d != *unit_dimension) {
            continue;
        }
        let detail = unit_dimension.name().to_string();
        items.push(
            unit,
            CompletionItemKind::UNIT,
            detail,
            None,
            Insert::Plain((*unit).into()),
        );
    }
}

/// After `alias.`: the module's bindings; after a record's name: its fields.
fn members_of(items: &mut Items, context: &Context, head: &str) {
    if !head.contains('.') && context.names.lets.iter().all(|b| b.name != head) {
        if let Some(module) = context.module(head) {
            let analysis = Analysis::new(&module.text);
            for binding in Names::of(&analysis).lets {
                let detail = one_line(&module.text[binding.value.clone()]);
                items.push(
                    &binding.name,
                    CompletionItemKind::VARIABLE,
                    detail,
                    None,
                    Insert::Plain(binding.name.clone()),
                );
            }
            return;
        }
    }
    let Some(value) = context.value_of(head) else { return };
    let analysis = Analysis::new(&value);
    for (field, range) in record_fields(&analysis) {
        let detail = one_line(&value[range]);
        items.push(
            &field,
            CompletionItemKind::FIELD,
            detail,
            None,
            Insert::Plain(field.clone()),
        );
    }
}

/// `std/NAME` inside an import's string (or with its quotes after `import`).
fn import_paths(items: &mut Items, text: &str, offset: usize) {
    let quoted = !text[..offset].trim_end().ends_with("import");
    for (module, source) in STDLIB {
        let path = format!("std/{module}");
        let insert = if quoted { path.clone() } else { format!("\"{path}\"") };
        let summary = source.lines().next().unwrap_or("").trim_start_matches("//").trim();
        items.push(
            &path,
            CompletionItemKind::MODULE,
            summary.to_string(),
            None,
            Insert::Plain(insert),
        );
    }
}

fn one_line(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let line = words.join(" ");
    match line.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::documents::Overlay;
    use crate::library::Library;

    fn labels(text: &str) -> Vec<String> {
        let offset = text.find('|').unwrap();
        let text = text.replacen('|', "", 1);
        let overlay = Overlay::default();
        let library = Library::none();
        let context = Context::new(&text, Some(Path::new("/x/a.exp")), &overlay, &library);
        complete(&context, offset, &Options { snippets: true })
            .into_iter()
            .map(|i| i.label)
            .collect()
    }

    #[test]
    fn a_fleet_offers_its_unset_properties_and_its_broker() {
        let got = labels("experiment \"x\" {\n  fleet \"f\" {\n    devices = 10\n    |\n  }\n}");
        assert!(
            got.contains(&"gap".to_string()) && got.contains(&"broker".to_string()),
            "{got:?}"
        );
        assert!(got.contains(&"at".to_string()), "timing properties: {got:?}");
        assert!(!got.contains(&"devices".to_string()), "already set: {got:?}");
        assert!(!got.contains(&"fleet".to_string()), "{got:?}");
    }

    #[test]
    fn an_anomaly_offers_its_variants_properties() {
        let got = labels("experiment \"x\" { anomaly \"a\" {\n kind = memleak\n | } }");
        for expected in ["size", "rate", "limit", "cores", "for"] {
            assert!(got.contains(&expected.to_string()), "{expected}: {got:?}");
        }
        assert!(!got.contains(&"utilization".to_string()), "{got:?}");
        let kinds = labels("experiment \"x\" { anomaly \"a\" { kind = mem| } }");
        assert!(kinds.contains(&"memleak".to_string()) && kinds.contains(&"cpuoccupy".to_string()));
    }

    #[test]
    fn values_units_arguments_and_modules() {
        let fleet = |body: &str| format!("import \"std/pareto\"\nexperiment \"x\" {{ fleet \"f\" {{ {body} }} }}");
        let gap = labels(&fleet("gap = |"));
        assert!(gap.contains(&"pareto".to_string()) && gap.contains(&"pareto".to_string()));
        assert!(!gap.contains(&"json".to_string()), "{gap:?}");
        let unit = labels(&fleet("gap = 100m|"));
        assert!(
            unit.contains(&"ms".to_string()) && !unit.contains(&"MB".to_string()),
            "{unit:?}"
        );
        let args = labels(&fleet("gap = pareto(shape = 2, |)"));
        assert_eq!(args.iter().take(2).collect::<Vec<_>>(), vec!["scale", "median"]);
        let members = labels(&fleet("gap = pareto.shape|"));
        assert!(members.contains(&"shape3_100ms".to_string()), "{members:?}");
        let modules = labels("import \"|\"");
        assert!(modules.contains(&"std/hpas".to_string()), "{modules:?}");
    }
}
