//! Go to definition and find references for `let` bindings, sweep parameters
//! and imports, across imports (into the stdlib's read-only copy too) and
//! across the open documents that import a file.

use std::ops::Range;
use std::path::{Path, PathBuf};

use lsp_types::{Location, Uri};

use crate::analysis::Role;
use crate::context::Context;
use crate::documents::Documents;
use crate::lex::Tok;
use crate::scope::{Names, Resolved};
use crate::text::LineIndex;

/// What a name refers to, wherever it is written.
enum Symbol {
    /// A binding of this document: a sweep parameter or an import.
    Local(Resolved),
    /// A `let` of a file (this one, an import, or a stdlib module).
    Let { file: Option<PathBuf>, name: String },
}

pub fn definition(context: &Context, uri: &Uri, offset: usize) -> Option<Location> {
    let analysis = &context.analysis;
    let i = analysis.token_at(offset)?;
    match analysis.roles[i] {
        Role::ImportAlias | Role::ImportPath => {
            let import = context.names.imports.iter().find(|b| {
                b.alias_range.contains(&analysis.tokens[i].start) || b.path_range.contains(&analysis.tokens[i].start)
            })?;
            let module = context.module_of(&import.target)?;
            let uri = crate::uri::from_path(module.path.as_deref()?)?;
            Some(Location::new(uri, lsp_types::Range::default()))
        }
        _ => match symbol_at(context, i)? {
            Symbol::Local(resolved) => {
                let range = local_definition(&context.names, resolved)?;
                Some(location(uri.clone(), context.text(), range))
            }
            Symbol::Let { file: None, name } => {
                let binding = context.names.lets.iter().find(|b| b.name == name)?;
                Some(location(uri.clone(), context.text(), binding.name_range.clone()))
            }
            Symbol::Let { file: Some(path), name } => {
                let text = file_text(context, &path)?;
                let analysis = crate::analysis::Analysis::new(&text);
                let binding = Names::of(&analysis).lets.into_iter().find(|b| b.name == name)?;
                Some(location(crate::uri::from_path(&path)?, &text, binding.name_range))
            }
        },
    }
}

pub fn references(context: &Context, uri: &Uri, offset: usize, documents: &Documents) -> Vec<Location> {
    let analysis = &context.analysis;
    let Some(i) = analysis.token_at(offset) else {
        return Vec::new();
    };
    match symbol_at(context, i) {
        Some(Symbol::Local(resolved)) => {
            let mut ranges: Vec<Range<usize>> = local_definition(&context.names, resolved).into_iter().collect();
            ranges.extend(uses(context, resolved));
            locations(uri, context.text(), ranges)
        }
        Some(Symbol::Let { file, name }) => let_references(context, uri, file, &name, documents),
        None => Vec::new(),
    }
}

fn symbol_at(context: &Context, i: usize) -> Option<Symbol> {
    let analysis = &context.analysis;
    let start = analysis.tokens[i].start;
    let here = || context.path.map(Path::to_path_buf);
    match analysis.roles[i] {
        Role::PathHead => match context.resolve(i) {
            Resolved::Let(at) => Some(Symbol::Let {
                file: here(),
                name: context.names.lets[at].name.clone(),
            }),
            Resolved::Member => None,
            resolved => Some(Symbol::Local(resolved)),
        },
        Role::LetName => Some(Symbol::Let {
            file: here(),
            name: analysis.text_of(i).to_string(),
        }),
        Role::SweepParam => {
            let at = context.names.sweep.iter().position(|b| b.name_range.start == start)?;
            Some(Symbol::Local(Resolved::Sweep(at)))
        }
        Role::ImportAlias | Role::ImportPath => {
            let at = context
                .names
                .imports
                .iter()
                .position(|b| b.alias_range.start == start)?;
            Some(Symbol::Local(Resolved::Import(at)))
        }
        Role::PathMember => {
            // `alias.name`: a binding of the imported module.
            let head = i.checked_sub(2).filter(|&h| analysis.roles[h] == Role::PathHead)?;
            let Resolved::Import(at) = context.resolve(head) else {
                return None;
            };
            let module = context.module_of(&context.names.imports[at].target)?;
            Some(Symbol::Let {
                file: Some(module.path?),
                name: analysis.text_of(i).to_string(),
            })
        }
        _ => None,
    }
}

fn local_definition(names: &Names, resolved: Resolved) -> Option<Range<usize>> {
    match resolved {
        Resolved::Sweep(at) => names.sweep.get(at).map(|b| b.name_range.clone()),
        Resolved::Let(at) => names.lets.get(at).map(|b| b.name_range.clone()),
        Resolved::Import(at) => names.imports.get(at).map(|b| b.alias_range.clone()),
        Resolved::Member => None,
    }
}

/// Every name in a value of this document that resolves to `resolved`.
fn uses(context: &Context, resolved: Resolved) -> Vec<Range<usize>> {
    let analysis = &context.analysis;
    (0..analysis.tokens.len())
        .filter(|&t| analysis.roles[t] == Role::PathHead && context.resolve(t) == resolved)
        .map(|t| analysis.tokens[t].range())
        .collect()
}

/// A `let`'s definition and uses: in its own file, and as `alias.name` in
/// every open document that imports that file.
fn let_references(
    context: &Context,
    uri: &Uri,
    file: Option<PathBuf>,
    name: &str,
    documents: &Documents,
) -> Vec<Location> {
    let mut found = Vec::new();
    // The defining file, from the open document when it is one.
    let own = match &file {
        Some(path) if Some(path.as_path()) != context.path => {
            file_text(context, path).map(|text| (crate::uri::from_path(path), text))
        }
        _ => Some((Some(uri.clone()), context.text().to_string())),
    };
    if let Some((Some(own_uri), text)) = own {
        let defining = Context::new(&text, file.as_deref(), context.overlay, context.library);
        if let Some(at) = defining.names.lets.iter().position(|b| b.name == name) {
            let definition = defining.names.lets[at].name_range.clone();
            let ranges = std::iter::once(definition).chain(uses(&defining, Resolved::Let(at)));
            found.extend(locations(&own_uri, &text, ranges));
        }
    }
    let Some(file) = file else { return found };
    for document in documents.all() {
        let importer = Context::new(
            &document.text,
            document.path.as_deref(),
            context.overlay,
            context.library,
        );
        for import in &importer.names.imports {
            let target = importer.module_of(&import.target).and_then(|m| m.path);
            if target.as_deref() != Some(file.as_path()) {
                continue;
            }
            let ranges = member_uses(&importer, &import.alias, name);
            found.extend(locations(&document.uri, &document.text, ranges));
        }
    }
    found
}

/// `alias.name` in a document: the ranges of `name`.
fn member_uses(context: &Context, alias: &str, name: &str) -> Vec<Range<usize>> {
    let analysis = &context.analysis;
    (2..analysis.tokens.len())
        .filter(|&t| analysis.roles[t] == Role::PathMember && analysis.text_of(t) == name)
        .filter(|&t| analysis.tokens[t - 1].kind == Tok::Punct('.'))
        .filter(|&t| analysis.roles[t - 2] == Role::PathHead && analysis.text_of(t - 2) == alias)
        .filter(|&t| matches!(context.resolve(t - 2), Resolved::Import(_)))
        .map(|t| analysis.tokens[t].range())
        .collect()
}

/// A file's text: an open document's, the stdlib's, or the disk's.
fn file_text(context: &Context, path: &Path) -> Option<String> {
    context.overlay.text(path)
}

fn location(uri: Uri, text: &str, range: Range<usize>) -> Location {
    Location::new(uri, LineIndex::new(text).range(range))
}

/// The locations of many ranges of one text, its line index built once (a
/// name used 40,000 times must not index the text 40,000 times).
fn locations(uri: &Uri, text: &str, ranges: impl IntoIterator<Item = Range<usize>>) -> Vec<Location> {
    let index = LineIndex::new(text);
    ranges
        .into_iter()
        .map(|range| Location::new(uri.clone(), index.range(range)))
        .collect()
}
