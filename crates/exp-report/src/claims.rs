//! The claims table a report starts with: each claim's verdict, then per
//! point its estimate and interval with the method that made it
//! (verdicts from exp-claims, recorded as `exp_results::claims`). On the
//! HTML page each claim links to the figures it is about
//! (`claim_figures`), and each of those figures shows the claim under it.

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

/// A claim's link to a figure it is about (`claim_figures`).
pub struct FigureLink<'a> {
    pub id: &'a str,
    pub title: &'a str,
}

/// The anchor of claim `i` of run `run` (the first run is 0) on the page.
pub fn anchor(run: usize, i: usize) -> String {
    format!("claim-{run}-{i}")
}

/// The claims table of the HTML page, each row anchored ([`anchor`]) and
/// linked to the figures its claim is about (`links[i]` for `claims[i]`);
/// nothing without claims.
pub fn html(out: &mut String, run: usize, claims: &[ClaimRecord], links: &[Vec<FigureLink>]) {
    if claims.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Claims</h2>\n<table class=\"claims\"><tr><th class=\"l\">claim</th><th class=\"l\">verdict</th>\
         <th class=\"l\">figure</th><th class=\"l\">point</th><th>estimate [interval]</th><th class=\"l\">method</th><th>n</th></tr>\n",
    );
    for (i, claim) in claims.iter().enumerate() {
        let rows = claim.points.len().max(1);
        let figures = match links.get(i).map(Vec::as_slice).unwrap_or_default() {
            [] => "<span class=\"warn\">no figure of this run plots its metric</span>".to_string(),
            links => links
                .iter()
                .map(|l| format!("<a href=\"#{}\">{}</a>", escape(l.id), escape(l.title)))
                .collect::<Vec<_>>()
                .join("<br>"),
        };
        let _ = write!(
            out,
            "<tr id=\"{}\"><td class=\"l\" rowspan=\"{rows}\">{}</td><td class=\"l\" rowspan=\"{rows}\"><b>{}</b>{}</td>\
             <td class=\"l\" rowspan=\"{rows}\">{figures}</td>",
            anchor(run, i),
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

/// Under a figure, the claims about it (each with the anchor of its row in
/// the claims table): verdict, and per point the estimate with its interval,
/// the method and the repetitions; nothing when no claim is about it.
pub fn html_under_figure(out: &mut String, about: &[(String, &ClaimRecord)]) {
    if about.is_empty() {
        return;
    }
    out.push_str("<div class=\"claims\">");
    for (anchor, claim) in about {
        let points: Vec<String> = claim
            .points
            .iter()
            .map(|p| {
                let at = if p.label.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", p.label)
                };
                let method = if p.method.is_empty() { "no value" } else { &p.method };
                escape(&format!(
                    "{at}{} = {} ({method}; n = {})",
                    p.quantity,
                    estimate(p),
                    p.repetitions
                ))
            })
            .collect();
        let _ = write!(
            out,
            "<p class=\"claim\">Claim <a href=\"#{anchor}\">{}</a>: <b>{}</b>. {}</p>",
            escape(&claim.text),
            claim.verdict.as_str(),
            points.join("; ")
        );
    }
    out.push_str("</div>\n");
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
        let links = [vec![FigureLink {
            id: "fleet-ack-latency-cdf",
            title: "Ack latency",
        }]];
        super::html(&mut html, 0, &[record()], &links);
        assert!(
            html.contains("<tr id=\"claim-0-0\"><td class=\"l\" rowspan=\"1\">p99(fleet.s.ack_latency) &lt; 25ms</td>"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"#fleet-ack-latency-cdf\">Ack latency</a>"),
            "{html}"
        );
        assert!(html.contains("14.78ms [14.58ms, 14.99ms]"), "{html}");
        let mut none = String::new();
        super::html(&mut none, 1, &[record()], &[]);
        assert!(none.contains("no figure of this run plots its metric"), "{none}");
        assert_eq!(super::text(&[]), "");
    }

    #[test]
    fn under_its_figure_a_claim_shows_verdict_interval_and_method() {
        let record = record();
        let mut html = String::new();
        html_under_figure(&mut html, &[(anchor(0, 2), &record)]);
        assert_eq!(
            html,
            "<div class=\"claims\"><p class=\"claim\">Claim <a href=\"#claim-0-2\">p99(fleet.s.ack_latency) &lt; 25ms</a>: \
             <b>supported</b>. devices=10: p99(fleet.s.ack_latency) = 14.78ms [14.58ms, 14.99ms] (mean of 5 repetitions, \
             Student&#39;s t interval of the mean at 95 %; n = 5)</p></div>\n"
        );
        let mut nothing = String::new();
        html_under_figure(&mut nothing, &[]);
        assert_eq!(nothing, "");
    }
}
