//! Latency by anomaly phase: each non-warm-up sent message is classified by
//! the anomalies active at its `sent_ns`, from the trial's `anomaly_timeline`
//! (the ground truth the anomaly executor writes, `exp-runtime/src/anomaly/`).
//!
//! The timeline is small (one row per activation), so it is read whole and
//! cut into segments at every actual start and end; a message's phase is the
//! segment holding its `sent_ns`, found by binary search, chunk by chunk.
//! The values are collected by the same passes as the fleet's (`passes.rs`),
//! one column per pass, grouped by phase.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::plan::PlanGaps;
use super::stats::Quantiles;
use super::trial_files;
use exp_results::schemas::TIMELINE_TABLE;
use exp_results::timeline::{self, Activation as Active};
use exp_results::{RunView, Warning};

/// The label of the phase before any anomaly started.
pub const NO_ANOMALY: &str = "none";
/// The label of the time without active anomalies after one has run: the
/// system recovering, kept apart from the undisturbed baseline.
pub const NO_ANOMALY_AFTER: &str = "none (after)";

/// One fleet's messages sent while the same set of anomalies was active.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseStats {
    /// [`NO_ANOMALY`], [`NO_ANOMALY_AFTER`], or the active anomalies' names,
    /// sorted, joined by `+`.
    pub label: String,
    /// The active anomalies' names, sorted; empty for the phases without.
    pub anomalies: Vec<String>,
    /// Non-warm-up messages sent in the phase.
    pub n: u64,
    /// Of those, `status` = `ok` (as [`super::Counts::acknowledged`]).
    pub ok: u64,
    pub ack_latency_ns: Option<Quantiles>,
    /// `None` when no message of the phase was delivered.
    pub delivery_latency_ns: Option<Quantiles>,
    pub lateness_ns: Option<Quantiles>,
}

/// Counts of one phase from the overview pass; `delivered` sizes the
/// delivery pass's vectors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PhaseCount {
    pub n: u64,
    pub ok: u64,
    pub delivered: u64,
}

/// One phase: the anomalies active in it, sorted; with none active, whether
/// one had run before (recovery) or not (baseline).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Phase {
    anomalies: Vec<String>,
    after: bool,
}

/// The trial's timeline cut into segments, each with its phase.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Phases {
    /// Phase index → its phase, in order of first occurrence.
    phases: Vec<Phase>,
    /// Segment starts, ascending, the first 0; a segment lasts until the next start.
    starts: Vec<u64>,
    /// The phase of each segment.
    segment_phase: Vec<usize>,
}

impl Phases {
    /// `None` without an activation that started.
    fn new(activations: &[Active]) -> Option<Phases> {
        if activations.is_empty() {
            return None;
        }
        // Every event of an instant is applied before the active set is
        // read, so their order within the instant does not matter.
        let mut events: Vec<(u64, bool, &str)> = Vec::with_capacity(activations.len() * 2);
        for a in activations.iter().filter(|a| a.start < a.end) {
            events.push((a.start, true, &a.instance));
            // An open end (the trial's end) is never reached by a message.
            if a.end < u64::MAX {
                events.push((a.end, false, &a.instance));
            }
        }
        events.sort_unstable();
        let mut phases = Phases {
            phases: Vec::new(),
            starts: vec![0],
            segment_phase: vec![0],
        };
        phases.phases.push(Phase {
            anomalies: Vec::new(),
            after: false,
        });
        let mut active: BTreeMap<&str, u32> = BTreeMap::new();
        let mut any_started = false;
        let mut i = 0;
        while i < events.len() {
            let at = events[i].0;
            while let Some(&(_, starts, name)) = events.get(i).filter(|e| e.0 == at) {
                let count = active.entry(name).or_default();
                *count = if starts { *count + 1 } else { count.saturating_sub(1) };
                i += 1;
            }
            active.retain(|_, count| *count > 0);
            let anomalies: Vec<String> = active.keys().map(|n| n.to_string()).collect();
            let key = Phase {
                after: anomalies.is_empty() && any_started,
                anomalies,
            };
            any_started |= !key.anomalies.is_empty();
            let phase = match phases.phases.iter().position(|p| *p == key) {
                Some(p) => p,
                None => {
                    phases.phases.push(key);
                    phases.phases.len() - 1
                }
            };
            if at == 0 {
                phases.segment_phase[0] = phase;
            } else {
                phases.starts.push(at);
                phases.segment_phase.push(phase);
            }
        }
        Some(phases)
    }

    pub fn len(&self) -> usize {
        self.phases.len()
    }

    /// Phase `p`'s label, as [`PhaseStats::label`].
    pub fn label(&self, p: usize) -> String {
        self.phases.get(p).map_or_else(|| NO_ANOMALY.to_string(), label)
    }

    /// The phase at `t` (trial clock, ns).
    pub fn of(&self, t: u64) -> usize {
        let segment = self.starts.partition_point(|&s| s <= t).saturating_sub(1);
        self.segment_phase.get(segment).copied().unwrap_or(0)
    }

    /// Phase indices in report order: the baseline first, then the
    /// anomalies by first occurrence, then the recovery.
    pub(super) fn order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.len()).filter(|&p| self.segment_phase.contains(&p)).collect();
        order.sort_by_key(|&p| match &self.phases[p] {
            Phase { after: true, .. } => 2,
            Phase { anomalies, .. } if anomalies.is_empty() => 0,
            _ => 1,
        });
        order
    }
}

/// The phases of `trial`, or `None` when it has no activation that started.
/// A timeline file that cannot be read is warned about and the trial gets
/// no phases: without one anomaly's rows every message would be misclassified.
/// So is a trial without timeline whose plan point has anomalies.
pub(crate) fn read(
    run: &RunView,
    trial: u32,
    plan: Option<(&PlanGaps, u32)>,
    warnings: &mut Vec<Warning>,
) -> Option<Phases> {
    let files = trial_files(run, TIMELINE_TABLE, trial);
    if files.is_empty() {
        let planned = plan.map(|(plan, point)| plan.anomalies(point)).unwrap_or_default();
        if !planned.is_empty() {
            warnings.push(Warning {
                path: run
                    .dir
                    .join("tables")
                    .join(TIMELINE_TABLE)
                    .join(format!("trial={trial}")),
                message: format!(
                    "the plan runs anomalies ({}) in trial {trial} but it has no anomaly timeline, \
                     so its fleets have no latency by phase",
                    planned.join(", ")
                ),
            });
        }
        return None;
    }
    let mut activations = Vec::new();
    for path in &files {
        if let Err(error) = timeline::activations(path, &mut activations) {
            warnings.push(Warning {
                path: path.clone(),
                message: format!("{error}; trial {trial}'s fleets have no latency by phase"),
            });
            return None;
        }
    }
    Phases::new(&activations)
}

/// Each fleet's phases in report order, with the counts of the overview
/// pass (`counts`, by phase index) and no quantiles yet.
pub(super) fn skeleton(phases: &Phases, counts: &[PhaseCount]) -> Vec<PhaseStats> {
    phases
        .order()
        .into_iter()
        .map(|p| {
            let c = counts.get(p).copied().unwrap_or_default();
            let phase = &phases.phases[p];
            PhaseStats {
                label: label(phase),
                anomalies: phase.anomalies.clone(),
                n: c.n,
                ok: c.ok,
                ack_latency_ns: None,
                delivery_latency_ns: None,
                lateness_ns: None,
            }
        })
        .collect()
}

fn label(phase: &Phase) -> String {
    match phase {
        Phase { after: true, .. } => NO_ANOMALY_AFTER.to_string(),
        Phase { anomalies, .. } if anomalies.is_empty() => NO_ANOMALY.to_string(),
        Phase { anomalies, .. } => anomalies.join("+"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn active(instance: &str, start: u64, end: u64) -> Active {
        Active {
            instance: instance.into(),
            start,
            end,
        }
    }

    #[test]
    fn segments_of_overlapping_and_repeated_activations() {
        assert_eq!(Phases::new(&[]), None);
        let p = Phases::new(&[
            active("b", 20, 40),
            active("a", 10, 30),
            active("a", 50, u64::MAX),
            active("z", 45, 45),
        ])
        .unwrap();
        let labels: Vec<String> = p.order().iter().map(|&i| label(&p.phases[i])).collect();
        assert_eq!(labels, ["none", "a", "a+b", "b", "none (after)"]);
        let expected = [
            (0, "none"),
            (9, "none"),
            (10, "a"),
            (20, "a+b"),
            (29, "a+b"),
            (30, "b"),
            (40, "none (after)"),
            (45, "none (after)"),
            (50, "a"),
            (u64::MAX, "a"),
        ];
        for (t, phase) in expected {
            assert_eq!(at_label(&p, t), phase, "at {t}");
        }
        // An anomaly from the trial's start: no phase without one.
        let p = Phases::new(&[active("a", 0, u64::MAX)]).unwrap();
        let labels: Vec<String> = p.order().iter().map(|&i| label(&p.phases[i])).collect();
        assert_eq!(labels, ["a"]);
        // Two activations of one anomaly that touch stay one phase (with the
        // baseline before and the recovery after).
        let p = Phases::new(&[active("a", 10, 20), active("a", 20, 30)]).unwrap();
        assert_eq!((p.len(), at_label(&p, 20)), (3, "a".to_string()));
        // The quiet time after an anomaly is a phase of its own.
        let p = Phases::new(&[active("a", 10, 20)]).unwrap();
        assert_eq!(
            (at_label(&p, 5), at_label(&p, 25)),
            ("none".into(), "none (after)".into())
        );
    }

    fn at_label(p: &Phases, t: u64) -> String {
        label(&p.phases[p.of(t)])
    }
}
