//! What the watch page shows: the shell (styles and a script inline, no
//! URL but its own server's `state` path) and the run's part, rendered
//! again at each refresh: progress, the trial order with each trial's
//! status and validity flags, every finding, and the report's figures
//! (`exp_report::figures`, as `expc report --html` draws them).

use std::fmt::Write;
use std::time::{Duration, SystemTime};

use exp_report::figures::point_label;
use exp_report::html::escape;
use exp_results::manifest::{RunStatus, TrialRecord, TrialStatus};
use exp_results::runner::Runner;

use super::snapshot::{shown_warnings, Snapshot};

const STYLE: &str = "body{font-family:sans-serif;max-width:900px;margin:2em auto;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}\
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
th{background:#f4f4f4}td.l,th.l{text-align:left}.warn{color:#a40}tr.running td{background:#eef6ff}\
tr.invalid td{color:#999}#live{color:#666;font-size:.9em}\
figure{margin:1.5em 0}figcaption{font-size:.9em;color:#444}svg{max-width:100%;height:auto}";

/// Trials of the order table around the first unfinished one.
const ORDER_BEFORE: usize = 20;
const ORDER_AFTER: usize = 80;
/// Findings and warnings listed at most.
const MAX_LISTED: usize = 200;

/// The page: `run` (the run's part as it is now) inside the shell that
/// fetches it again every `every`.
pub fn shell(title: &str, token: &str, every: Duration, run: &str) -> String {
    let every_ms = every.as_millis().max(500);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
<link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style></head>\n<body data-updates=\"0\">\n<h1>{title}</h1>\n\
<p id=\"live\">read from the run directory now; again every {seconds} s</p>\n<div id=\"run\">{run}</div>\n\
<script>\n(function () {{\n  var token = \"{token}\", every = {every_ms}, updates = 0;\n\
  var live = document.getElementById(\"live\");\n\
  function poll() {{\n\
    fetch(\"state?token=\" + encodeURIComponent(token), {{cache: \"no-store\"}})\n\
      .then(function (r) {{ if (!r.ok) throw new Error(\"HTTP \" + r.status); return r.text(); }})\n\
      .then(function (html) {{\n\
        document.getElementById(\"run\").innerHTML = html;\n\
        updates += 1;\n\
        document.body.setAttribute(\"data-updates\", String(updates));\n\
        live.textContent = \"read from the run directory at \" + new Date().toLocaleTimeString() + \"; again every {seconds} s\";\n\
      }})\n\
      .catch(function (e) {{ live.textContent = \"cannot reach expc (\" + e.message + \"): the watch or the run has ended\"; }})\n\
      .then(function () {{ setTimeout(poll, every); }});\n\
  }}\n  setTimeout(poll, every);\n}})();\n</script>\n</body></html>\n",
        title = escape(title),
        seconds = every_ms as f64 / 1000.0,
    )
}

/// The run's part of the page, `figures` already rendered.
pub fn run_part(snapshot: &Snapshot, order: Option<&[u32]>, figures: &str) -> String {
    let mut out = String::new();
    progress(&mut out, snapshot);
    trial_order(&mut out, &snapshot.view.manifest.trials, order);
    findings(&mut out, &snapshot.view.manifest.trials);
    out.push_str(figures);
    let (warnings, more) = shown_warnings(&snapshot.view.warnings, MAX_LISTED);
    if !warnings.is_empty() {
        out.push_str("<section id=\"warnings\"><h2>Warnings</h2>\n<ul>\n");
        for warning in warnings {
            let _ = writeln!(out, "<li class=\"warn\">{}</li>", escape(&warning));
        }
        if more > 0 {
            let _ = writeln!(out, "<li>… and {more} more</li>");
        }
        out.push_str("</ul></section>\n");
    }
    out
}

/// Status, trials finished, the running trial, the runner and the last write.
fn progress(out: &mut String, snapshot: &Snapshot) {
    let m = &snapshot.view.manifest;
    let count = |status: TrialStatus| m.trials.iter().filter(|t| t.status == status).count();
    let finished = m
        .trials
        .iter()
        .filter(|t| !matches!(t.status, TrialStatus::Planned | TrialStatus::Running))
        .count();
    let _ = write!(
        out,
        "<section id=\"progress\"><h2>Progress</h2>\n<table>\n\
<tr><th class=\"l\">run</th><td class=\"l\">{}/{}</td></tr>\n\
<tr><th class=\"l\">status</th><td class=\"l\" id=\"status\">{}</td></tr>\n\
<tr><th class=\"l\">trials</th><td class=\"l\" id=\"trials\">{finished} of {} ended ({} complete, {} running)</td></tr>\n",
        escape(&m.experiment),
        escape(&m.run_id),
        status_text(m.status, snapshot),
        m.trials.len(),
        count(TrialStatus::Complete),
        count(TrialStatus::Running),
    );
    let now = exp_results::unix_ns(SystemTime::now());
    for trial in m.trials.iter().filter(|t| t.status == TrialStatus::Running) {
        let elapsed = trial.started_at_unix_ns.map_or(0, |s| now.saturating_sub(s));
        let _ = writeln!(
            out,
            "<tr><th class=\"l\">running</th><td class=\"l\">trial {} {}for {} s; its rows so far are in the figures</td></tr>",
            trial.trial,
            label(trial),
            elapsed / 1_000_000_000
        );
    }
    if let Some(age) = snapshot
        .last_write
        .and_then(|t| SystemTime::now().duration_since(t).ok())
    {
        let _ = writeln!(
            out,
            "<tr><th class=\"l\">last write</th><td class=\"l\">{} s ago</td></tr>",
            age.as_secs()
        );
    }
    if let Some(Runner::Running(info) | Runner::Gone(info)) = &snapshot.view.runner {
        let _ = writeln!(
            out,
            "<tr><th class=\"l\">runner</th><td class=\"l\">{}</td></tr>",
            escape(&info.to_string())
        );
    }
    if let Some(error) = &m.error {
        let _ = writeln!(
            out,
            "<tr><th class=\"l\">error</th><td class=\"l warn\">{}</td></tr>",
            escape(error)
        );
    }
    out.push_str("</table></section>\n");
}

/// The manifest's status; `running` says how recent its files are, since
/// the lock is not probed (a crashed runner's run still says `running`).
fn status_text(status: RunStatus, snapshot: &Snapshot) -> String {
    let stale = snapshot
        .last_write
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .filter(|age| *age > Duration::from_secs(60));
    match (status, stale) {
        (RunStatus::Running, Some(age)) => format!(
            "running, but nothing written for {} s: the runner may be gone (`expc report` says whether it crashed)",
            age.as_secs()
        ),
        _ => status.as_str().to_string(),
    }
}

fn label(trial: &TrialRecord) -> String {
    let point = point_label(trial);
    if point.is_empty() {
        format!("(repetition {}) ", trial.repetition)
    } else {
        format!("({}, repetition {}) ", escape(&point), trial.repetition)
    }
}

/// The trials in the order they run (the plan's, when it can be read),
/// with status, verdict and flags; a long run shows those around the
/// first that has not ended.
fn trial_order(out: &mut String, trials: &[TrialRecord], order: Option<&[u32]>) {
    let by_number: std::collections::HashMap<u32, &TrialRecord> = trials.iter().map(|t| (t.trial, t)).collect();
    let mut ordered: Vec<&TrialRecord> = match order {
        Some(order) => order.iter().filter_map(|n| by_number.get(n).copied()).collect(),
        None => trials.iter().collect(),
    };
    if ordered.len() < trials.len() {
        ordered = trials.iter().collect();
    }
    let first_open = ordered
        .iter()
        .position(|t| matches!(t.status, TrialStatus::Planned | TrialStatus::Running))
        .unwrap_or(ordered.len());
    let from = first_open.saturating_sub(ORDER_BEFORE);
    let to = (first_open + ORDER_AFTER).min(ordered.len());
    out.push_str(
        "<section id=\"order\"><h2>Trial order</h2>\n<table>\n<tr><th>#</th><th>trial</th><th class=\"l\">point</th>\
<th>repetition</th><th class=\"l\">status</th><th class=\"l\">verdict</th><th class=\"l\">flags</th></tr>\n",
    );
    if from > 0 {
        let _ = writeln!(
            out,
            "<tr><td colspan=\"7\" class=\"l\">… {from} trials before</td></tr>"
        );
    }
    for (position, trial) in ordered.iter().enumerate().take(to).skip(from) {
        let verdict = trial.validity.as_ref().map(|v| v.verdict.as_str());
        let flags: Vec<&str> = trial
            .validity
            .iter()
            .flat_map(|v| v.findings.iter().map(|f| f.code.as_str()))
            .collect();
        let class = match (trial.status, verdict) {
            (TrialStatus::Running, _) => " class=\"running\"",
            (_, Some("invalid")) => " class=\"invalid\"",
            _ => "",
        };
        let _ = writeln!(
            out,
            "<tr{class}><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td>\
<td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            position + 1,
            trial.trial,
            escape(&point_label(trial)),
            trial.repetition,
            trial.status.as_str(),
            verdict.unwrap_or("—"),
            flags.join(", ")
        );
    }
    if to < ordered.len() {
        let _ = writeln!(
            out,
            "<tr><td colspan=\"7\" class=\"l\">… {} trials after</td></tr>",
            ordered.len() - to
        );
    }
    out.push_str("</table></section>\n");
}

/// Every validity finding of the trials that ended, latest trials last.
fn findings(out: &mut String, trials: &[TrialRecord]) {
    let all: Vec<_> = trials
        .iter()
        .flat_map(|t| {
            t.validity
                .iter()
                .flat_map(move |v| v.findings.iter().map(move |f| (t.trial, f)))
        })
        .collect();
    out.push_str("<section id=\"flags\"><h2>Validity flags</h2>\n");
    if all.is_empty() {
        out.push_str("<p>None so far: every trial that ended was valid (a trial is audited when it ends).</p>\n");
        out.push_str("</section>\n");
        return;
    }
    out.push_str(
        "<table>\n<tr><th>trial</th><th class=\"l\">code</th><th class=\"l\">workload</th><th class=\"l\">verdict</th>\
<th class=\"l\">what was found</th></tr>\n",
    );
    for (trial, finding) in all.iter().take(MAX_LISTED) {
        let _ = writeln!(
            out,
            "<tr><td>{trial}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            escape(&finding.code),
            escape(finding.workload.as_deref().unwrap_or("—")),
            finding.verdict.as_str(),
            escape(&finding.message)
        );
    }
    if all.len() > MAX_LISTED {
        let _ = writeln!(
            out,
            "<tr><td colspan=\"5\" class=\"l\">… and {} more</td></tr>",
            all.len() - MAX_LISTED
        );
    }
    out.push_str("</table></section>\n");
}
