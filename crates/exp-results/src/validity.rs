//! Whether a trial's measurements can be believed: each workload kind
//! audits what it promised (a fleet its send times, an anomaly that it ran
//! at the intensity asked, the monitor its sampling) and the host what it
//! did beside the run. Each finding has a stable code (`expc explain`
//! knows them) and a verdict; a trial's verdict is its worst finding's.
//!
//! Aggregates (sweep tables and figures, `repeat until`, run comparisons)
//! leave `invalid` trials out by default and say so; `degraded` trials are
//! kept and flagged.

use serde::{Deserialize, Serialize};

/// How far a trial's (or a workload's) measurements can be believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Everything audited held.
    #[default]
    Valid,
    /// Usable with care: something held only in part (a monitor gap, a
    /// neighbour's CPU); kept in aggregates, flagged.
    Degraded,
    /// The instrument spoiled the measurement (a starved load generator, an
    /// anomaly that did no work): left out of aggregates by default.
    Invalid,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Degraded => "degraded",
            Verdict::Invalid => "invalid",
        }
    }
}

/// One audit's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// A stable code, `V` and four digits (`expc explain V0101`).
    pub code: String,
    /// The workload audited; `None` for the trial as a whole (host, monitor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    pub verdict: Verdict,
    /// What was measured against which bound, in words with units.
    pub message: String,
    /// The measured value and its bound, in the metric's base unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<f64>,
}

/// A trial's findings and their worst verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Validity {
    pub verdict: Verdict,
    /// Every finding that is not `valid`, worst first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
}

impl Validity {
    /// The validity of these findings: the worst verdict, findings that
    /// are not `valid` kept, worst first (then by code and workload).
    pub fn of(findings: impl IntoIterator<Item = Finding>) -> Validity {
        let mut findings: Vec<Finding> = findings.into_iter().filter(|f| f.verdict != Verdict::Valid).collect();
        findings.sort_by(|a, b| {
            b.verdict
                .cmp(&a.verdict)
                .then_with(|| a.code.cmp(&b.code))
                .then_with(|| a.workload.cmp(&b.workload))
        });
        Validity {
            verdict: findings.first().map_or(Verdict::Valid, |f| f.verdict),
            findings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(code: &str, verdict: Verdict) -> Finding {
        Finding {
            code: code.into(),
            workload: None,
            verdict,
            message: String::new(),
            measured: None,
            bound: None,
        }
    }

    #[test]
    fn a_trial_is_as_valid_as_its_worst_finding() {
        assert_eq!(Validity::of([]).verdict, Verdict::Valid);
        let v = Validity::of([
            finding("V0301", Verdict::Degraded),
            finding("V0101", Verdict::Valid),
            finding("V0201", Verdict::Invalid),
        ]);
        assert_eq!(v.verdict, Verdict::Invalid);
        let codes: Vec<&str> = v.findings.iter().map(|f| f.code.as_str()).collect();
        assert_eq!(codes, ["V0201", "V0301"], "worst first, valid ones left out");
    }
}
