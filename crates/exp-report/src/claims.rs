//! The claims table a report starts with: each claim's verdict, then per
//! point its estimate and interval with the method that made it
//! (verdicts from exp-claims, recorded as `exp_results::claims`).

use std::fmt::Write;

use exp_plan::Unit;
use exp_results::claims::{ClaimPoint, ClaimRecord};

use crate::html_text::escape;
use crate::text::units;

/// A value in its unit: `14.78ms`, `91.2%`, `0.853`.
pub fn value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Ns => units::time(v),
        Unit::Ratio => format!("{:.1}%", v * 100.0),
        Unit::Bytes => format!("{}B", units::number(v)),
        Unit::BitPerS => format!("{}bit/s", units::number(v)),
        Unit::PerS => format!("{}/s", units::number(v)),
        Unit::Count => units::number(v),
    }
}

/// `14.78ms [14.58ms, 14.99ms]`, `15.01ms (no interval)`, or the note.
pub fn estimate(p: &ClaimPoint) -> String {
    match (p.estimate, p.low, p.high) {
        (Some(e), Some(l), Some(h)) => format!("{} [{}, {}]", value(e, p.unit), value(l, p.unit), value(h, p.unit)),
        (Some(e), _, _) if p.no_interval => format!("{} (no interval)", value(e, p.unit)),
        (Some(e), _, _) => value(e, p.unit),
        (None, _, _) => p.note.clone().unwrap_or_default(),
    }
}

/// The claims section of the text report; empty without claims.
pub fn text(claims: &[ClaimRecord]) -> String {
    if claims.is_empty() {
        return String::new();
    }
    let mut out = String::from("Claims\n");
    for claim in claims {
        let group = claim.group.as_ref().map(|g| format!("[{g}] ")).unwrap_or_default();
        let _ = writeln!(out, "  {:<12} {group}{}", claim.verdict.as_str(), claim.text);
        for p in &claim.points {
            let at = if p.label.is_empty() {
                String::new()
            } else {
                format!("{}: ", p.label)
            };
            let _ = writeln!(
                out,
                "      {at}{} {} = {} ({}; n = {})",
                p.verdict.as_str(),
                p.quantity,
                estimate(p),
                if p.method.is_empty() { "no value" } else { &p.method },
                p.repetitions
            );
        }
        if let Some(left_out) = &claim.left_out {
            let _ = writeln!(out, "      left out: {left_out}");
        }
    }
    out.push('\n');
    out
}

/// The claims table of the HTML page; nothing without claims.
pub fn html(out: &mut String, claims: &[ClaimRecord]) {
    if claims.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Claims</h2>\n<table><tr><th class=\"l\">claim</th><th class=\"l\">verdict</th>\
         <th class=\"l\">point</th><th>estimate [interval]</th><th class=\"l\">method</th><th>n</th></tr>\n",
    );
    for claim in claims {
        let rows = claim.points.len().max(1);
        let _ = write!(
            out,
            "<tr><td class=\"l\" rowspan=\"{rows}\">{}</td><td class=\"l\" rowspan=\"{rows}\"><b>{}</b>{}</td>",
            escape(&claim.text),
            claim.verdict.as_str(),
            claim
                .left_out
                .as_ref()
                .map(|l| format!("<br><span class=\"warn\">left out: {}</span>", escape(l)))
                .unwrap_or_default()
        );
        if claim.points.is_empty() {
            out.push_str("<td></td><td></td><td></td><td></td></tr>\n");
        }
        for (i, p) in claim.points.iter().enumerate() {
            if i > 0 {
                out.push_str("<tr>");
            }
            let _ = writeln!(
                out,
                "<td class=\"l\">{} {}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td></tr>",
                escape(&p.label),
                p.verdict.as_str(),
                escape(&estimate(p)),
                escape(&p.method),
                p.repetitions
            );
        }
    }
    out.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use exp_results::claims::ClaimVerdict;

    fn record() -> ClaimRecord {
        ClaimRecord {
            text: "p99(fleet.s.ack_latency) < 25ms".into(),
            group: Some("latency".into()),
            verdict: ClaimVerdict::Supported,
            left_out: Some("1 invalid trial (V0101 ×1)".into()),
            points: vec![ClaimPoint {
                label: "devices=10".into(),
                verdict: ClaimVerdict::Supported,
                quantity: "p99(fleet.s.ack_latency)".into(),
                estimate: Some(14.78e6),
                low: Some(14.58e6),
                high: Some(14.99e6),
                unit: Unit::Ns,
                repetitions: 5,
                method: "mean of 5 repetitions, Student's t interval of the mean at 95 %".into(),
                no_interval: false,
                note: None,
            }],
        }
    }

    #[test]
    fn text_and_html_show_verdict_estimate_interval_and_method() {
        let text = text(&[record()]);
        assert!(
            text.starts_with("Claims\n  supported    [latency] p99(fleet.s.ack_latency) < 25ms\n"),
            "{text}"
        );
        assert!(
            text.contains("devices=10: supported p99(fleet.s.ack_latency) = 14.78ms [14.58ms, 14.99ms] (mean of 5"),
            "{text}"
        );
        assert!(text.contains("left out: 1 invalid trial (V0101 ×1)"), "{text}");
        let mut html = String::new();
        super::html(&mut html, &[record()]);
        assert!(
            html.contains("<td class=\"l\" rowspan=\"1\">p99(fleet.s.ack_latency) &lt; 25ms</td>"),
            "{html}"
        );
        assert!(html.contains("14.78ms [14.58ms, 14.99ms]"), "{html}");
        assert_eq!(super::text(&[]), "");
    }
}
