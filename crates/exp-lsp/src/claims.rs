//! Claims in the editor: inside an `expect` block, completion of the
//! statistics and, in a statistic's parentheses, of the metrics the
//! experiment's workloads measure (after `kind.label.` those of that
//! workload); hover on a claim's statistic or metric (its unit, what it
//! measures, where its rows are).

use exp_check::registry::claims::{self as catalogue, Applies, STATISTICS};
use exp_check::registry::{self, BlockSchema, Role, RowMetric};
use lsp_types::CompletionItemKind;

use crate::analysis::{Analysis, FrameKind};
use crate::cursor::Spot;
use crate::insert::Insert;
use crate::lex::Tok;

/// One completion: label, kind, detail, documentation, what to insert.
pub struct Entry {
    pub label: String,
    pub kind: CompletionItemKind,
    pub detail: String,
    pub docs: Option<String>,
    pub insert: Insert,
}

/// A labelled workload block of the document.
struct Workload<'a> {
    schema: &'static BlockSchema,
    label: &'a str,
}

/// What may be written at `offset` inside an `expect` block; `None`
/// elsewhere (the other completions apply).
pub fn completions(analysis: &Analysis, offset: usize, spot: &Spot) -> Option<Vec<Entry>> {
    let (_, call) = claim_frames(analysis, &analysis.frames_around(offset))?;
    let workloads = workloads(analysis);
    // The word before the one being typed: `during` wants an anomaly,
    // `at` and `with` a sweep parameter.
    let typed = analysis.text[..offset].trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    let previous = typed.trim_end().rsplit(|c: char| !c.is_ascii_alphanumeric()).next();
    match previous {
        Some("during" | "before" | "after") => {
            let anomalies = workloads.iter().filter(|w| w.schema.kind == "anomaly");
            return Some(
                anomalies
                    .map(|w| label_entry(w, exp_syntax::claim_label(w.label)))
                    .collect(),
            );
        }
        Some("at" | "with") => return Some(sweep_parameters(analysis)),
        _ => {}
    }
    let Some(call) = call else {
        return Some(STATISTICS.iter().map(statistic_entry).collect());
    };
    let FrameKind::Call { name } = &analysis.frames[call].kind else {
        return None;
    };
    let applies = catalogue::statistic(name).map_or(Applies::Rows, |(s, _)| s.applies);
    let trial = applies == Applies::Trial;
    let mut entries = Vec::new();
    let head = match spot {
        Spot::MemberOf { head } => Some(head.as_str()),
        _ => None,
    };
    match (head, applies) {
        // `loss(fleet.` → its fleets; `loss(` → `fleet.NAME` of each.
        (Some(kind), Applies::Workload(wanted)) if kind == wanted => {
            for w in workloads.iter().filter(|w| w.schema.kind == wanted) {
                entries.push(label_entry(w, w.label.to_string()));
            }
        }
        (None, Applies::Workload(wanted)) => {
            for w in workloads.iter().filter(|w| w.schema.kind == wanted) {
                entries.push(label_entry(w, format!("{}.{}", w.schema.kind, w.label)));
            }
        }
        (Some(_), Applies::Workload(_)) => {}
        (Some(head), _) => match find(&workloads, head) {
            Some(w) => entries.extend(metric_entries(w.schema, trial)),
            // `fleet.` → the fleets' labels.
            None => {
                for w in workloads.iter().filter(|w| w.schema.kind == head) {
                    entries.push(label_entry(w, w.label.to_string()));
                }
            }
        },
        (None, _) => {
            let mut seen = Vec::new();
            for w in &workloads {
                if !seen.contains(&w.schema.kind) {
                    seen.push(w.schema.kind);
                    entries.extend(metric_entries(w.schema, trial));
                }
            }
            entries.extend(workloads.iter().map(|w| label_entry(w, w.label.to_string())));
        }
    }
    Some(entries)
}

/// Markdown for the statistic or metric at token `i` of a claim.
pub fn hover(analysis: &Analysis, i: usize) -> Option<String> {
    if analysis.tokens[i].kind != Tok::Ident {
        return None;
    }
    let start = analysis.tokens[i].start;
    let (_, call) = claim_frames(analysis, &analysis.frames_around(start))?;
    let text = analysis.text_of(i);
    let opens_call = analysis.next(i).is_some_and(|n| {
        analysis.tokens[n].kind == Tok::Punct('(') && analysis.tokens[n].start == analysis.tokens[i].end
    });
    if opens_call {
        let (statistic, _) = catalogue::statistic(text)?;
        return Some(format!("**{text}**(…) — statistic\n\n{}", statistic.doc));
    }
    let FrameKind::Call { name } = &analysis.frames[call?].kind else {
        return None;
    };
    let trial = catalogue::statistic(name).is_some_and(|(s, _)| s.applies == Applies::Trial);
    // The path up to this segment: `fleet.sensors.ack_latency` → its head.
    let mut first = i;
    while first >= 2
        && analysis.tokens[first - 1].kind == Tok::Punct('.')
        && analysis.tokens[first - 2].kind == Tok::Ident
        && analysis.tokens[first - 2].end == analysis.tokens[first - 1].start
    {
        first -= 2;
    }
    let head = &analysis.text[analysis.tokens[first].start..analysis.tokens[i].start];
    let head = head.trim_end_matches('.');
    let workloads = workloads(analysis);
    let kinds: Vec<&'static BlockSchema> = match head {
        "" => workloads.iter().map(|w| w.schema).collect(),
        head => find(&workloads, head).map(|w| w.schema).into_iter().collect(),
    };
    kinds.iter().find_map(|schema| metric_docs(schema, text, trial))
}

/// The `expect` block frame around the cursor and, when the cursor is in a
/// statistic's parentheses, that call's frame.
fn claim_frames(analysis: &Analysis, frames: &[usize]) -> Option<(usize, Option<usize>)> {
    let is_expect = |f: usize| analysis.block_kind(f) == Some("expect");
    match frames {
        [first, ..] if is_expect(*first) => Some((*first, None)),
        [call, outer, ..] if is_expect(*outer) && matches!(analysis.frames[*call].kind, FrameKind::Call { .. }) => {
            Some((*outer, Some(*call)))
        }
        _ => None,
    }
}

/// Every labelled workload block of the document, and the monitor (as
/// `monitor`, first, as the compiler finds it) when there is a `monitor` block.
fn workloads<'a>(analysis: &Analysis<'a>) -> Vec<Workload<'a>> {
    let mut found: Vec<Workload<'a>> = Vec::new();
    for frame in &analysis.frames {
        let FrameKind::Block { kind } = &frame.kind else {
            continue;
        };
        let Some(schema) = registry::block(kind) else { continue };
        match schema.role {
            Role::Service { .. } if !found.iter().any(|w| w.schema.kind == schema.kind) => {
                found.insert(
                    0,
                    Workload {
                        schema,
                        label: "monitor",
                    },
                );
            }
            Role::Workload { .. } => {
                let Some(label) = analysis.prev(frame.open) else {
                    continue;
                };
                if matches!(analysis.tokens[label].kind, Tok::Str { closed: true }) {
                    found.push(Workload {
                        schema,
                        label: analysis.text_of(label).trim_matches('"'),
                    });
                }
            }
            _ => {}
        }
    }
    found
}

/// The parameters of the document's `sweep` blocks.
fn sweep_parameters(analysis: &Analysis) -> Vec<Entry> {
    (0..analysis.frames.len())
        .filter(|&f| analysis.block_kind(f) == Some("sweep"))
        .flat_map(|f| analysis.properties(f))
        .map(|(name, _)| Entry {
            label: name.to_string(),
            kind: CompletionItemKind::TYPE_PARAMETER,
            detail: "sweep parameter".into(),
            docs: None,
            insert: Insert::Plain(name.to_string()),
        })
        .collect()
}

/// The workload `label` or `kind.label` names.
fn find<'w, 'a>(workloads: &'w [Workload<'a>], head: &str) -> Option<&'w Workload<'a>> {
    let (kind, label) = head.split_once('.').map_or((None, head), |(k, l)| (Some(k), l));
    workloads
        .iter()
        .find(|w| w.label == label && kind.is_none_or(|k| k == w.schema.kind))
}

fn statistic_entry(statistic: &catalogue::Statistic) -> Entry {
    let name = statistic.name;
    let placeholder = match statistic.applies {
        Applies::Share => "${1:metric} < ${2:value}",
        Applies::Workload(_) => "${1:workload}",
        _ => "${1:metric}",
    };
    Entry {
        label: name.to_string(),
        kind: CompletionItemKind::FUNCTION,
        detail: "statistic".into(),
        docs: Some(statistic.doc.to_string()),
        insert: Insert::Snippet {
            snippet: format!("{name}({placeholder})"),
            plain: format!("{name}("),
        },
    }
}

fn label_entry(workload: &Workload, insert: String) -> Entry {
    let detail = match workload.schema.role {
        Role::Service { .. } => "the monitor's system metrics".to_string(),
        _ => format!("{} \"{}\"", workload.schema.kind, workload.label),
    };
    Entry {
        label: insert.clone(),
        kind: CompletionItemKind::VARIABLE,
        detail,
        docs: None,
        insert: Insert::Plain(insert),
    }
}

/// The row (or, for `value`, trial) metrics of a workload kind or the monitor.
fn metric_entries(schema: &BlockSchema, trial: bool) -> Vec<Entry> {
    let (metrics, row_metrics) = (schema.trial_metrics(), schema.row_metrics());
    let entry = |name: &str, unit: &str, docs: Option<String>| Entry {
        label: name.to_string(),
        kind: CompletionItemKind::FIELD,
        detail: format!("{} metric, {unit}", schema.kind),
        docs,
        insert: Insert::Plain(name.to_string()),
    };
    match trial {
        true => metrics
            .iter()
            .map(|m| entry(m, unit_word(catalogue::trial_metric_unit(schema.kind, m)), None))
            .collect(),
        false => row_metrics
            .iter()
            .map(|m| entry(m.name, unit_word(catalogue::unit(m.dimension)), Some(row_docs(m))))
            .collect(),
    }
}

fn metric_docs(schema: &BlockSchema, metric: &str, trial: bool) -> Option<String> {
    let (metrics, row_metrics) = (schema.trial_metrics(), schema.row_metrics());
    let kind = schema.kind;
    if trial {
        let unit = catalogue::trial_metric_unit(kind, metric);
        return metrics.contains(&metric).then(|| {
            format!(
                "**{metric}** — trial metric of `{kind}` workloads, {}\n\nOne value per trial, as the manifest records it.",
                unit_word(unit)
            )
        });
    }
    let row = row_metrics.iter().find(|m| m.name == metric)?;
    let whose = match schema.role {
        Role::Service { .. } => format!("the `{kind}`"),
        _ => format!("`{kind}` workloads"),
    };
    Some(format!(
        "**{metric}** — row metric of {whose}, {}\n\n{}",
        unit_word(catalogue::unit(row.dimension)),
        row_docs(row)
    ))
}

fn row_docs(metric: &RowMetric) -> String {
    format!(
        "{}\n\nRows: `{}`, column `{}`.",
        metric.doc, metric.table, metric.column
    )
}

use catalogue::unit_word;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::completion::{complete, Options};
    use crate::context::Context;
    use crate::documents::Overlay;
    use crate::library::Library;

    const SPEC: &str = "experiment \"x\" {\n  fleet \"sensors\" {\n    devices = 10\n    gap = 100ms\n  }\n  traffic \"web\" {\n    vectors = trace(\"a.cvec\")\n  }\n  expect {\n    CLAIM\n  }\n}\n";

    /// The completion labels at `|` in a claim of [`SPEC`].
    fn labels(claim: &str) -> Vec<String> {
        let text = SPEC.replace("CLAIM", claim);
        let offset = text.find('|').unwrap();
        let text = text.replacen('|', "", 1);
        let (overlay, library) = (Overlay::default(), Library::none());
        let context = Context::new(&text, Some(Path::new("/x/a.exp")), &overlay, &library);
        complete(&context, offset, &Options { snippets: true })
            .into_iter()
            .map(|i| i.label)
            .collect()
    }

    fn hover_at(claim: &str, needle: &str) -> String {
        let text = SPEC.replace("CLAIM", claim);
        let offset = text.find(needle).unwrap() + 1;
        let (overlay, library) = (Overlay::default(), Library::none());
        let context = Context::new(&text, Some(Path::new("/x/a.exp")), &overlay, &library);
        crate::hover::hover(&context, offset, &[])
            .map(|(h, _)| h)
            .unwrap_or_default()
    }

    #[test]
    fn a_claim_starts_with_a_statistic() {
        let got = labels("|");
        for expected in ["p99", "median", "share", "value", "loss", "max_ks"] {
            assert!(got.contains(&expected.to_string()), "{expected}: {got:?}");
        }
        assert!(!got.contains(&"fleet".to_string()), "no blocks in `expect`: {got:?}");
    }

    #[test]
    fn a_statistic_offers_the_metrics_of_the_workloads() {
        let all = labels("p99(|)");
        for expected in [
            "ack_latency",
            "send_lateness",
            "duration",
            "response_time",
            "sensors",
            "web",
        ] {
            assert!(all.contains(&expected.to_string()), "{expected}: {all:?}");
        }
        assert!(!all.contains(&"document_size".to_string()), "no xml here: {all:?}");
        let fleet = labels("p99(fleet.sensors.|)");
        assert!(fleet.contains(&"ack_latency".to_string()), "{fleet:?}");
        assert!(!fleet.contains(&"duration".to_string()), "a traffic metric: {fleet:?}");
        assert_eq!(
            labels("p99(web.|) < 1s"),
            ["duration", "response_time", "rtt_achieved", "window_throughput"]
        );
        assert_eq!(labels("p99(traffic.|)"), ["web"]);
        let trial = labels("value(sensors.|)");
        assert!(trial.contains(&"throughput".to_string()) && trial.contains(&"ack_latency_p99".to_string()));
        assert_eq!(labels("loss(|)"), ["fleet.sensors"]);
    }

    #[test]
    fn the_monitors_metrics_complete_and_hover_when_there_is_a_monitor() {
        let with_monitor = |claim: &str| {
            SPEC.replace("CLAIM", claim)
                .replace("  expect {", "  monitor {\n    interval = 500ms\n  }\n  expect {")
        };
        let text = with_monitor("mean(monitor.|) < 90%");
        let offset = text.find('|').unwrap();
        let text = text.replacen('|', "", 1);
        let (overlay, library) = (Overlay::default(), Library::none());
        let context = Context::new(&text, Some(Path::new("/x/a.exp")), &overlay, &library);
        let got: Vec<String> = complete(&context, offset, &Options { snippets: false })
            .into_iter()
            .map(|i| i.label)
            .collect();
        for expected in ["cpu_user_pct", "mem_available_bytes", "net_rx_bytes_per_s"] {
            assert!(got.contains(&expected.to_string()), "{expected}: {got:?}");
        }
        assert!(!got.contains(&"ack_latency".to_string()), "{got:?}");
        let text = with_monitor("mean(monitor.cpu_user_pct) < 90%");
        let offset = text.find("cpu_user").unwrap() + 1;
        let context = Context::new(&text, Some(Path::new("/x/a.exp")), &overlay, &library);
        let hover = crate::hover::hover(&context, offset, &[])
            .map(|(h, _)| h)
            .unwrap_or_default();
        assert!(
            hover.contains("row metric of the `monitor`, a ratio") && hover.contains("system_metrics"),
            "{hover}"
        );
        // Without a monitor block, no monitor metrics are offered.
        assert!(!labels("mean(|)").contains(&"cpu_user_pct".to_string()));
    }

    #[test]
    fn phases_offer_anomalies_and_points_sweep_parameters() {
        let spec = |claim: &str| {
            SPEC.replace("CLAIM", claim).replace(
                "  expect {",
                "  sweep {\n    n = [1, 2]\n  }\n  anomaly \"cpu-hog\" {\n    kind = cpuoccupy\n  }\n  expect {",
            )
        };
        let at = |claim: &str| {
            let text = spec(claim);
            let offset = text.find('|').unwrap();
            let text = text.replacen('|', "", 1);
            let (overlay, library) = (Overlay::default(), Library::none());
            let context = Context::new(&text, Some(Path::new("/x/a.exp")), &overlay, &library);
            let items = complete(&context, offset, &Options { snippets: false });
            items.into_iter().map(|i| i.label).collect::<Vec<_>>()
        };
        assert_eq!(at("p99(ack_latency during |)"), ["\"cpu-hog\""]);
        assert_eq!(at("p99(ack_latency at |)"), ["n"]);
        assert_eq!(at("p99(ack_latency) increases with |"), ["n"]);
    }

    #[test]
    fn a_claims_metric_and_statistic_hover_with_their_unit_and_meaning() {
        let metric = hover_at("p99(fleet.sensors.ack_latency) < 25ms", "ack_latency");
        assert!(
            metric.contains("row metric of `fleet` workloads, a duration") && metric.contains("mqtt_messages"),
            "{metric}"
        );
        let bare = hover_at("median(duration) < 1s", "duration)");
        assert!(bare.contains("row metric of `traffic`"), "{bare}");
        let trial = hover_at("value(sensors.throughput) > 10/s", "throughput");
        assert!(trial.contains("trial metric of `fleet` workloads, a rate"), "{trial}");
        let statistic = hover_at("share(web.duration < 1s) >= 90%", "share");
        assert!(statistic.contains("share of the trial's rows"), "{statistic}");
    }
}
