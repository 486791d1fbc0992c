//! `expc check --message-format json`: one JSON object per diagnostic and
//! line, for editors and CI. Lines and columns count from 1 (columns in
//! characters); byte offsets count from 0, end exclusive.

use exp_diagnostics::{Diagnostic, Severity, SourceMap, Span};
use serde_json::{json, Value};

pub fn diagnostic_json(diagnostic: &Diagnostic, sources: &SourceMap) -> Value {
    let span = |span: Span| {
        let file = sources.get(span.file);
        let (line, column) = file.line_column(span.start as usize);
        let (end_line, end_column) = file.line_column(span.end as usize);
        json!({
            "file": file.name,
            "line": line,
            "column": column,
            "end_line": end_line,
            "end_column": end_column,
            "byte_start": span.start,
            "byte_end": span.end,
        })
    };
    let labels: Vec<Value> = diagnostic
        .labels
        .iter()
        .map(|label| {
            let mut value = span(label.span);
            value["message"] = json!(label.message);
            value["primary"] = json!(label.primary);
            value
        })
        .collect();
    json!({
        "code": diagnostic.code.as_str(),
        "severity": match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        },
        "message": diagnostic.message,
        "labels": labels,
        "notes": diagnostic.notes,
        "help": diagnostic.help,
    })
}
