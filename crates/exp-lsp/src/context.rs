//! One document as the features see it: its tokens and names, and the way to
//! the modules it imports.

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::analysis::{Analysis, FrameKind, Role};
use crate::documents::Overlay;
use crate::lex::Tok;
use crate::library::Library;
use crate::scope::{Names, Resolved};

pub struct Context<'a> {
    pub analysis: Analysis<'a>,
    pub names: Names,
    /// The document's file (`None` for an unsaved buffer).
    pub path: Option<&'a Path>,
    pub overlay: &'a Overlay,
    pub library: &'a Library,
}

/// An imported file.
pub struct Module {
    /// `None` for a stdlib module when the library could not be written.
    pub path: Option<PathBuf>,
    pub text: String,
}

impl<'a> Context<'a> {
    pub fn new(text: &'a str, path: Option<&'a Path>, overlay: &'a Overlay, library: &'a Library) -> Self {
        let analysis = Analysis::new(text);
        let names = Names::of(&analysis);
        Context {
            analysis,
            names,
            path,
            overlay,
            library,
        }
    }

    pub fn text(&self) -> &'a str {
        self.analysis.text
    }

    /// The module imported as `alias`.
    pub fn module(&self, alias: &str) -> Option<Module> {
        let import = self.names.imports.iter().find(|i| i.alias == alias)?;
        self.module_of(&import.target)
    }

    pub fn module_of(&self, target: &str) -> Option<Module> {
        // An unsaved buffer has no folder: only the stdlib resolves.
        let importer = self.path.unwrap_or(Path::new("/"));
        let (path, text) = self.overlay.import(self.library, importer, target)?;
        Some(Module { path, text })
    }

    /// The value text a dotted name stands for, following a `let`, a module
    /// binding and record fields (`iot.s1.sends` → `100/s`).
    pub fn value_of(&self, dotted: &str) -> Option<String> {
        let mut segments = dotted.split('.');
        let first = segments.next()?;
        let mut value = match self.names.lets.iter().find(|b| b.name == first) {
            Some(binding) => self.text()[binding.value.clone()].to_string(),
            None => {
                let module = self.module(first)?;
                let member = segments.next()?;
                let analysis = Analysis::new(&module.text);
                let names = Names::of(&analysis);
                let binding = names.lets.iter().find(|b| b.name == member)?;
                module.text[binding.value.clone()].to_string()
            }
        };
        for field in segments {
            let analysis = Analysis::new(&value);
            let (_, range) = record_fields(&analysis).into_iter().find(|(name, _)| name == field)?;
            value = value[range].to_string();
        }
        Some(value)
    }

    /// What the name at token `index` (a path's first name) refers to.
    pub fn resolve(&self, index: usize) -> Resolved {
        self.names.resolve(&self.analysis, index)
    }
}

/// The fields of the record literal a value text starts with, with their
/// values' ranges.
pub fn record_fields(analysis: &Analysis) -> Vec<(String, Range<usize>)> {
    let Some(frame) = analysis
        .frames
        .iter()
        .position(|f| f.open == 0 && f.kind == FrameKind::Record)
    else {
        return Vec::new();
    };
    let direct: Vec<usize> = analysis.direct_tokens(Some(frame)).collect();
    let mut fields = Vec::new();
    for (at, &token) in direct.iter().enumerate() {
        if analysis.roles[token] != Role::FieldName {
            continue;
        }
        // The value: after `=`, up to the next `,`, field or the closing brace.
        let Some(&start) = direct.get(at + 2) else { continue };
        let end = direct[at + 2..]
            .iter()
            .find(|&&t| analysis.tokens[t].kind == Tok::Punct(',') || analysis.roles[t] == Role::FieldName)
            .copied()
            .or(analysis.frames[frame].close)
            .unwrap_or(analysis.tokens.len());
        let last = (start..end)
            .rev()
            .find(|&t| analysis.tokens[t].kind != Tok::Comment)
            .unwrap_or(start);
        let range = analysis.tokens[start].start..analysis.tokens[last].end;
        fields.push((analysis.text_of(token).to_string(), range));
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_lets_modules_and_fields() {
        let text = "import \"std/iot\"\nlet r = { a = 1s, b = { c = 2KiB } d = [1, 2] }\n";
        let overlay = Overlay::default();
        let library = Library::none();
        let context = Context::new(text, Some(Path::new("/x/a.exp")), &overlay, &library);
        assert_eq!(context.value_of("r.a").as_deref(), Some("1s"));
        assert_eq!(context.value_of("r.b.c").as_deref(), Some("2KiB"));
        assert_eq!(context.value_of("r.d").as_deref(), Some("[1, 2]"));
        assert_eq!(context.value_of("iot.s1_sends").as_deref(), Some("100/s"));
        assert!(context.value_of("iot.s1.sends").is_some());
        assert_eq!(context.value_of("r.zz"), None);
        assert_eq!(context.value_of("nothing"), None);
    }
}
