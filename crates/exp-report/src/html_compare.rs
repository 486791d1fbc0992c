//! The HTML page's part for runs compared: per run against the baseline,
//! what the text says before its table (plans, points only in one run,
//! environment, trials left out), then each metric with Welch's p and the
//! equivalence verdict.

use std::fmt::Write;

use crate::compare::RunComparison;
use crate::html_text::escape;
use crate::text::compare::{change, context, legend};
use crate::text::units::value_text;

/// Every comparison's section.
pub(crate) fn tables(out: &mut String, comparisons: &[RunComparison]) {
    for c in comparisons {
        let _ = writeln!(
            out,
            "<h2>{} against {}</h2>\n<ul class=\"compare\">",
            escape(&c.compared),
            escape(&c.baseline)
        );
        for line in context(c) {
            // Indented lines are the items of the line before.
            let (class, line) = match line.strip_prefix("  ") {
                Some(item) => (" style=\"margin-left:1.5em\"", item.to_string()),
                None => ("", line),
            };
            let _ = writeln!(out, "<li{class}>{}</li>", escape(&line));
        }
        out.push_str("</ul>\n");
        if c.metrics.is_empty() {
            out.push_str("<p>No metric at a point both runs have.</p>\n");
        } else {
            metric_table(out, c);
        }
    }
}

/// Each metric of a compared run against the baseline.
fn metric_table(out: &mut String, c: &RunComparison) {
    out.push_str(
        "<table><tr><th class=\"l\">point</th><th class=\"l\">metric</th><th>baseline</th><th>compared</th>\
         <th>change</th><th>p (Welch)</th><th class=\"l\">verdict</th><th>n</th></tr>\n",
    );
    for d in &c.metrics {
        let p = d.p_value.map_or("—".to_string(), |p| format!("{p:.3}"));
        let metric = d.metric.split_once('.').map_or(d.metric.as_str(), |(_, m)| m);
        let value = |v: f64| escape(&value_text(&d.kind, metric, v));
        let _ = writeln!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{p}</td>\
             <td class=\"l\">{}</td><td>{}/{}</td></tr>",
            escape(&d.point),
            escape(&d.metric),
            value(d.baseline.mean),
            value(d.other.mean),
            change(d),
            d.verdict.unwrap_or("—"),
            d.baseline.n,
            d.other.n
        );
    }
    let _ = writeln!(out, "</table>\n<p class=\"legend\">{}</p>", escape(&legend(c)));
}
