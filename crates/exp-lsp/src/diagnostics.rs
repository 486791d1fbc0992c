//! The compiler's diagnostics as the protocol's: ranges, codes linked to
//! their `expc explain` text, secondary labels as related locations, notes
//! and help in the message, and the quick fixes the compiler's help spells out.
//! A problem in an imported file is shown on the `import` that leads to it.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use exp_check::Compilation;
use exp_diagnostics::{Diagnostic, FileId, Severity, SourceMap, Span};
use lsp_types::{
    CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, TextEdit, Uri,
};

use crate::analysis::Analysis;
use crate::fixes::{fixes, Fix};
use crate::library::{self, Library};
use crate::scope::Names;
use crate::text::LineIndex;

/// One diagnostic of a document, with its quick fixes (edits of the
/// document's text as it was compiled).
#[derive(Debug, Clone)]
pub struct Converted {
    pub diagnostic: lsp_types::Diagnostic,
    pub fixes: Vec<(String, Vec<TextEdit>)>,
}

/// The diagnostics of the root document `root` of `compilation`, in time
/// linear in the files and the diagnostics: one line index per file, built
/// once, and bounded work per diagnostic.
pub fn convert(compilation: &Compilation, root: &str, library: &Library) -> Vec<Converted> {
    let sources = &compilation.sources;
    let Some((root_id, root_file)) = sources.files().find(|(_, f)| f.name == root) else {
        // The document itself could not be read (E0204): nothing to place
        // its diagnostics in but its top.
        return compilation
            .diagnostics
            .iter()
            .map(|d| Converted {
                diagnostic: lsp_diagnostic(
                    d,
                    lsp_types::Range::default(),
                    with_notes(d, d.message.clone()),
                    None,
                    library,
                ),
                fixes: Vec::new(),
            })
            .collect();
    };
    let indexes: HashMap<FileId, LineIndex> = sources.files().map(|(id, f)| (id, LineIndex::new(&f.text))).collect();
    let index = &indexes[&root_id];
    let analysis = Analysis::new(&root_file.text);
    let anchors = ImportAnchors::new(sources, root_id, &analysis);
    compilation
        .diagnostics
        .iter()
        .map(|d| {
            let primary = d.primary_span();
            let (range, located) = match primary {
                Some(span) if span.file == root_id => (span.range(), true),
                Some(span) => (anchors.anchor(span.file).unwrap_or(0..0), false),
                None => (0..0, false),
            };
            let mut message = d.message.clone();
            if let (false, Some(span)) = (located, primary) {
                message = format!("in `{}`: {message}", sources.get(span.file).name);
            }
            let related = related(d, sources, &indexes, library, located);
            let diagnostic = lsp_diagnostic(d, index.range(range), with_notes(d, message), related, library);
            let fixes = match (located, primary) {
                (true, Some(span)) => fixes(d, span.range(), &analysis, index)
                    .into_iter()
                    .map(|Fix { title, edits }| {
                        let edits = edits
                            .into_iter()
                            .map(|(range, new_text)| TextEdit {
                                range: index.range(range),
                                new_text,
                            })
                            .collect();
                        (title, edits)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            Converted { diagnostic, fixes }
        })
        .collect()
}

/// `message` followed by the diagnostic's notes and help, a line each.
fn with_notes(d: &Diagnostic, mut message: String) -> String {
    for note in &d.notes {
        message.push_str(&format!("\nnote: {note}"));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    message
}

fn lsp_diagnostic(
    d: &Diagnostic,
    range: lsp_types::Range,
    message: String,
    related_information: Option<Vec<DiagnosticRelatedInformation>>,
    library: &Library,
) -> lsp_types::Diagnostic {
    lsp_types::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.as_str().to_string())),
        code_description: library.explanation_uri(d.code).map(|href| CodeDescription { href }),
        source: Some("expc".to_string()),
        message,
        related_information,
        tags: None,
        data: None,
    }
}

/// What a document shows if the compiler itself fails (a bug: it must
/// report problems, never panic), so the editor says so instead of going quiet.
pub fn internal_error() -> Converted {
    let code = exp_diagnostics::Code::E0901;
    Converted {
        diagnostic: lsp_types::Diagnostic {
            range: lsp_types::Range::default(),
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String(code.as_str().to_string())),
            source: Some("expc".to_string()),
            message: "internal error: the compiler failed on this file; `expc check` shows the same".to_string(),
            ..lsp_types::Diagnostic::default()
        },
        fixes: Vec::new(),
    }
}

/// Secondary labels (and, for a problem shown on an import, the primary one)
/// as related locations, where their file has a URI.
fn related(
    d: &Diagnostic,
    sources: &SourceMap,
    indexes: &HashMap<FileId, LineIndex>,
    library: &Library,
    with_primary: bool,
) -> Option<Vec<DiagnosticRelatedInformation>> {
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|l| !l.primary || !with_primary)
        .filter_map(|label| {
            let location = location(sources, indexes, library, label.span)?;
            let message = if label.message.is_empty() {
                d.message.clone()
            } else {
                label.message.clone()
            };
            Some(DiagnosticRelatedInformation { location, message })
        })
        .collect();
    (!related.is_empty()).then_some(related)
}

fn location(
    sources: &SourceMap,
    indexes: &HashMap<FileId, LineIndex>,
    library: &Library,
    span: Span,
) -> Option<Location> {
    let path = library.file_of_source(&sources.get(span.file).name)?;
    let uri: Uri = crate::uri::from_path(&path)?;
    Some(Location::new(uri, indexes.get(&span.file)?.range(span.range())))
}

/// For each loaded file, the import of the root file that (directly or
/// through other imports) loaded it.
struct ImportAnchors {
    anchors: HashMap<FileId, std::ops::Range<usize>>,
}

impl ImportAnchors {
    fn new(sources: &SourceMap, root: FileId, analysis: &Analysis) -> Self {
        let by_name: HashMap<&str, FileId> = sources.files().map(|(id, f)| (f.name.as_str(), id)).collect();
        let mut anchors = HashMap::new();
        let mut queue = VecDeque::new();
        let root_name = &sources.get(root).name;
        for import in Names::of(analysis).imports {
            if let Some(&id) = source_name(root_name, &import.target).and_then(|n| by_name.get(n.as_str())) {
                anchors.entry(id).or_insert_with(|| import.path_range.clone());
                queue.push_back((id, import.path_range.clone()));
            }
        }
        // Breadth first: each file is anchored at the first import reaching it.
        while let Some((id, anchor)) = queue.pop_front() {
            let file = sources.get(id);
            let analysis = Analysis::new(&file.text);
            for import in Names::of(&analysis).imports {
                let Some(&next) = source_name(&file.name, &import.target).and_then(|n| by_name.get(n.as_str())) else {
                    continue;
                };
                if next != root && !anchors.contains_key(&next) {
                    anchors.insert(next, anchor.clone());
                    queue.push_back((next, anchor.clone()));
                }
            }
        }
        ImportAnchors { anchors }
    }

    fn anchor(&self, file: FileId) -> Option<std::ops::Range<usize>> {
        self.anchors.get(&file).cloned()
    }
}

/// The name the compiler's source map gives the file an import names.
fn source_name(importer: &str, target: &str) -> Option<String> {
    if let Some(module) = target.strip_prefix("std/") {
        return Some(format!("std/{module}.exp"));
    }
    match library::resolve_import(Path::new(importer), target)? {
        library::ImportTarget::File(path) => Some(path.to_string_lossy().into_owned()),
        library::ImportTarget::Std { .. } => None,
    }
}
