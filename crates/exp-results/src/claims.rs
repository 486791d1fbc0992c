//! Claim verdicts as the manifest records them (`claims`, absent without
//! claims). exp-claims computes them from the run's tables; reports show
//! them and `expc report --check` computes them again.

use serde::{Deserialize, Serialize};

use exp_plan::Unit;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimVerdict {
    Supported,
    Inconclusive,
    Refuted,
}

impl ClaimVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimVerdict::Supported => "supported",
            ClaimVerdict::Inconclusive => "inconclusive",
            ClaimVerdict::Refuted => "refuted",
        }
    }

    /// The verdict of a claim that must hold at every one of its points:
    /// refuted if refuted at any, supported if supported at all, else
    /// inconclusive (and inconclusive without points).
    pub fn all(verdicts: impl IntoIterator<Item = ClaimVerdict>) -> ClaimVerdict {
        let mut seen = false;
        let mut worst = ClaimVerdict::Supported;
        for v in verdicts {
            seen = true;
            worst = worst.max(v);
        }
        if seen {
            worst
        } else {
            ClaimVerdict::Inconclusive
        }
    }
}

/// One claim's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimRecord {
    /// The claim as written (normalised by `expc fmt`).
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub verdict: ClaimVerdict,
    /// Invalid trials left out of it (`2 invalid trials (V0101 ×2)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
    /// Per point (a trend has one entry over all points).
    pub points: Vec<ClaimPoint>,
}

/// A claim at one sweep point (or, for a comparison of two points, one pair).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimPoint {
    /// `devices=10`, `devices=200 vs devices=10`, `all points`, or empty
    /// for a run without sweep.
    pub label: String,
    pub verdict: ClaimVerdict,
    /// What the estimate is (`p99 of ack_latency`, `difference`, `Kendall's tau`).
    pub quantity: String,
    pub estimate: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub unit: Unit,
    /// Trials the estimate comes from.
    pub repetitions: u32,
    /// How the interval or test was made, with its confidence.
    pub method: String,
    /// Decided on a single repetition's value: the verdict has no interval.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_interval: bool,
    /// Why it is inconclusive when no interval could be made (no rows, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The verdicts taken together: what `expc run` and `expc report --check`
/// exit with.
pub fn overall(claims: &[ClaimRecord]) -> ClaimVerdict {
    ClaimVerdict::all(claims.iter().map(|c| c.verdict))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_over_points_is_as_good_as_its_worst() {
        use ClaimVerdict::*;
        assert_eq!(ClaimVerdict::all([Supported, Supported]), Supported);
        assert_eq!(ClaimVerdict::all([Supported, Inconclusive]), Inconclusive);
        assert_eq!(ClaimVerdict::all([Inconclusive, Refuted, Supported]), Refuted);
        assert_eq!(ClaimVerdict::all([]), Inconclusive);
    }
}
