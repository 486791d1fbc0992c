//! Claims on the command line: their verdicts evaluated again from a run's
//! tables (`expc report`, `--check`), the exit status they give (`expc
//! run`, `expc report --check`, `expc test --run`) and `--junit`.
//!
//! Exit statuses: 0 every claim supported (or none), [`REFUTED`] if any is
//! refuted, else [`INCONCLUSIVE`] if any is inconclusive. They do not clash
//! with 1 (failed or refused), 2 (`expc test` could not test; usage
//! errors) or 130 (interrupted).

use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

use exp_results::claims::{overall, ClaimRecord, ClaimVerdict};
use exp_results::{RunView, Warning};

/// Some claim is refuted.
pub const REFUTED: u8 = 3;
/// No claim is refuted, but some is inconclusive.
pub const INCONCLUSIVE: u8 = 4;

/// The exit status the verdicts give a run that completed.
pub fn exit_code(claims: &[ClaimRecord]) -> ExitCode {
    match overall(claims) {
        _ if claims.is_empty() => ExitCode::SUCCESS,
        ClaimVerdict::Supported => ExitCode::SUCCESS,
        ClaimVerdict::Refuted => ExitCode::from(REFUTED),
        ClaimVerdict::Inconclusive => ExitCode::from(INCONCLUSIVE),
    }
}

/// The claims of the run's plan evaluated from its tables now (nothing
/// without a plan or claims), with what could not be read.
pub fn evaluate(
    view: &RunView,
    plan: Option<&exp_plan::Plan>,
    include_invalid: bool,
) -> (Vec<ClaimRecord>, Vec<Warning>) {
    let Some(plan) = plan.filter(|p| !p.claims.is_empty()) else {
        return (Vec::new(), Vec::new());
    };
    let evaluation = exp_claims::evaluate(view, plan, exp_claims::Options { include_invalid });
    (evaluation.claims, evaluation.warnings)
}

/// `--junit FILE`: one test case per claim; a refuted claim is a
/// `failure`, an inconclusive one a `failure` of type `inconclusive` (the
/// exit status is not 0 for either).
pub fn write_junit(path: &Path, suite: &str, claims: &[ClaimRecord]) -> Result<(), String> {
    exp_files::write_file(path, junit(suite, claims).as_bytes()).map_err(|e| e.to_string())
}

fn junit(suite: &str, claims: &[ClaimRecord]) -> String {
    let count = |v: ClaimVerdict| claims.iter().filter(|c| c.verdict == v).count();
    let failures = count(ClaimVerdict::Refuted) + count(ClaimVerdict::Inconclusive);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites><testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">",
        xml(suite),
        claims.len()
    );
    for claim in claims {
        let class = claim.group.as_deref().unwrap_or(suite);
        let _ = write!(
            out,
            "  <testcase classname=\"{}\" name=\"{}\"",
            xml(class),
            xml(&claim.text)
        );
        let detail = details(claim);
        match claim.verdict {
            ClaimVerdict::Supported => {
                let _ = writeln!(out, "><system-out>{}</system-out></testcase>", xml(&detail));
            }
            verdict => {
                let _ = writeln!(
                    out,
                    "><failure type=\"{0}\" message=\"{0}\">{1}</failure></testcase>",
                    verdict.as_str(),
                    xml(&detail)
                );
            }
        }
    }
    out.push_str("</testsuite></testsuites>\n");
    out
}

/// Each point's verdict, estimate and method, one per line.
fn details(claim: &ClaimRecord) -> String {
    let mut out = String::new();
    for p in &claim.points {
        let _ = writeln!(
            out,
            "{}{} {} = {} ({}; n = {})",
            if p.label.is_empty() {
                String::new()
            } else {
                format!("{}: ", p.label)
            },
            p.verdict.as_str(),
            p.quantity,
            exp_report::claims::estimate(p),
            p.method,
            p.repetitions
        );
    }
    out
}

/// Text for XML content and attributes; characters XML 1.0 cannot hold dropped.
fn xml(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        .collect();
    exp_report::html::escape(&kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use exp_results::claims::ClaimPoint;

    fn claim(text: &str, verdict: ClaimVerdict) -> ClaimRecord {
        ClaimRecord {
            text: text.into(),
            group: None,
            verdict,
            left_out: None,
            points: vec![ClaimPoint {
                label: String::new(),
                verdict,
                quantity: "loss(fleet.s)".into(),
                estimate: Some(0.0),
                low: Some(0.0),
                high: Some(0.0),
                unit: exp_plan::Unit::Ratio,
                repetitions: 3,
                method: "mean".into(),
                no_interval: false,
                note: None,
            }],
        }
    }

    #[test]
    fn junit_has_a_case_per_claim_and_escapes() {
        let claims = [
            claim("loss(fleet.s) == 0", ClaimVerdict::Supported),
            claim("p99(x) < 25ms \u{1}", ClaimVerdict::Refuted),
            claim("a & b", ClaimVerdict::Inconclusive),
        ];
        let xml = junit("exp", &claims);
        assert!(xml.contains("tests=\"3\" failures=\"2\""), "{xml}");
        assert_eq!(xml.matches("<testcase ").count(), 3);
        assert!(
            xml.contains("name=\"p99(x) &lt; 25ms \"><failure type=\"refuted\""),
            "{xml}"
        );
        assert!(
            xml.contains("name=\"a &amp; b\"><failure type=\"inconclusive\""),
            "{xml}"
        );
    }

    #[test]
    fn exit_codes_do_not_clash() {
        assert_eq!(exit_code(&[]), ExitCode::SUCCESS);
        assert_eq!(exit_code(&[claim("a", ClaimVerdict::Supported)]), ExitCode::SUCCESS);
        let mixed = [
            claim("a", ClaimVerdict::Inconclusive),
            claim("b", ClaimVerdict::Refuted),
        ];
        assert_eq!(exit_code(&mixed), ExitCode::from(REFUTED));
        assert_eq!(exit_code(&mixed[..1]), ExitCode::from(INCONCLUSIVE));
        assert!(![0, 1, 2, 130].contains(&REFUTED) && ![0, 1, 2, 130].contains(&INCONCLUSIVE));
    }
}
