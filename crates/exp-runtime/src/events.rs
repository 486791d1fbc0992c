//! What the runtime reports while it runs. Only the CLI renders these
//! (progress bars on a terminal, log lines elsewhere).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::cancel::Level;
use crate::live::{Live, RunState, TrialNow};

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    RunStarted {
        run_dir: PathBuf,
        /// Trials selected to run (the most; `repeat until` may stop earlier).
        trials: u32,
    },
    TrialStarted {
        trial: u32,
        /// 1-based position among the selected trials.
        ordinal: u32,
        total: u32,
        point: u32,
        repetition: u32,
        /// The sweep point, e.g. `utilization=50%`.
        sweep: String,
        /// Trial length after `--time-scale`; `None` when workloads end by themselves.
        planned_ns: Option<u64>,
    },
    /// Every second while a trial runs: how far it is and the rows its
    /// tables have taken so far (messages, connections, samples).
    TrialProgress {
        trial: u32,
        elapsed_ns: u64,
        /// Trial length after `--time-scale`, as in [`Event::TrialStarted`].
        planned_ns: Option<u64>,
        rows: BTreeMap<String, u64>,
    },
    TrialFinished {
        trial: u32,
        status: String,
        elapsed_ns: u64,
        error: Option<String>,
        /// What the trial's audit found (docs/running.md, "Validity").
        validity: exp_results::validity::Validity,
    },
    /// `repeat until` met its rule (or its maximum) for a sweep point.
    RepeatStopped {
        point: u32,
        repetitions: u32,
        reason: String,
    },
    Pause {
        ns: u64,
    },
    /// A split part waits at a trial's start for the other parts: sent
    /// after a few seconds of waiting, then every few seconds until they
    /// come or the wait times out.
    WaitingForParts {
        trial: u32,
        /// The parts that have not said they are ready (`K` of `K/N`).
        missing: Vec<u32>,
        count: u32,
        waited_ns: u64,
        timeout_ns: u64,
    },
    /// Ctrl-C seen: stopping cleanly (`Stop`) or at once (`Kill`).
    Stopping {
        level: Level,
    },
}

/// Where events go. Sending never fails the run: a closed receiver only
/// means nobody is watching. The run's live counters travel with them.
#[derive(Clone)]
pub struct Events {
    tx: Option<std::sync::mpsc::Sender<Event>>,
    live: Live,
}

impl Events {
    pub fn new(tx: std::sync::mpsc::Sender<Event>) -> Self {
        Events {
            tx: Some(tx),
            live: Live::default(),
        }
    }

    /// Events that nobody receives (tests, library use).
    pub fn none() -> Self {
        Events {
            tx: None,
            live: Live::default(),
        }
    }

    /// The run's live counters (`expc run --metrics`, the progress line).
    pub fn live(&self) -> &Live {
        &self.live
    }

    pub fn send(&self, event: Event) {
        self.live.update(|state| observe(state, &event));
        if let Some(tx) = &self.tx {
            let _ = tx.send(event);
        }
    }
}

/// What an event says about where the run stands.
fn observe(state: &mut RunState, event: &Event) {
    match event {
        Event::RunStarted { run_dir, trials } => {
            state.run_dir = Some(run_dir.clone());
            state.trials_selected = *trials;
        }
        Event::TrialStarted {
            trial,
            ordinal,
            point,
            repetition,
            planned_ns,
            ..
        } => {
            state.last_trial = Some(*trial);
            state.running = Some(TrialNow {
                trial: *trial,
                ordinal: *ordinal,
                point: *point,
                repetition: *repetition,
                started: std::time::Instant::now(),
                planned_ns: *planned_ns,
            });
        }
        Event::TrialFinished { status, validity, .. } => {
            state.running = None;
            *state.finished.entry(status.clone()).or_default() += 1;
            *state.verdicts.entry(validity.verdict.as_str().to_string()).or_default() += 1;
            for finding in &validity.findings {
                let key = (finding.code.clone(), finding.verdict.as_str().to_string());
                *state.findings.entry(key).or_default() += 1;
            }
        }
        Event::Stopping { .. } => state.stopping = true,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trial_events_say_where_the_run_stands() {
        let events = Events::none();
        events.send(Event::RunStarted {
            run_dir: PathBuf::from("runs/x/.r.partial"),
            trials: 2,
        });
        events.send(Event::TrialStarted {
            trial: 1,
            ordinal: 1,
            total: 2,
            point: 0,
            repetition: 1,
            sweep: String::new(),
            planned_ns: Some(5),
        });
        assert_eq!(events.live().state().running.map(|t| t.trial), Some(1));
        events.send(Event::TrialFinished {
            trial: 1,
            status: "complete".into(),
            elapsed_ns: 5,
            error: None,
            validity: exp_results::validity::Validity::default(),
        });
        let state = events.live().state();
        assert_eq!(state.running, None);
        assert_eq!(state.last_trial, Some(1));
        assert_eq!(state.finished.get("complete"), Some(&1));
        assert_eq!(state.verdicts.get("valid"), Some(&1));
    }
}
