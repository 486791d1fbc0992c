//! The names a file defines (`let`s, imports, sweep parameters) and what a
//! name in a value refers to, by the compiler's lookup order (language.md
//! §2.6): a sweep parameter (inside workloads and `monitor` only), a `let` of
//! the file, an import alias, else an enumeration member.

use std::collections::HashMap;
use std::ops::Range;

use exp_check::registry::{self, Role as BlockRole};

use crate::analysis::{Analysis, FrameKind, Role};
use crate::lex::Tok;

/// A name and the text of its value.
#[derive(Debug, Clone)]
pub struct Binding {
    pub name: String,
    /// Where the name is written.
    pub name_range: Range<usize>,
    /// Its value as written (`pareto(shape = 3, median = 100ms)`).
    pub value: Range<usize>,
}

#[derive(Debug, Clone)]
pub struct ImportBinding {
    pub alias: String,
    /// The `as` name, else the path string.
    pub alias_range: Range<usize>,
    pub target: String,
    pub path_range: Range<usize>,
}

pub struct Names {
    pub lets: Vec<Binding>,
    pub imports: Vec<ImportBinding>,
    pub sweep: Vec<Binding>,
    /// Each name's first `let`, sweep parameter and import, and whether
    /// each frame lies in a workload: a name resolves in constant time
    /// (semantic tokens and references resolve every name of a document).
    first_let: HashMap<String, usize>,
    first_sweep: HashMap<String, usize>,
    first_import: HashMap<String, usize>,
    in_workload: Vec<bool>,
}

/// What a name in a value refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    Sweep(usize),
    Let(usize),
    Import(usize),
    /// Not bound here: an enumeration member (or an undefined name).
    Member,
}

impl Names {
    pub fn of(analysis: &Analysis) -> Names {
        let mut names = Names {
            lets: Vec::new(),
            imports: Vec::new(),
            sweep: Vec::new(),
            first_let: HashMap::new(),
            first_sweep: HashMap::new(),
            first_import: HashMap::new(),
            in_workload: workload_frames(analysis),
        };
        for i in 0..analysis.tokens.len() {
            match analysis.roles[i] {
                Role::LetName => push(&mut names.lets, &mut names.first_let, binding(analysis, i)),
                Role::SweepParam => push(&mut names.sweep, &mut names.first_sweep, binding(analysis, i)),
                Role::ImportPath => {
                    let import = import(analysis, i);
                    names
                        .first_import
                        .entry(import.alias.clone())
                        .or_insert(names.imports.len());
                    names.imports.push(import);
                }
                _ => {}
            }
        }
        names
    }

    /// Resolves the name written at token `index` (a path's first name).
    pub fn resolve(&self, analysis: &Analysis, index: usize) -> Resolved {
        let name = analysis.text_of(index);
        if analysis.parents[index].is_some_and(|f| self.in_workload[f]) {
            if let Some(&at) = self.first_sweep.get(name) {
                return Resolved::Sweep(at);
            }
        }
        if let Some(&at) = self.first_let.get(name) {
            return Resolved::Let(at);
        }
        match self.first_import.get(name) {
            Some(&at) => Resolved::Import(at),
            None => Resolved::Member,
        }
    }
}

/// Adds a binding, and its index as its name's first if it is.
fn push(bindings: &mut Vec<Binding>, first: &mut HashMap<String, usize>, binding: Binding) {
    first.entry(binding.name.clone()).or_insert(bindings.len());
    bindings.push(binding);
}

/// For each frame, whether it is or lies in a workload or `monitor` block
/// (a frame's parent comes before it).
fn workload_frames(analysis: &Analysis) -> Vec<bool> {
    let mut inside = Vec::with_capacity(analysis.frames.len());
    for frame in &analysis.frames {
        let own = match &frame.kind {
            FrameKind::Block { kind } => is_workload(kind),
            _ => false,
        };
        inside.push(own || frame.parent.is_some_and(|p| inside[p]));
    }
    inside
}

fn is_workload(kind: &str) -> bool {
    registry::block(kind).is_some_and(|s| matches!(s.role, BlockRole::Workload { .. } | BlockRole::Service { .. }))
}

/// Whether `frame` is or lies in a workload or `monitor` block, where sweep
/// parameters are visible.
pub fn in_workload(analysis: &Analysis, mut frame: Option<usize>) -> bool {
    while let Some(f) = frame {
        if let FrameKind::Block { kind } = &analysis.frames[f].kind {
            if is_workload(kind) {
                return true;
            }
        }
        frame = analysis.frames[f].parent;
    }
    false
}

/// A `let` name or sweep parameter at `index`, with its value: the tokens
/// after `=` up to the next statement of the same frame.
fn binding(analysis: &Analysis, index: usize) -> Binding {
    let frame = analysis.parents[index];
    let eq = analysis
        .next(index)
        .filter(|&e| analysis.tokens[e].kind == Tok::Punct('='));
    let value_start = eq.and_then(|e| analysis.next(e));
    let value = match value_start {
        Some(start) => {
            let frame_end = frame
                .and_then(|f| analysis.frames[f].close)
                .unwrap_or(analysis.tokens.len());
            let end_token = analysis
                .direct_tokens_from(frame, start + 1)
                .find(|&t| starts_statement(analysis, t))
                .unwrap_or(frame_end);
            let last = (start..end_token)
                .rev()
                .find(|&t| analysis.tokens[t].kind != Tok::Comment)
                .unwrap_or(start);
            analysis.tokens[start].start..analysis.tokens[last].end
        }
        None => analysis.tokens[index].end..analysis.tokens[index].end,
    };
    Binding {
        name: analysis.text_of(index).to_string(),
        name_range: analysis.tokens[index].range(),
        value,
    }
}

/// Where a statement starts: `let`, `import`, a block, a property, or the
/// bracket closing the frame.
fn starts_statement(analysis: &Analysis, token: usize) -> bool {
    match analysis.roles[token] {
        Role::Keyword => matches!(analysis.text_of(token), "let" | "import"),
        Role::BlockKind | Role::PropertyKey | Role::SweepParam => true,
        _ => matches!(analysis.tokens[token].kind, Tok::Punct('}')),
    }
}

fn import(analysis: &Analysis, index: usize) -> ImportBinding {
    let path_range = analysis.tokens[index].range();
    let target = unquote(analysis.text_of(index));
    let alias = analysis
        .next(index)
        .filter(|&a| analysis.text_of(a) == "as")
        .and_then(|a| analysis.next(a))
        .filter(|&n| analysis.roles[n] == Role::ImportAlias);
    match alias {
        Some(a) => ImportBinding {
            alias: analysis.text_of(a).to_string(),
            alias_range: analysis.tokens[a].range(),
            target,
            path_range,
        },
        None => ImportBinding {
            alias: crate::library::default_alias(&target),
            alias_range: path_range.clone(),
            target,
            path_range,
        },
    }
}

/// A string token's text without its quotes (escapes are left as written:
/// import paths have none).
pub fn unquote(text: &str) -> String {
    let inner = text.strip_prefix('"').unwrap_or(text);
    inner.strip_suffix('"').unwrap_or(inner).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"import "std/pareto"
import "./shared/common.exp" as common
let size = 1KiB
let gap = pareto(shape = 3,
                 median = 100ms)  // the default gap
experiment "x" {
  duration = size
  sweep {
    size2 = [1, 2]
    gap2  = [gap, common.gap]
  }
  fleet "f" { gap = gap2 devices = size2 }
}
"#;

    #[test]
    fn bindings_carry_their_values() {
        let analysis = Analysis::new(SPEC);
        let names = Names::of(&analysis);
        let text = |r: &Range<usize>| &SPEC[r.clone()];
        let lets: Vec<(&str, &str)> = names.lets.iter().map(|b| (b.name.as_str(), text(&b.value))).collect();
        assert_eq!(
            lets,
            vec![
                ("size", "1KiB"),
                ("gap", "pareto(shape = 3,\n                 median = 100ms)")
            ]
        );
        let sweep: Vec<(&str, &str)> = names.sweep.iter().map(|b| (b.name.as_str(), text(&b.value))).collect();
        assert_eq!(sweep, vec![("size2", "[1, 2]"), ("gap2", "[gap, common.gap]")]);
        let aliases: Vec<(&str, &str)> = names
            .imports
            .iter()
            .map(|i| (i.alias.as_str(), i.target.as_str()))
            .collect();
        assert_eq!(
            aliases,
            vec![("pareto", "std/pareto"), ("common", "./shared/common.exp")]
        );
    }

    #[test]
    fn sweep_parameters_are_visible_in_workloads_only() {
        let analysis = Analysis::new(SPEC);
        let names = Names::of(&analysis);
        let head = |needle: &str| {
            let at = SPEC.find(needle).unwrap();
            (0..analysis.tokens.len())
                .find(|&i| analysis.tokens[i].start == at && analysis.roles[i] == Role::PathHead)
                .unwrap()
        };
        assert_eq!(names.resolve(&analysis, head("size\n")), Resolved::Let(0));
        assert_eq!(names.resolve(&analysis, head("gap2 devices")), Resolved::Sweep(1));
        assert_eq!(names.resolve(&analysis, head("common.gap")), Resolved::Import(1));
        assert_eq!(names.resolve(&analysis, head("gap, ")), Resolved::Let(1));
    }
}
