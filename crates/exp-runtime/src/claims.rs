//! The run's claims (exp-claims) where the runner needs them: the verdicts
//! the manifest records when a run ends, and `repeat = until_decided(…)`,
//! asked after each repetition of a point. Both read the run directory's
//! stored tables, as `expc report --check` does, with the runner's manifest
//! (the one that is up to date) in place of the file's.

use exp_claims::Options;
use exp_plan::Plan;
use exp_results::claims::ClaimRecord;
use exp_results::{Manifest, RunView};

/// The run directory as readers see it, with `manifest`.
fn view(dir: &std::path::Path, manifest: &Manifest) -> Option<RunView> {
    let mut view = exp_results::open_run(dir).ok()?;
    view.manifest = manifest.clone();
    Some(view)
}

/// Every claim's verdict over the run's tables; none for a plan without
/// claims, or for one part of a sharded or split run (a part alone cannot
/// judge: `expc report --check` evaluates the merged run over all parts).
pub(crate) fn verdicts(
    plan: &Plan,
    dir: &std::path::Path,
    manifest: &Manifest,
    include_invalid: bool,
) -> Vec<ClaimRecord> {
    if plan.claims.is_empty() || manifest.shard.is_some() || manifest.split.is_some() {
        return Vec::new();
    }
    view(dir, manifest).map_or_else(Vec::new, |view| {
        exp_claims::evaluate(&view, plan, Options { include_invalid }).claims
    })
}

/// `until_decided`: after `repetitions` of `point`, the reason to stop
/// repeating it if every claim at it is supported or refuted and it has
/// run at least `min` times (`max` is the plan's repetitions).
pub(crate) fn until_decided(
    plan: &Plan,
    dir: &std::path::Path,
    manifest: &Manifest,
    include_invalid: bool,
    point: u32,
    repetitions: u32,
) -> Option<String> {
    let rule = plan.repeat.until_decided.as_ref()?;
    // A part of a sharded or split run sees only its own rows, and split
    // parts must stop together: they run every repetition.
    let part = manifest.shard.is_some() || manifest.split.is_some();
    if part || repetitions < rule.min.max(1) || plan.claims.is_empty() || repetitions >= plan.repeat.max {
        return None;
    }
    let view = view(dir, manifest)?;
    exp_claims::decided_at(&view, plan, Options { include_invalid }, point)
        .then(|| format!("every claim decided after {repetitions} repetitions"))
}
