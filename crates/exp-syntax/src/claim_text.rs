//! A claim's canonical text, as `expc fmt` writes it and reports show it.

use crate::ast::{Abort, Claim, ClaimForm, Stat, Term};
use crate::flat::flat;

/// `p99(fleet.sensors.ack_latency) < 25ms abort(grace = 2s)`: one space
/// around operators and words, none inside parentheses.
pub fn claim_text(claim: &Claim) -> String {
    claim_pieces(claim).join(" ")
}

/// The claim's canonical text in the pieces `expc fmt` puts on lines of
/// their own when the claim is longer than a line: the left side, then
/// the comparison with the right side (`< 25ms`, `within 15% of 125ms`,
/// `increases with devices`), then `abort`. Joined by spaces they are
/// [`claim_text`].
pub(crate) fn claim_pieces(claim: &Claim) -> Vec<String> {
    let mut pieces = match &claim.form {
        ClaimForm::Compare { left, op, right } => vec![term(left), format!("{} {}", op.text, term(right))],
        ClaimForm::Within { left, tolerance, right } => {
            vec![term(left), format!("within {} of {}", flat(tolerance), term(right))]
        }
        ClaimForm::Trend {
            stat: s,
            direction,
            parameter,
        } => vec![stat(s), format!("{} with {}", direction.name, parameter.name)],
    };
    if let Some(a) = &claim.abort {
        pieces.push(abort(a));
    }
    pieces
}

fn term(t: &Term) -> String {
    match t {
        Term::Stat {
            factor: Some(factor),
            stat: s,
            ..
        } => format!("{} * {}", flat(factor), stat(s)),
        Term::Stat {
            factor: None, stat: s, ..
        } => stat(s),
        Term::Constant(e) => flat(e),
        Term::TimeScaled { value, .. } => format!("scaled({})", flat(value)),
    }
}

/// `share(traffic.conc.duration < 500ms during cpu at rtt = 10ms)`
fn stat(s: &Stat) -> String {
    let segments: Vec<String> = s.metric.segments.iter().map(|i| label(&i.name)).collect();
    let mut inner = segments.join(".");
    if let Some((op, value)) = &s.condition {
        inner.push_str(&format!(" {} {}", op.text, flat(value)));
    }
    if let Some((relation, anomaly)) = &s.phase {
        inner.push_str(&format!(" {} {}", relation.name, label(&anomaly.name)));
    }
    if !s.points.is_empty() {
        let points: Vec<String> = s
            .points
            .iter()
            .map(|(name, value)| format!("{} = {}", name.name, flat(value)))
            .collect();
        inner.push_str(&format!(" at {}", points.join(", ")));
    }
    format!("{}({inner})", s.function.name)
}

/// A workload's label as a claim writes it: a name as it is, anything else
/// quoted (`"cpu-bursts"`).
pub fn label(name: &str) -> String {
    let is_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match is_name {
        true => name.to_string(),
        false => format!("\"{}\"", crate::escape(name)),
    }
}

fn abort(a: &Abort) -> String {
    if a.args.is_empty() {
        return "abort".into();
    }
    let args: Vec<String> = a
        .args
        .iter()
        .map(|arg| match &arg.name {
            Some(name) => format!("{} = {}", name.name, flat(&arg.value)),
            None => flat(&arg.value),
        })
        .collect();
    format!("abort({})", args.join(", "))
}
