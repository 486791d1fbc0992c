//! Quick fixes where the compiler already knows the fix: its help line names
//! the replacement (`did you mean \`devices\`?`, `write the unit, e.g.
//! \`60s\``), or a required property is missing. The edits are computed
//! from the diagnostic's primary span and the help's text, so a fix offered
//! is exactly the compiler's suggestion.

use std::ops::Range;

use exp_check::registry::{self, Prop, Ty};
use exp_diagnostics::{Code, Diagnostic};

use crate::analysis::{Analysis, FrameKind};
use crate::text::LineIndex;

pub struct Fix {
    pub title: String,
    /// Byte ranges of the compiled text and their replacements.
    pub edits: Vec<(Range<usize>, String)>,
}

/// The fixes of a diagnostic whose primary span `span` is in `analysis`'s
/// text (`lines` its line index). Each costs a bounded amount of work, so a
/// document's thousands of diagnostics convert in linear time.
pub fn fixes(d: &Diagnostic, span: Range<usize>, analysis: &Analysis, lines: &LineIndex) -> Vec<Fix> {
    let text = analysis.text;
    let mut out = Vec::new();
    if let Some(help) = &d.help {
        if let Some(fix) = from_help(help, span.clone(), text) {
            out.push(fix);
        }
    }
    if d.code == Code::E0303 {
        out.extend(missing_property(d, span, analysis, lines));
    }
    out
}

fn quoted(help: &str, prefix: &str) -> Option<String> {
    let rest = help.strip_prefix(prefix)?;
    let end = rest.find('`')?;
    Some(rest[..end].to_string())
}

fn replace(title: String, range: Range<usize>, with: String) -> Option<Fix> {
    Some(Fix {
        title,
        edits: vec![(range, with)],
    })
}

fn from_help(help: &str, span: Range<usize>, text: &str) -> Option<Fix> {
    let written = text.get(span.clone())?;
    if let Some(name) = quoted(help, "did you mean `") {
        return did_you_mean(&name, span, text);
    }
    if let Some(with) = quoted(help, "write the unit, e.g. `").or_else(|| quoted(help, "write it without quotes: `")) {
        return replace(format!("Write `{with}`"), span, with);
    }
    if let Some(joined) = quoted(help, "write the unit directly after the number: `") {
        // The span is the unit written after a space; the number precedes it.
        let before = text[..span.start].trim_end_matches([' ', '\t']);
        let number_len = before.len()
            - before
                .trim_end_matches(|c: char| c.is_ascii_digit() || "._-+eE".contains(c))
                .len();
        let start = before.len() - number_len;
        let unit = joined.get(number_len..)?;
        let end = span.start + unit.len();
        if text.get(span.start..end) != Some(unit) || number_len == 0 {
            return None;
        }
        return replace(format!("Write `{joined}`"), start..end, joined);
    }
    // `vectors = "small.cvec"` → `trace("small.cvec")`.
    if help.starts_with("wrap the file in `") {
        let call = help.rsplit_once(": `").and_then(|(_, c)| c.strip_suffix('`'))?;
        return replace(format!("Write `{call}`"), span, call.to_string());
    }
    // `split_at = event` → `"event"`.
    if let Some((_, assignment)) = help.split_once("quote it, `") {
        let quoted_value = assignment.strip_suffix('`')?.split_once(" = ")?.1.to_string();
        return replace(format!("Write `{quoted_value}`"), span, quoted_value);
    }
    match (help, written) {
        ("properties are set with `=`, not `:`", ":") => replace("Write `=`".into(), span, "=".into()),
        ("no `;` is needed: put each property on its own line", ";") => {
            replace("Remove the `;`".into(), span, String::new())
        }
        _ => None,
    }
}

/// Replaces the primary span with the suggested name: inside quotes when the
/// span is a string, without the part already written before the span (the
/// number of `200msec`, the `alias.` of a module member).
fn did_you_mean(name: &str, span: Range<usize>, text: &str) -> Option<Fix> {
    let written = &text[span.clone()];
    let title = format!("Replace with `{name}`");
    if written.starts_with('"') && !name.starts_with('"') {
        return replace(title, span, format!("\"{name}\""));
    }
    for split in (1..name.len()).rev().filter(|&k| name.is_char_boundary(k)) {
        let (head, tail) = name.split_at(split);
        let number = head.starts_with(|c: char| c.is_ascii_digit() || c == '-')
            && head.chars().all(|c| c.is_ascii_digit() || "._-+eE".contains(c));
        if (head.ends_with('.') || number) && text[..span.start].ends_with(head) {
            return replace(title, span, tail.to_string());
        }
    }
    replace(title, span, name.to_string())
}

/// E0303: the label names the missing property; it is added at the end of
/// the block with a value the checker accepts (its lower bound, a member).
fn missing_property(d: &Diagnostic, span: Range<usize>, analysis: &Analysis, lines: &LineIndex) -> Option<Fix> {
    let label = d.labels.iter().find(|l| l.primary)?;
    let name = quoted(&label.message, "missing `")?;
    let header = analysis.tokens.partition_point(|t| t.start < span.start);
    if analysis.tokens.get(header)?.start != span.start {
        return None;
    }
    // The block's own frame: the first one opened after its header.
    let frame_index = analysis.frames.partition_point(|f| f.open <= header);
    let frame = analysis.frames.get(frame_index)?;
    if !matches!(frame.kind, FrameKind::Block { .. }) {
        return None;
    }
    let schema = registry::block(analysis.block_kind(frame_index)?)?;
    let prop = schema
        .accepted_props(analysis.variant(frame_index))
        .into_iter()
        .find(|p| p.name == name)?;
    let close = analysis.tokens[frame.close?];
    let text = analysis.text;
    let line_start = lines.line_start(span.start);
    let indent: String = text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let close_line_start = lines.line_start(close.start);
    let own_line = text[close_line_start..close.start].trim().is_empty();
    let line = format!("{name} = {}", placeholder(&prop));
    let (at, insert) = if own_line {
        (close_line_start, format!("{indent}  {line}\n"))
    } else {
        (close.start, format!("{line} "))
    };
    Some(Fix {
        title: format!("Add `{line}`"),
        edits: vec![(at..at, insert)],
    })
}

/// A value of the property's type within its bounds.
fn placeholder(prop: &Prop) -> String {
    let lower = prop.min.map(|_| {
        let range = prop.range_text();
        let first = range.split(" – ").next().unwrap_or(&range);
        first.trim_start_matches("≥ ").to_string()
    });
    match lower {
        Some(lower) if !matches!(prop.ty, Ty::List(_)) => lower,
        _ => value_of_type(&prop.ty),
    }
}

fn value_of_type(ty: &Ty) -> String {
    match ty {
        Ty::Int | Ty::Float | Ty::Dist(None) => "1".into(),
        Ty::Bool => "false".into(),
        Ty::Str | Ty::Path => "\"\"".into(),
        Ty::Quantity(d) | Ty::Dist(Some(d)) => format!("1{}", d.example_unit()),
        Ty::Enum(members) => members.first().copied().unwrap_or_default().into(),
        Ty::List(_) => "[]".into(),
        Ty::Ctor(name) => match registry::function(name) {
            Some(function) => {
                let args: Vec<String> = function
                    .params
                    .iter()
                    .filter(|p| p.default == registry::Default::Required)
                    .map(|p| format!("{} = {}", p.name, placeholder(p)))
                    .collect();
                format!("{name}({})", args.join(", "))
            }
            None => format!("{name}()"),
        },
        Ty::OneOf(options) => options.first().map(value_of_type).unwrap_or_default(),
        Ty::Range(d) => format!("0{0}..1{0}", d.example_unit()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use exp_check::{compile, Options};

    use crate::diagnostics::convert;
    use crate::documents::{Document, Overlay};
    use crate::library::Library;
    use crate::text::LineIndex;

    fn check(path: &Path, overlay: &Overlay) -> exp_check::Compilation {
        let options = Options {
            seed: None,
            require_experiment: false,
        };
        compile(&path.to_string_lossy(), overlay, &options)
    }

    fn messages(compilation: &exp_check::Compilation) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = compilation
            .diagnostics
            .iter()
            .map(|d| (d.code.as_str().to_string(), d.message.clone()))
            .collect();
        out.sort();
        out
    }

    /// Every quick fix offered on the diagnostic UI specs, applied, removes the
    /// diagnostic it was offered for and adds no syntax error.
    #[test]
    fn every_quick_fix_removes_its_diagnostic() {
        let ui = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("../../tests/ui");
        let ui = ui.canonicalize().unwrap();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&ui)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "exp"))
            .collect();
        files.sort();
        let library = Library::none();
        let mut applied: BTreeMap<String, usize> = BTreeMap::new();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let compilation = check(&path, &Overlay::default());
            let root = path.to_string_lossy().into_owned();
            let before = messages(&compilation);
            for converted in convert(&compilation, &root, &library) {
                for (title, edits) in &converted.fixes {
                    let index = LineIndex::new(&text);
                    let mut fixed = text.clone();
                    let mut edits: Vec<_> = edits
                        .iter()
                        .map(|e| {
                            (
                                index.offset(e.range.start)..index.offset(e.range.end),
                                e.new_text.clone(),
                            )
                        })
                        .collect();
                    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
                    for (range, new_text) in edits {
                        fixed.replace_range(range, &new_text);
                    }
                    let uri = crate::uri::from_path(&path).unwrap();
                    let document = Document {
                        uri,
                        path: Some(path.clone()),
                        version: 1,
                        text: fixed.clone().into(),
                    };
                    let after = messages(&check(&path, &Overlay::of([&document])));
                    let code = match &converted.diagnostic.code {
                        Some(lsp_types::NumberOrString::String(code)) => code.clone(),
                        other => panic!("{other:?}"),
                    };
                    let message = converted.diagnostic.message.lines().next().unwrap().to_string();
                    let name = path.file_name().unwrap().to_string_lossy();
                    let count =
                        |list: &[(String, String)]| list.iter().filter(|m| m.0 == code && m.1 == message).count();
                    assert!(
                        count(&after) < count(&before),
                        "{name}: `{title}` left {code} {message}:\n{fixed}\n{after:?}"
                    );
                    let syntax = |list: &[(String, String)]| list.iter().filter(|m| m.0.starts_with("E01")).count();
                    assert!(
                        syntax(&after) <= syntax(&before),
                        "{name}: `{title}` broke the syntax:\n{fixed}"
                    );
                    *applied.entry(code).or_default() += 1;
                }
            }
        }
        for code in ["E0103", "E0201", "E0302", "E0303", "E0401", "E0403", "E0407"] {
            assert!(applied.contains_key(code), "no fix of {code} was tried: {applied:?}");
        }
    }
}
