//! `abort` thresholds, watched while the run goes: a thread reads the run
//! directory as any reader would (the running trial's sealed segments and
//! checkpoints under `tables/.partial/`) every [`POLL`], asks exp-claims
//! whether an abort claim is violated beyond doubt, and once one has been
//! for its grace, records it and stops the run as Ctrl-C does (the trial's
//! rows kept, the rest skipped, the directory complete and readable).
//!
//! How many rows a trial can still produce bounds "beyond doubt": a fleet
//! sends at most `devices × (⌊window / shortest gap⌋ + 1)` messages (a gap
//! distribution without a positive minimum gives no bound, and then only
//! what more rows cannot undo aborts).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use exp_plan::claims::Stat;
use exp_plan::{Dist, Plan, WorkloadConfig};
use exp_results::TrialStatus;

use crate::cancel::{Cancel, Level};
use crate::schedule::scale;

/// How often the watcher looks.
const POLL: Duration = Duration::from_millis(100);
/// How often the store writes a running trial's rows while a claim can
/// abort (2 s otherwise), so a violation is seen well within 2 s.
pub(crate) const CHECKPOINT: Duration = Duration::from_millis(250);

/// The claim that stopped the run: its text, and why.
pub(crate) type Aborted = Option<(String, String)>;

pub(crate) struct Watch {
    stop: Arc<AtomicBool>,
    aborted: Arc<Mutex<Aborted>>,
    thread: JoinHandle<()>,
}

/// Whether any claim of `plan` can abort the run.
pub(crate) fn any(plan: &Plan) -> bool {
    plan.claims.iter().any(|c| c.abort.is_some())
}

/// Starts watching the run at `dir`; `None` when no claim can abort it.
pub(crate) fn watch(plan: &Plan, dir: PathBuf, time_scale: f64, cancel: Cancel) -> Option<Watch> {
    if !any(plan) {
        return None;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let aborted = Arc::new(Mutex::new(None));
    let (plan, flag, found) = (plan.clone(), Arc::clone(&stop), Arc::clone(&aborted));
    let thread = std::thread::Builder::new()
        .name("claims-abort".into())
        .spawn(move || {
            let mut since: BTreeMap<(u32, usize), Instant> = BTreeMap::new();
            while !flag.load(Ordering::SeqCst) && !cancel.is_cancelled() {
                std::thread::sleep(POLL);
                if let Some(violation) = look(&plan, &dir, time_scale, &mut since) {
                    if let Ok(mut slot) = found.lock() {
                        *slot = Some(violation);
                    }
                    cancel.raise(Level::Stop);
                    return;
                }
            }
        })
        .ok()?;
    Some(Watch { stop, aborted, thread })
}

impl Watch {
    /// Stops watching; the claim that aborted the run, if one did.
    pub(crate) fn finish(self) -> Aborted {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.thread.join();
        self.aborted.lock().ok().and_then(|mut a| a.take())
    }
}

/// A violation that has stood for its grace, if any; `since` remembers
/// when each (trial, claim) was first seen violated.
fn look(
    plan: &Plan,
    dir: &std::path::Path,
    time_scale: f64,
    since: &mut BTreeMap<(u32, usize), Instant>,
) -> Option<(String, String)> {
    let view = exp_results::open_run(dir).ok()?;
    for trial in view.manifest.trials.iter().filter(|t| t.status == TrialStatus::Running) {
        let max_rows = |stat: &Stat| max_rows(plan, trial.point, stat, time_scale);
        for v in exp_claims::abort::violations(&view, plan, trial.trial, &max_rows) {
            let first = *since.entry((trial.trial, v.claim)).or_insert_with(Instant::now);
            if first.elapsed() >= Duration::from_nanos(v.grace_ns) {
                return Some((v.text, format!("trial {}: {}", trial.trial, v.why)));
            }
        }
    }
    None
}

/// At most how many rows `stat`'s workload writes in a trial at `point`.
fn max_rows(plan: &Plan, point: u32, stat: &Stat, time_scale: f64) -> Option<u64> {
    let workloads = plan.workloads_at(point)?;
    let workload = workloads.iter().find(|w| w.name == stat.workload)?;
    let WorkloadConfig::Fleet(fleet) = &workload.config else {
        return None;
    };
    let shortest = match fleet.gap.dist {
        Dist::Constant { value } => value,
        Dist::Uniform { min, .. } => min,
        _ => return None,
    };
    let end = workload.window.end_ns.or(plan.experiment.duration_ns)?;
    let length = scale(end.saturating_sub(workload.window.start_ns), time_scale) as f64;
    (shortest > 0.0).then(|| u64::from(fleet.devices) * ((length / shortest).floor() as u64 + 1))
}
