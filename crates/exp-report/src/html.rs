//! The offline HTML report: one self-contained file, every figure an
//! inline SVG, styles inline, no script and no request to anywhere, so it
//! opens the same from a laptop, a cluster's login node or an archive.

use std::fmt::Write;

use exp_plan::Plan;
use exp_results::claims::ClaimRecord;
use exp_results::{Manifest, TrialStatus};

use crate::aggregate::SweepTable;
use crate::claims::FigureLink;
use crate::compare::RunComparison;
use crate::figures::{point_label, Figure};
pub use crate::html_text::escape;
use crate::ReportError;

const STYLE: &str = "body{font-family:sans-serif;max-width:800px;margin:2em auto;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}\
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
th{background:#f4f4f4}td.l,th.l{text-align:left}.warn{color:#a40}\
figure{margin:1.5em 0}figcaption{font-size:.9em;color:#444}svg{max-width:100%;height:auto}\
div.claims{font-size:.9em;border-left:3px solid #ccc;padding-left:.5em}";

/// The tables a page shows above its figures.
pub enum Tables<'a> {
    /// One run: its sweep points' metrics, and the Methods paragraph the page ends with.
    Sweep { table: &'a SweepTable, methods: &'a str },
    /// Several runs: each of the others against the first.
    Comparison(&'a [RunComparison]),
}

/// The whole report page of one run, or of runs compared with the first;
/// each run with its plan, whose claims say which figures its claims'
/// verdicts (the manifest's `claims`) are about.
pub fn page(runs: &[(&Manifest, Option<&Plan>)], figures: &[Figure], tables: &Tables) -> Result<String, ReportError> {
    let about: Vec<Vec<Vec<String>>> = runs
        .iter()
        .map(|(run, plan)| run.claims.iter().map(|c| figures_of(*plan, c, figures)).collect())
        .collect();
    let mut out = String::new();
    let title = match runs {
        [(one, _)] => format!("{} — run {}", one.experiment, one.run_id),
        _ => format!("{} runs compared", runs.len()),
    };
    // Writing to a String cannot fail.
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    for (i, (run, _)) in runs.iter().enumerate() {
        if runs.len() > 1 {
            let role = if i == 0 { "baseline" } else { "compared" };
            let _ = writeln!(
                out,
                "<h2>{role}: {} run {}</h2>",
                escape(&run.experiment),
                escape(&run.run_id)
            );
        }
        header(&mut out, run);
        let links: Vec<Vec<FigureLink>> = about[i]
            .iter()
            .map(|ids| {
                ids.iter()
                    .filter_map(|id| figures.iter().find(|f| f.id == *id))
                    .map(|f| FigureLink {
                        id: &f.id,
                        title: &f.chart.title,
                    })
                    .collect()
            })
            .collect();
        crate::claims::html(&mut out, i, &run.claims, &links);
        crate::validity::html(&mut out, run);
    }
    match (tables, runs.first()) {
        (Tables::Sweep { table, .. }, Some((run, _))) if !table.points.is_empty() => sweep_table(&mut out, run, table),
        (Tables::Comparison(comparisons), _) => crate::html_compare::tables(&mut out, comparisons),
        _ => {}
    }
    for figure in figures {
        let svg = figure.svg()?;
        let _ = write!(
            out,
            "<figure id=\"{}\">\n{svg}\n<figcaption>{}</figcaption>",
            figure.id,
            escape(&figure.caption)
        );
        crate::claims::html_under_figure(&mut out, &claims_about(runs, &about, &figure.id));
        out.push_str("</figure>\n");
    }
    if figures.is_empty() {
        out.push_str("<p>No table of this run has a figure.</p>\n");
    }
    if let Tables::Sweep { methods, .. } = tables {
        let _ = writeln!(out, "<h2>Methods</h2>\n<p id=\"methods\">{}</p>", escape(methods));
    }
    out.push_str("</body></html>\n");
    Ok(out)
}

/// The figures the plan's claim recorded as `record` is about (none
/// without the plan, or a claim it no longer has).
fn figures_of(plan: Option<&Plan>, record: &ClaimRecord, figures: &[Figure]) -> Vec<String> {
    plan.and_then(|p| {
        p.claims
            .iter()
            .find(|c| c.text == record.text && c.group == record.group)
    })
    .map_or_else(Vec::new, |claim| crate::claim_figures::figures_of(claim, figures))
}

/// The claims of every run about figure `id`, each with its anchor.
fn claims_about<'a>(
    runs: &[(&'a Manifest, Option<&Plan>)],
    about: &[Vec<Vec<String>>],
    id: &str,
) -> Vec<(String, &'a ClaimRecord)> {
    let mut out = Vec::new();
    for (r, (run, _)) in runs.iter().enumerate() {
        for (i, claim) in run.claims.iter().enumerate() {
            if about[r][i].iter().any(|f| f == id) {
                out.push((crate::claims::anchor(r, i), claim));
            }
        }
    }
    out
}

/// What was run, where and how it ended, with contended trials named.
fn header(out: &mut String, m: &Manifest) {
    let spec = m.spec.as_ref().map_or("(a plan file)".to_string(), |s| s.root.clone());
    let host = &m.host;
    let rows = [
        ("spec", spec),
        ("plan sha256", m.plan_sha256.clone()),
        ("status", m.status.as_str().to_string()),
        ("started", m.started_at.clone()),
        ("ended", m.ended_at.clone().unwrap_or_else(|| "—".into())),
        (
            "host",
            format!(
                "{} ({}, {} CPUs, {})",
                host.hostname, host.cpu_model, host.cpus_online, host.kernel
            ),
        ),
        ("expc", m.expc_version.clone()),
        ("seed", m.seed.to_string()),
        ("time scale", m.options.time_scale.to_string()),
    ];
    out.push_str("<table>\n");
    for (k, v) in rows {
        let _ = writeln!(
            out,
            "<tr><th class=\"l\">{k}</th><td class=\"l\">{}</td></tr>",
            escape(&v)
        );
    }
    out.push_str("</table>\n");
    let contended: Vec<String> = m
        .trials
        .iter()
        .filter(|t| t.metrics.get("contended").is_some_and(|&c| c != 0.0))
        .map(|t| t.trial.to_string())
        .collect();
    if !contended.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"warn\">Contended trials (the load generator could not keep its schedule): {}.</p>",
            contended.join(", ")
        );
    }
    let unfinished = m.trials.iter().filter(|t| t.status != TrialStatus::Complete).count();
    if unfinished > 0 {
        let _ = writeln!(
            out,
            "<p class=\"warn\">{unfinished} of {} trials did not complete.</p>",
            m.trials.len()
        );
    }
}

/// Each point's metrics: the statistic with its interval (or a count of
/// yes), n, and the method; the trials left out said above it.
fn sweep_table(out: &mut String, m: &Manifest, table: &SweepTable) {
    out.push_str("<h2>Sweep points</h2>\n");
    for method in crate::text::sweep::methods(table) {
        let _ = writeln!(out, "<p class=\"method\">{}</p>", escape(&method));
    }
    if let Some(note) = table.exclusion_note() {
        let _ = writeln!(out, "<p class=\"warn\">{}</p>", escape(&note));
    }
    out.push_str("<table><tr><th class=\"l\">point</th><th class=\"l\">metric</th><th class=\"l\">value</th></tr>\n");
    for p in &table.points {
        let label = m
            .trials
            .iter()
            .find(|t| t.point == p.point)
            .map(point_label)
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr><td class=\"l\">{} {}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            p.point,
            escape(&label),
            escape(&p.metric),
            escape(&crate::text::sweep::cell(p))
        );
    }
    out.push_str("</table>\n");
}
