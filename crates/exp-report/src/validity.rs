//! Each trial's validity verdict as `expc report` shows it (text, JSON and
//! HTML), from the manifest's records (`exp_results::validity`): how many
//! trials are valid, degraded and invalid, then every trial that is not
//! valid with its findings. Runs from before audits have no verdicts and
//! are said to be "not audited".

use std::fmt::Write;

use exp_results::validity::Verdict;
use exp_results::{Manifest, TrialRecord};
use serde_json::{json, Value};

use crate::html_text::escape;

/// An HTML page lists every trial up to this many; beyond, only those that
/// are not valid.
const HTML_ALL_TRIALS_UP_TO: usize = 200;

/// Trials of each verdict, and those without one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub valid: usize,
    pub degraded: usize,
    pub invalid: usize,
    pub not_audited: usize,
}

pub fn counts(m: &Manifest) -> Counts {
    let mut counts = Counts::default();
    for trial in &m.trials {
        match trial.validity.as_ref().map(|v| v.verdict) {
            Some(Verdict::Valid) => counts.valid += 1,
            Some(Verdict::Degraded) => counts.degraded += 1,
            Some(Verdict::Invalid) => counts.invalid += 1,
            None => counts.not_audited += 1,
        }
    }
    counts
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} valid, {} degraded, {} invalid",
            self.valid, self.degraded, self.invalid
        )?;
        if self.not_audited > 0 {
            write!(f, ", {} not audited", self.not_audited)?;
        }
        Ok(())
    }
}

/// The trials that are not valid, in trial order.
fn flagged(m: &Manifest) -> impl Iterator<Item = &TrialRecord> {
    m.trials
        .iter()
        .filter(|t| t.validity.as_ref().is_some_and(|v| v.verdict != Verdict::Valid))
}

/// `trial 3 (point 1, repetition 0) invalid` and a line per finding.
fn trial_lines(trial: &TrialRecord) -> String {
    let Some(validity) = &trial.validity else {
        return String::new();
    };
    let mut out = format!(
        "trial {} (point {}, repetition {}): {}\n",
        trial.trial,
        trial.point,
        trial.repetition,
        validity.verdict.as_str()
    );
    for f in &validity.findings {
        let whose = f.workload.as_ref().map_or(String::new(), |w| format!(" `{w}`"));
        let _ = writeln!(out, "  {} {}{whose}: {}", f.code, f.verdict.as_str(), f.message);
    }
    out
}

/// The validity section of the text report (empty for a run without trials).
pub fn text(m: &Manifest) -> String {
    if m.trials.is_empty() {
        return String::new();
    }
    let counts = counts(m);
    let mut out = format!("\n== validity\n{counts}\n");
    for trial in flagged(m) {
        out.push_str(&trial_lines(trial));
    }
    if counts.degraded + counts.invalid > 0 {
        out.push_str(
            "`expc explain CODE` says what a code means; aggregates leave invalid trials out (--include-invalid puts \
             them back)\n",
        );
    }
    out
}

/// The validity of `m` for `expc report --json`: the counts and every
/// trial that is not valid with its findings.
pub fn json(m: &Manifest) -> Value {
    let counts = counts(m);
    let trials: Vec<Value> = flagged(m)
        .map(|t| {
            json!({
                "trial": t.trial,
                "point": t.point,
                "repetition": t.repetition,
                "verdict": t.validity.as_ref().map(|v| v.verdict),
                "findings": t.validity.as_ref().map(|v| &v.findings),
            })
        })
        .collect();
    json!({
        "valid": counts.valid,
        "degraded": counts.degraded,
        "invalid": counts.invalid,
        "not_audited": counts.not_audited,
        "trials": trials,
    })
}

/// The validity section of the HTML page: the counts, then a table of the
/// trials (all of a small run, else those not valid), invalid ones greyed,
/// reasons listed.
pub fn html(out: &mut String, m: &Manifest) {
    if m.trials.is_empty() {
        return;
    }
    let counts = counts(m);
    let _ = writeln!(
        out,
        "<section id=\"validity\"><h2>Validity</h2>\n<p>{}.</p>",
        escape(&counts.to_string())
    );
    let all = m.trials.len() <= HTML_ALL_TRIALS_UP_TO;
    let shown: Vec<&TrialRecord> = if all {
        m.trials.iter().collect()
    } else {
        flagged(m).collect()
    };
    if !shown.is_empty() {
        out.push_str(
            "<table>\n<tr><th>trial</th><th>point</th><th>repetition</th><th class=\"l\">verdict</th><th class=\"l\">reasons</th></tr>\n",
        );
    }
    for trial in &shown {
        let verdict = trial.validity.as_ref().map(|v| v.verdict);
        let style = match verdict {
            Some(Verdict::Invalid) => " class=\"invalid\" style=\"color:#999;background:#eee\"",
            Some(Verdict::Degraded) => " class=\"degraded warn\"",
            _ => "",
        };
        let reasons: Vec<String> = trial
            .validity
            .iter()
            .flat_map(|v| &v.findings)
            .map(|f| {
                let whose = f.workload.as_ref().map_or(String::new(), |w| format!(" `{w}`"));
                format!("{}{whose}: {}", f.code, f.message)
            })
            .collect();
        let _ = writeln!(
            out,
            "<tr{style}><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            trial.trial,
            trial.point,
            trial.repetition,
            verdict.map_or("not audited", Verdict::as_str),
            reasons.iter().map(|r| escape(r)).collect::<Vec<_>>().join("<br>")
        );
    }
    if !shown.is_empty() {
        out.push_str("</table>\n");
    }
    if counts.degraded + counts.invalid > 0 {
        out.push_str(
            "<p>Invalid trials are left out of aggregates (<code>--include-invalid</code> puts them back); \
             <code>expc explain CODE</code> says what a code means.</p>\n",
        );
    }
    out.push_str("</section>\n");
}
