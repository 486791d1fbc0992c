//! `textDocument/hover`: a property's type, unit, range, default and
//! description; a distribution's parameters; a block kind or anomaly kind; a
//! `let`'s or sweep parameter's value as written; a quantity in base units;
//! and the explanation of every diagnostic under the cursor.

use exp_check::registry;
use exp_diagnostics::Code;
use exp_syntax::units;

use crate::analysis::{FrameKind, Role};
use crate::context::Context;
use crate::cursor::prop_of;
use crate::lex::Tok;
use crate::markdown;
use crate::scope::{Binding, Resolved};

/// The Markdown shown at `offset` and the byte range it describes, with the
/// explanations of `codes` (the diagnostics there) appended.
pub fn hover(context: &Context, offset: usize, codes: &[Code]) -> Option<(String, std::ops::Range<usize>)> {
    let analysis = &context.analysis;
    let token = analysis.token_at(offset);
    let about = token.and_then(|i| describe(context, i, offset));
    let mut sections: Vec<String> = about.iter().cloned().collect();
    sections.extend(codes.iter().map(|c| markdown::code(*c)));
    if sections.is_empty() {
        return None;
    }
    let range = token.map_or(offset..offset, |i| analysis.tokens[i].range());
    Some((sections.join("\n\n---\n\n"), range))
}

fn describe(context: &Context, i: usize, offset: usize) -> Option<String> {
    let analysis = &context.analysis;
    let text = analysis.text_of(i);
    let frame = analysis.parents[i];
    if let Some(claim) = crate::claims::hover(analysis, i) {
        return Some(claim);
    }
    match analysis.roles[i] {
        Role::PropertyKey => {
            let frame = frame?;
            let kind = analysis.block_kind(frame)?;
            prop_of(analysis, frame, text).map(|p| markdown::prop(&p, kind))
        }
        Role::SweepParam => {
            let binding = context
                .names
                .sweep
                .iter()
                .find(|b| b.name_range.start == analysis.tokens[i].start)?;
            Some(sweep_values(context, binding))
        }
        Role::ArgName => {
            let FrameKind::Call { name } = &analysis.frames[frame?].kind else {
                return None;
            };
            let function = registry::function(name)?;
            let param = function.params.iter().find(|p| p.name == text)?;
            Some(markdown::argument(function, param))
        }
        Role::Callee => {
            let call = analysis
                .next(i)
                .filter(|&n| analysis.tokens[n].kind == Tok::Punct('('))?;
            let FrameKind::Call { name } = &analysis.frames.iter().find(|f| f.open == call)?.kind else {
                return None;
            };
            registry::function(name).map(markdown::function)
        }
        Role::BlockKind => registry::block(text).map(markdown::block),
        Role::LetName => {
            let binding = context
                .names
                .lets
                .iter()
                .find(|b| b.name_range.start == analysis.tokens[i].start)?;
            Some(let_value(context.text(), binding))
        }
        Role::ImportAlias | Role::ImportPath => {
            let import = context.names.imports.iter().find(|b| {
                b.alias_range.contains(&analysis.tokens[i].start) || b.path_range.contains(&analysis.tokens[i].start)
            })?;
            module_summary(context, &import.alias)
        }
        Role::PathHead => name(context, i),
        Role::PathMember => {
            let dotted = dotted_until(context, i);
            let value = context.value_of(&dotted)?;
            Some(format!("```exp\n{dotted} = {value}\n```"))
        }
        Role::Unit => quantity(analysis.text_of(i - 1), text),
        Role::Number => analysis
            .next(i)
            .filter(|&n| analysis.roles[n] == Role::Unit && analysis.tokens[n].start == analysis.tokens[i].end)
            .and_then(|n| quantity(text, analysis.text_of(n))),
        // `// expect: E0201` names a code: explain it.
        Role::Comment | Role::Str => {
            let text = context.text();
            let is_word = |c: char| c.is_ascii_alphanumeric();
            let start = text[..offset]
                .char_indices()
                .rev()
                .find(|(_, c)| !is_word(*c))
                .map_or(0, |(p, c)| p + c.len_utf8());
            let end = text[offset..].find(|c| !is_word(c)).map_or(text.len(), |p| offset + p);
            let word = &text[start..end];
            let code = word.starts_with(['E', 'W']).then(|| Code::parse(word)).flatten();
            code.map(markdown::code)
        }
        _ => None,
    }
}

/// A name in a value: a sweep parameter, a `let`, an import, or a member
/// (an anomaly's `kind` shows its variant).
fn name(context: &Context, i: usize) -> Option<String> {
    let analysis = &context.analysis;
    let text = analysis.text_of(i);
    match context.resolve(i) {
        Resolved::Sweep(at) => Some(sweep_values(context, &context.names.sweep[at])),
        Resolved::Let(at) => Some(let_value(context.text(), &context.names.lets[at])),
        Resolved::Import(at) => module_summary(context, &context.names.imports[at].alias),
        Resolved::Member => {
            let frame = analysis.parents[i]?;
            let key = analysis
                .prev(i)
                .and_then(|eq| analysis.prev(eq))
                .map(|k| analysis.text_of(k));
            let schema = registry::block(analysis.block_kind(frame)?)?;
            if key == Some("kind") {
                if let Some(variant) = schema.variant(text) {
                    return Some(markdown::variant(schema, variant));
                }
            }
            registry::is_enum_member(text).then(|| format!("`{text}`: a member of an enumeration"))
        }
    }
}

fn let_value(text: &str, binding: &Binding) -> String {
    format!("```exp\nlet {} = {}\n```", binding.name, &text[binding.value.clone()])
}

/// A sweep parameter's values as written, and how many a list has.
fn sweep_values(context: &Context, binding: &Binding) -> String {
    let value = &context.text()[binding.value.clone()];
    let analysis = crate::analysis::Analysis::new(value);
    let count = match analysis.frames.first() {
        Some(list) if list.kind == FrameKind::List && list.open == 0 => {
            let elements = analysis
                .direct_tokens(Some(0))
                .filter(|&t| analysis.tokens[t].kind == Tok::Punct(','))
                .count();
            let trailing = list
                .close
                .and_then(|c| analysis.prev(c))
                .map(|p| analysis.tokens[p].kind);
            let empty = list.close == Some(1);
            match (empty, trailing) {
                (true, _) => "\n\nno values".to_string(),
                (false, Some(Tok::Punct(','))) => format!("\n\n{elements} values"),
                _ => format!("\n\n{} values", elements + 1),
            }
        }
        _ => String::new(),
    };
    format!(
        "```exp\n{} = {value}\n```\nsweep parameter: one axis of the trials' cross product{count}",
        binding.name
    )
}

/// An import: its target and what it binds.
fn module_summary(context: &Context, alias: &str) -> Option<String> {
    let import = context.names.imports.iter().find(|i| i.alias == alias)?;
    let module = context.module(alias)?;
    let analysis = crate::analysis::Analysis::new(&module.text);
    let names = crate::scope::Names::of(&analysis);
    let bindings: Vec<String> = names.lets.iter().map(|b| format!("`{}`", b.name)).collect();
    Some(format!(
        "```exp\nimport \"{}\" as {alias}\n```\nbindings: {}",
        import.target,
        bindings.join(", ")
    ))
}

/// The dotted name from its first segment up to token `i`.
fn dotted_until(context: &Context, i: usize) -> String {
    let tokens = &context.analysis.tokens;
    let mut start = i;
    while start >= 2
        && tokens[start - 1].kind == Tok::Punct('.')
        && tokens[start - 2].kind == Tok::Ident
        && tokens[start - 2].end == tokens[start - 1].start
    {
        start -= 2;
    }
    context.text()[tokens[start].start..tokens[i].end].to_string()
}

/// `100ms` in the base unit of its dimension.
fn quantity(number: &str, unit: &str) -> Option<String> {
    let (dimension, factor) = units::lookup(unit)?;
    let value: f64 = number.replace('_', "").parse().ok()?;
    let base = value * factor;
    let shown = if base.fract() == 0.0 && base.abs() < 1e15 {
        format!("{base:.0}")
    } else {
        format!("{base}")
    };
    Some(format!(
        "`{number}{unit}`: a {} = {shown} {}",
        dimension.name(),
        dimension.base_unit()
    ))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::documents::Overlay;
    use crate::library::Library;

    fn hover_at(text: &str, needle: &str) -> String {
        let offset = text.find(needle).unwrap() + 1;
        let overlay = Overlay::default();
        let library = Library::none();
        let context = Context::new(text, Some(Path::new("/x/a.exp")), &overlay, &library);
        hover(&context, offset, &[]).map(|(h, _)| h).unwrap_or_default()
    }

    const SPEC: &str = "import \"std/pareto\"\nlet g = pareto.shape3_1s\nexperiment \"x\" {\n  sweep { n = [10, 20, 30] }\n  fleet \"f\" {\n    devices = n\n    gap = pareto(shape = 2, median = 100ms)\n  }\n  anomaly \"a\" { kind = memleak }\n}\n";

    #[test]
    fn hovers_show_the_registry_and_the_written_values() {
        let devices = hover_at(SPEC, "devices");
        assert!(
            devices.contains("Number of emulated devices") && devices.contains("range: 1 – 1000000"),
            "{devices}"
        );
        let pareto = hover_at(SPEC, "pareto(");
        assert!(
            pareto.contains("pareto(shape, scale?, median?, mean?)") && pareto.contains("Tail index"),
            "{pareto}"
        );
        let median = hover_at(SPEC, "median");
        assert!(median.contains("Median; sets the scale"), "{median}");
        let n = hover_at(SPEC, "n\n");
        assert!(n.contains("n = [10, 20, 30]") && n.contains("3 values"), "{n}");
        let g = hover_at(SPEC, "pareto.shape3_1s");
        assert!(g.contains("bindings: ") && g.contains("`shape3_1s`"), "{g}");
        let member = hover_at(SPEC, "shape3_1s");
        assert!(member.contains("pareto(shape = 3, median = 1s)"), "{member}");
        let memleak = hover_at(SPEC, "memleak");
        assert!(memleak.contains("never frees it"), "{memleak}");
        let ms = hover_at(SPEC, "ms)");
        assert!(ms.contains("100000000 ns"), "{ms}");
        let code = hover_at("// expect: E0201 E0302\n", "E0302");
        assert!(code.starts_with("**E0302**: "), "{code}");
    }
}
