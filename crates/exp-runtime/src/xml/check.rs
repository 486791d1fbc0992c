//! An xml workload's checks before a run, reached through `kinds.rs`: the
//! limits a compiled plan meets (its numbers' bounds) and its preflight
//! (a corpus or set directory to read).

use std::path::Path;

use exp_diagnostics::limits::MAX_PLAN_INTEGER;
use exp_diagnostics::{Code, Diagnostic};
use exp_plan::Xml;

use crate::findings::{out_of_bounds, Finding, Host};

/// An xml workload's numbers.
pub(crate) fn limits(name: &str, xml: &Xml) -> Vec<Finding> {
    out_of_bounds(Code::E1005, "xml", name, xml_numbers(xml)).collect()
}

/// An xml workload's numbers with the bounds the language gives them
/// (exp-check's `registry/xml.rs`): outside them generation would start
/// billions of threads or never end.
fn xml_numbers(xml: &Xml) -> Vec<(&'static str, f64, (f64, f64))> {
    let n = |n: u64| n as f64;
    let mut numbers = vec![
        ("max_distinct", f64::from(xml.max_distinct), (1.0, 1e6)),
        (
            "categorical_threshold",
            f64::from(xml.categorical_threshold),
            (1.0, 1e6),
        ),
        ("per_file", f64::from(xml.per_file), (1.0, 1e9)),
        ("threads", f64::from(xml.threads), (0.0, 1024.0)),
    ];
    if let Some(documents) = xml.documents {
        numbers.push(("documents", n(documents), (1.0, MAX_PLAN_INTEGER)));
    }
    if let Some(bytes) = xml.size_bytes {
        numbers.push(("size_bytes", n(bytes), (1.0, MAX_PLAN_INTEGER)));
    }
    numbers
}

/// An xml workload's preflight: the corpus must name at least one readable
/// input, a set directory must exist (E1004).
pub(crate) fn preflight(name: &str, xml: &Xml, _host: &Host) -> Vec<Finding> {
    problems(xml)
        .into_iter()
        .map(|problem| {
            let diagnostic = Diagnostic::error(Code::E1004, format!("xml `{name}`: {problem}"))
                .help("paths in a spec are relative to the spec's own directory");
            (format!("xml {name} {problem}"), diagnostic)
        })
        .collect()
}

/// What is wrong with the workload's inputs, as messages.
fn problems(xml: &Xml) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(corpus) = &xml.corpus {
        match super::corpus_sources(corpus) {
            Ok(sources) if sources.is_empty() => problems.push(format!("corpus `{corpus}` matches no file")),
            Ok(_) => {}
            Err(e) => problems.push(format!("corpus `{corpus}`: {e}")),
        }
    }
    if let Some(set) = &xml.set {
        let dir = Path::new(set);
        if !dir.join("set.json").is_file() {
            problems.push(format!("set `{set}`: {} has no set.json", dir.display()));
        }
    }
    if xml.corpus.is_none() && xml.set.is_none() {
        problems.push("give `corpus` (to extract from) or `set` (an existing set directory)".into());
    }
    problems
}
