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

impl Finding {
    /// A finding of `code` (`V0101`) with its verdict and words; the
    /// workload is filled in by the trial that collects it.
    pub fn new(code: &str, verdict: Verdict, message: String) -> Finding {
        Finding {
            code: code.to_string(),
            workload: None,
            verdict,
            message,
            measured: None,
            bound: None,
        }
    }

    /// The same, with the measured value and its bound (base units).
    pub fn measured(mut self, measured: f64, bound: f64) -> Finding {
        (self.measured, self.bound) = (Some(measured), Some(bound));
        self
    }
}

/// The bounds the audits hold a trial to: data, with the defaults
/// docs/running.md ("Validity") states. A fleet's send lateness bound is
/// the fleet's own (`lateness_bound`, or its default from the gap).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// V0102: the runner's CPU, as a share of the machine's cores, at or
    /// above which the load generator had no CPU to spare.
    pub runner_cpu_share: f64,
    /// V0103: the share of a fleet's messages left without their
    /// acknowledgement (or write, at QoS 0) above which it is flagged.
    pub unacknowledged_share: f64,
    /// V0201: the 99th percentile of how late a traffic workload's
    /// connections started against the plan, in ns.
    pub connection_start_lateness_ns: u64,
    /// V0202: how far (relative) the median connection's measured RTT
    /// (TCP's smoothed RTT at close) may be from the RTT it was assigned.
    pub rtt_tolerance: f64,
    /// V0302: how far below its requested utilization a `cpuoccupy`
    /// activation may stay, as a share of the request.
    pub intensity_tolerance: f64,
    /// V0501: a monitor interval longer than this many requested intervals
    /// is a gap.
    pub monitor_gap_factor: f64,
    /// V0601: steal time, as a share of the machine's cores.
    pub steal_share: f64,
    /// V0602: CPU of processes outside the run, as a share of the
    /// machine's cores.
    pub others_cpu_share: f64,
}

/// A `--validity-bound NAME=VALUE` that names no bound or gives no number.
#[derive(Debug, thiserror::Error)]
#[error("--validity-bound {given}: {reason}")]
pub struct BoundError {
    given: String,
    reason: String,
}

impl Bounds {
    /// The bounds with `NAME=VALUE` set (`others_cpu_share=0.5`), the
    /// names being the fields' (docs/running.md, "Validity").
    pub fn with(self, setting: &str) -> Result<Bounds, BoundError> {
        let fail = |reason: String| BoundError {
            given: setting.to_string(),
            reason,
        };
        let (name, value) = setting
            .split_once('=')
            .ok_or_else(|| fail("write NAME=VALUE, e.g. others_cpu_share=0.5".into()))?;
        let mut fields = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(fields)) => fields,
            _ => return Err(fail("the bounds cannot be written".into())),
        };
        let names: Vec<String> = fields.keys().cloned().collect();
        let slot = fields
            .get_mut(name.trim())
            .ok_or_else(|| fail(format!("no such bound; the bounds are {}", names.join(", "))))?;
        let number: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| fail("the value must be a number at least 0".into()))?;
        *slot = if slot.is_u64() {
            if number.fract() != 0.0 {
                return Err(fail("this bound is a whole number (nanoseconds)".into()));
            }
            serde_json::json!(number as u64)
        } else {
            serde_json::json!(number)
        };
        serde_json::from_value(serde_json::Value::Object(fields)).map_err(|e| fail(e.to_string()))
    }
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            runner_cpu_share: 0.9,
            unacknowledged_share: 0.01,
            connection_start_lateness_ns: 10_000_000,
            rtt_tolerance: 0.1,
            intensity_tolerance: 0.2,
            monitor_gap_factor: 2.0,
            steal_share: 0.05,
            others_cpu_share: 0.25,
        }
    }
}

/// Whether an aggregate (a sweep table or figure, `repeat until`, a run
/// comparison) counts this trial: yes unless its verdict is `invalid` and
/// the user did not ask for invalid trials back (`--include-invalid`). A
/// trial never audited (`validity: None`: not run yet, or a run from before
/// audits) counts, as it did before. Status is the caller's concern: this
/// answers only for validity.
pub fn counts(trial: &impl Audited, include_invalid: bool) -> bool {
    include_invalid || trial.validity().is_none_or(|v| v.verdict != Verdict::Invalid)
}

/// A record that may hold a trial's audit (the manifest's `TrialRecord`):
/// what [`counts`] and [`LeftOut::note`] read, so that this module needs
/// nothing of the manifest that holds its types.
pub trait Audited {
    fn validity(&self) -> Option<&Validity>;
}

impl<T: Audited> Audited for &T {
    fn validity(&self) -> Option<&Validity> {
        (*self).validity()
    }
}

/// What an aggregate left out, to say so beside it: how many trials, and
/// how many of them each code made invalid (a trial with two invalid
/// findings counts under both codes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    pub trials: u32,
    /// Code (`V0101`) → trials it made invalid.
    pub by_code: std::collections::BTreeMap<String, u32>,
}

impl LeftOut {
    /// Notes `trial` if [`counts`] leaves it out; returns whether it counts.
    pub fn note(&mut self, trial: &impl Audited, include_invalid: bool) -> bool {
        if counts(trial, include_invalid) {
            return true;
        }
        self.trials += 1;
        let mut codes: Vec<&str> = trial
            .validity()
            .into_iter()
            .flat_map(|v| &v.findings)
            .filter(|f| f.verdict == Verdict::Invalid)
            .map(|f| f.code.as_str())
            .collect();
        codes.sort_unstable();
        codes.dedup();
        for code in codes {
            *self.by_code.entry(code.to_string()).or_default() += 1;
        }
        false
    }

    /// `2 invalid trials (V0101 ×2, V0301 ×1)`, or `None` if none: what
    /// the caller says it left out, and where.
    pub fn describe(&self) -> Option<String> {
        if self.trials == 0 {
            return None;
        }
        let codes: Vec<String> = self.by_code.iter().map(|(c, n)| format!("{c} ×{n}")).collect();
        let plural = if self.trials == 1 { "" } else { "s" };
        Some(format!("{} invalid trial{plural} ({})", self.trials, codes.join(", ")))
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

    fn record(validity: Option<Validity>) -> crate::manifest::TrialRecord {
        crate::manifest::TrialRecord {
            trial: 0,
            point: 0,
            repetition: 0,
            seed: 0,
            sweep: Default::default(),
            status: crate::manifest::TrialStatus::Complete,
            started_at_unix_ns: None,
            ended_at_unix_ns: None,
            error: None,
            metrics: Default::default(),
            attempts: Vec::new(),
            validity,
        }
    }

    #[test]
    fn a_bound_is_set_by_its_name() {
        let bounds = Bounds::default().with("others_cpu_share=0.5").unwrap();
        assert_eq!(bounds.others_cpu_share, 0.5);
        let bounds = bounds.with("connection_start_lateness_ns = 20000000").unwrap();
        assert_eq!(bounds.connection_start_lateness_ns, 20_000_000);
        assert_eq!(bounds.steal_share, Bounds::default().steal_share, "the others kept");
        for wrong in [
            "others_cpu",
            "nope=1",
            "steal_share=-1",
            "steal_share=x",
            "connection_start_lateness_ns=1.5",
        ] {
            assert!(Bounds::default().with(wrong).is_err(), "{wrong}");
        }
        let message = Bounds::default().with("nope=1").unwrap_err().to_string();
        assert!(message.contains("monitor_gap_factor"), "{message}");
    }

    #[test]
    fn aggregates_leave_out_invalid_trials_unless_asked_and_say_why() {
        let invalid = record(Some(Validity::of([
            finding("V0301", Verdict::Invalid),
            finding("V0101", Verdict::Invalid),
            finding("V0901", Verdict::Degraded),
        ])));
        let degraded = record(Some(Validity::of([finding("V0901", Verdict::Degraded)])));
        let unaudited = record(None);
        assert!(!counts(&invalid, false));
        assert!(counts(&invalid, true));
        assert!(counts(&degraded, false) && counts(&unaudited, false));
        let mut left_out = LeftOut::default();
        let kept = [&invalid, &degraded, &unaudited, &invalid]
            .into_iter()
            .filter(|t| left_out.note(t, false))
            .count();
        assert_eq!(kept, 2);
        assert_eq!(left_out.trials, 2);
        assert_eq!(
            left_out.describe().as_deref(),
            Some("2 invalid trials (V0101 ×2, V0301 ×2)")
        );
        assert_eq!(LeftOut::default().describe(), None);
    }
}
