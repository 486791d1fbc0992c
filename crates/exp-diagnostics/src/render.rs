use codespan_reporting::diagnostic as cs;
use codespan_reporting::term::{self, termcolor};

use crate::clip::Clipped;
use crate::limits::{group, MAX_DIAGNOSTICS};
use crate::{Code, Diagnostic, Severity, SourceMap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenderStyle {
    /// Plain text: snapshots, logs, pipes.
    Plain,
    /// ANSI colours for a terminal.
    Color,
}

fn to_codespan(diagnostic: &Diagnostic) -> cs::Diagnostic<crate::FileId> {
    let severity = match diagnostic.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let labels = diagnostic
        .labels
        .iter()
        .map(|l| {
            let style = if l.primary {
                cs::LabelStyle::Primary
            } else {
                cs::LabelStyle::Secondary
            };
            cs::Label::new(style, l.span.file, l.span.range()).with_message(&l.message)
        })
        .collect();
    let mut notes = diagnostic.notes.clone();
    if let Some(help) = &diagnostic.help {
        notes.push(format!("help: {help}"));
    }
    cs::Diagnostic::new(severity)
        .with_code(diagnostic.code.as_str())
        .with_message(&diagnostic.message)
        .with_labels(labels)
        .with_notes(notes)
}

/// Renders one diagnostic the way rustc does: header, source excerpts with
/// labelled spans, notes and help. Lines longer than a screen are shown cut
/// around the labels (see `clip.rs`), so a 50 MB line costs a few hundred
/// bytes of output, not 100 MB.
pub fn render(diagnostic: &Diagnostic, sources: &SourceMap, style: RenderStyle) -> String {
    let config = term::Config::default();
    let (view, diagnostic) = Clipped::new(sources, diagnostic);
    let mut out = Vec::new();
    let result = match style {
        RenderStyle::Plain => {
            let mut writer = termcolor::NoColor::new(&mut out);
            term::emit_to_write_style(&mut writer, &config, &view, &to_codespan(&diagnostic))
        }
        RenderStyle::Color => {
            let mut writer = termcolor::Ansi::new(&mut out);
            term::emit_to_write_style(&mut writer, &config, &view, &to_codespan(&diagnostic))
        }
    };
    match result {
        Ok(()) => String::from_utf8_lossy(&out).into_owned(),
        // A span outside its file is a compiler bug; still show the message.
        Err(_) => format!(
            "{}[{}]: {}\n",
            match diagnostic.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            },
            diagnostic.code.as_str(),
            diagnostic.message
        ),
    }
}

/// Renders the diagnostics followed by a one-line count, as `expc check`
/// prints them. At most [`MAX_DIAGNOSTICS`] are shown (plus any E0107 that
/// says where a parse stopped); a line says how many more there are, and the
/// count covers them all.
pub fn render_all(diagnostics: &[Diagnostic], sources: &SourceMap, style: RenderStyle) -> String {
    let mut out = String::new();
    let mut shown = 0;
    let (mut hidden_errors, mut hidden_warnings) = (0usize, 0usize);
    for diagnostic in diagnostics {
        if shown < MAX_DIAGNOSTICS || diagnostic.code == Code::E0107 {
            out.push_str(&render(diagnostic, sources, style));
            shown += 1;
        } else if diagnostic.is_error() {
            hidden_errors += 1;
        } else {
            hidden_warnings += 1;
        }
    }
    let plural = |n: usize, word: &str| format!("{} {word}{}", group(n as u64), if n == 1 { "" } else { "s" });
    if hidden_errors + hidden_warnings > 0 {
        out.push_str(&format!(
            "… {} more {} not shown ({}, {}): at most {MAX_DIAGNOSTICS} are shown (`expc explain E0107`)\n",
            group((hidden_errors + hidden_warnings) as u64),
            if hidden_errors + hidden_warnings == 1 {
                "diagnostic"
            } else {
                "diagnostics"
            },
            plural(hidden_errors, "error"),
            plural(hidden_warnings, "warning"),
        ));
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    if errors > 0 || warnings > 0 {
        out.push_str(&format!(
            "{}, {}\n",
            plural(errors, "error"),
            plural(warnings, "warning")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Span;

    fn error_at(file: crate::FileId, at: usize) -> Diagnostic {
        Diagnostic::error(Code::E0101, format!("problem at {at}")).primary(Span::new(file, at..at + 1), "here")
    }

    #[test]
    fn shows_at_most_the_limit_and_counts_the_rest() {
        let mut sources = SourceMap::new();
        let text = "x\n".repeat(500);
        let file = sources.add("a.exp", text);
        let mut diagnostics: Vec<Diagnostic> = (0..300).map(|i| error_at(file, i * 2)).collect();
        diagnostics.push(Diagnostic::warning(Code::W0801, "unused").primary(Span::new(file, 0..1), "here"));
        let out = render_all(&diagnostics, &sources, RenderStyle::Plain);
        assert_eq!(out.matches("error[E0101]").count(), MAX_DIAGNOSTICS);
        assert!(
            out.contains("… 201 more diagnostics not shown (200 errors, 1 warning)"),
            "{out}"
        );
        assert!(out.ends_with("300 errors, 1 warning\n"), "{out}");
    }

    #[test]
    fn a_stopped_parse_is_always_shown() {
        let mut sources = SourceMap::new();
        let file = sources.add("a.exp", "x\n".repeat(500));
        let mut diagnostics: Vec<Diagnostic> = (0..150).map(|i| error_at(file, i * 2)).collect();
        diagnostics.push(Diagnostic::error(Code::E0107, "stopped").primary(Span::new(file, 400..401), "here"));
        let out = render_all(&diagnostics, &sources, RenderStyle::Plain);
        assert!(out.contains("error[E0107]: stopped"), "{out}");
        assert!(
            out.contains("… 50 more diagnostics not shown (50 errors, 0 warnings)"),
            "{out}"
        );
    }
}
