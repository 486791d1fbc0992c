use codespan_reporting::diagnostic as cs;
use codespan_reporting::term::{self, termcolor};

use crate::{Diagnostic, Severity, SourceMap};

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
/// labelled spans, notes and help.
pub fn render(diagnostic: &Diagnostic, sources: &SourceMap, style: RenderStyle) -> String {
    let config = term::Config::default();
    let mut out = Vec::new();
    let result = match style {
        RenderStyle::Plain => {
            let mut writer = termcolor::NoColor::new(&mut out);
            term::emit_to_write_style(&mut writer, &config, sources, &to_codespan(diagnostic))
        }
        RenderStyle::Color => {
            let mut writer = termcolor::Ansi::new(&mut out);
            term::emit_to_write_style(&mut writer, &config, sources, &to_codespan(diagnostic))
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

/// Renders all diagnostics followed by a one-line count, as `expc check` prints them.
pub fn render_all(diagnostics: &[Diagnostic], sources: &SourceMap, style: RenderStyle) -> String {
    let mut out: String = diagnostics.iter().map(|d| render(d, sources, style)).collect();
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    if errors > 0 || warnings > 0 {
        out.push_str(&format!(
            "{}, {}\n",
            plural(errors, "error"),
            plural(warnings, "warning")
        ));
    }
    out
}
