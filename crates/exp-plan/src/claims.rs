//! Claims: what a run's measurements must show (`expect` blocks).
//!
//! A claim compares statistics of stored rows with constants or with each
//! other, or states a trend over a sweep parameter. The plan carries each
//! claim resolved (workload, kind, metric, unit, points, phase), so a run
//! directory's claims are re-evaluated from its tables alone. Values are in
//! the plan's SI base units (ns, bytes, ratios).

use serde::{Deserialize, Serialize};

use crate::{Origin, PointValue, Unit};

/// One claim of an `expect` block.
///
/// No `deny_unknown_fields` here: serde does not support it beside
/// `flatten` (every plan with a claim failed to read back, "unknown field
/// `claim`"); the flattened [`ClaimKind`] denies unknown fields instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The claim as `expc fmt` writes it, shown in reports.
    pub text: String,
    /// The label of its `expect` block, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub origin: Origin,
    #[serde(flatten)]
    pub kind: ClaimKind,
    /// Stop the run once the claim is violated beyond doubt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort: Option<Abort>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "claim", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClaimKind {
    /// `left op right`.
    Compare { left: Term, op: CmpOp, right: Term },
    /// `left within tolerance of right`.
    Within {
        left: Term,
        tolerance_ratio: f64,
        right: Term,
    },
    /// `stat increases with parameter` (or decreases).
    Trend {
        stat: Stat,
        direction: Direction,
        parameter: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
        }
    }

    /// Whether `left op right` holds.
    pub fn holds(self, left: f64, right: f64) -> bool {
        match self {
            CmpOp::Lt => left < right,
            CmpOp::Le => left <= right,
            CmpOp::Gt => left > right,
            CmpOp::Ge => left >= right,
            CmpOp::Eq => left == right,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Increases,
    Decreases,
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "term", rename_all = "snake_case", deny_unknown_fields)]
pub enum Term {
    Constant {
        value: f64,
        unit: Unit,
        /// `scaled(D)`: a duration on the experiment's timeline, multiplied
        /// by the run's `--time-scale` when the claim is decided.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        time_scaled: bool,
    },
    /// `factor * stat`; a bare statistic has factor 1.
    Scaled { factor: f64, stat: Stat },
}

/// A statistic of one workload's measurements, computed per trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stat {
    pub function: StatFn,
    /// The workload's label.
    pub workload: String,
    /// `fleet`, `traffic`, `anomaly`, `xml`, or `monitor` (the system
    /// metrics the `monitor` block samples; `workload` is then `monitor`).
    pub kind: String,
    /// A row metric (`ack_latency`) or a trial metric (`throughput`); empty
    /// for functions that name no metric (`loss`, `failures`, `max_ks`, `max_tv`).
    pub metric: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// `at` selections (parameter, value); empty means every point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<(String, PointValue)>,
    /// Unit of the statistic's value.
    pub unit: Unit,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "function", rename_all = "snake_case", deny_unknown_fields)]
pub enum StatFn {
    Mean,
    Median,
    /// `p50`, `p90`, `p99`, …: `q` in (0, 1).
    Quantile {
        q: f64,
    },
    Min,
    Max,
    /// The sample standard deviation of the rows (n − 1).
    Stddev,
    /// The coefficient of variation: standard deviation over mean.
    Cv,
    /// The largest row minus the smallest.
    Range,
    /// The largest row over the smallest.
    MaxOverMin,
    /// The share of rows whose metric meets `op threshold`.
    Share {
        op: CmpOp,
        threshold: f64,
    },
    /// A trial metric's value (`value(fleet.s.throughput)`).
    Value,
    /// Lost messages over scheduled messages of a fleet.
    Loss,
    /// Failed connections over connections of a traffic workload.
    Failures,
    /// The largest Kolmogorov–Smirnov distance over an XML set's paths.
    MaxKs,
    /// The largest total-variation distance over an XML set's paths.
    MaxTv,
}

/// Rows selected by their time relative to an anomaly's activations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    pub relation: PhaseRelation,
    /// The anomaly's label.
    pub anomaly: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseRelation {
    During,
    Before,
    After,
}

/// `abort(grace = …)`: how long a violation must last before the run stops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Abort {
    pub grace_ns: u64,
}

/// `repeat = until_decided(max = …, min = …)`: the least repetitions per
/// point before the claims may stop the repeating (`max` is `Repeat::max`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecideRule {
    pub min: u32,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_claim_reads_back_and_unknown_fields_are_refused() {
        let stat = Stat {
            function: StatFn::Quantile { q: 0.99 },
            workload: "s".into(),
            kind: "fleet".into(),
            metric: "ack_latency".into(),
            phase: None,
            points: Vec::new(),
            unit: Unit::Ns,
        };
        let claim = Claim {
            text: "p99(fleet.s.ack_latency) < 25ms".into(),
            group: Some("latency".into()),
            origin: Origin {
                file: "x.exp".into(),
                line: 3,
                column: 5,
            },
            kind: ClaimKind::Compare {
                left: Term::Scaled { factor: 1.0, stat },
                op: CmpOp::Lt,
                right: Term::Constant {
                    value: 25e6,
                    unit: Unit::Ns,
                    time_scaled: false,
                },
            },
            abort: Some(Abort {
                grace_ns: 1_000_000_000,
            }),
        };
        let json = serde_json::to_value(&claim).unwrap();
        assert_eq!(serde_json::from_value::<Claim>(json.clone()).unwrap(), claim);
        // Plans without `scaled(…)` keep their shape.
        assert!(json["right"].get("time_scaled").is_none(), "{json}");
        let mut scaled = claim.clone();
        if let ClaimKind::Compare { right, .. } = &mut scaled.kind {
            *right = Term::Constant {
                value: 10e9,
                unit: Unit::Ns,
                time_scaled: true,
            };
        }
        let json_scaled = serde_json::to_value(&scaled).unwrap();
        assert_eq!(json_scaled["right"]["time_scaled"], true);
        assert_eq!(serde_json::from_value::<Claim>(json_scaled).unwrap(), scaled);
        let mut extra = json;
        extra["surprise"] = serde_json::json!(1);
        assert!(serde_json::from_value::<Claim>(extra).is_err());
    }
}
