//! Claims' verdicts: each claim of a plan (`expect` blocks,
//! [`exp_plan::claims`]) evaluated over a run directory's stored tables and
//! manifest, never over a runner's memory, so a finished, crashed, split or
//! sharded run evaluates over all of its parts, and `expc report --check`
//! gives the verdicts the run gave.
//!
//! A statistic is computed per trial from that trial's rows (`rows.rs`:
//! which table, column and rows, counted as the reports count them;
//! `values.rs`), giving one value per repetition of a point; invalid
//! trials are left out unless asked for, and said so. Across repetitions a
//! threshold is decided by the point's interval, a comparison of two
//! statistics by a seeded bootstrap (`compare.rs`), a trend by Kendall's τ
//! (`evaluate.rs`); `decide.rs` turns an interval into `supported`,
//! `refuted` or `inconclusive`; `abort.rs` says when a running trial's rows
//! violate an `abort` threshold beyond doubt. Nothing here prints.

pub mod abort;
mod compare;
mod decide;
mod error;
mod evaluate;
mod points;
mod rows;
mod values;

use std::path::Path;

use exp_plan::Plan;
use exp_results::claims::ClaimRecord;
use exp_results::{RunView, Warning};

pub use error::ClaimsError;

/// The confidence of every interval.
pub const CONFIDENCE: f64 = 0.95;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Count trials their audit found invalid (`--include-invalid`).
    pub include_invalid: bool,
}

/// The verdicts, and what could not be read (its trials left out).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    pub claims: Vec<ClaimRecord>,
    pub warnings: Vec<Warning>,
}

/// Every claim of `plan` over the run `run`, from its complete table files.
pub fn evaluate(run: &RunView, plan: &Plan, options: Options) -> Evaluation {
    evaluate_at(run, plan, options, None)
}

/// Whether every claim is decided at `point` (supported or refuted on an
/// interval: a single repetition's value does not decide), its comparisons
/// with other points included; trends are not asked (they need every
/// point). What `repeat = until_decided(…)` stops on.
pub fn decided_at(run: &RunView, plan: &Plan, options: Options, point: u32) -> bool {
    evaluate_at(run, plan, options, Some(point))
        .claims
        .iter()
        .flat_map(|c| &c.points)
        .all(|p| p.verdict != exp_results::claims::ClaimVerdict::Inconclusive && (!p.no_interval || p.repetitions == 0))
}

fn evaluate_at(run: &RunView, plan: &Plan, options: Options, only: Option<u32>) -> Evaluation {
    let mut ctx = values::Context {
        plan,
        time_scale: run.manifest.options.time_scale,
        values: values::Values::new(run),
        counted: values::Counted::of(run, options.include_invalid),
        seed: plan.experiment.seed,
        only,
    };
    let mut claims: Vec<ClaimRecord> = plan
        .claims
        .iter()
        .enumerate()
        .map(|(i, c)| evaluate::claim(&mut ctx, i, c))
        .collect();
    if let Some(aborted) = &run.manifest.aborted_by {
        abort::refute(&mut claims, aborted, run.manifest.error.as_deref());
    }
    Evaluation {
        claims,
        warnings: ctx.values.warnings,
    }
}

/// The plan a run directory ran (`plan.json`).
pub fn read_plan(dir: &Path) -> Result<Plan, ClaimsError> {
    let path = dir.join("plan.json");
    let bytes = std::fs::read(&path).map_err(|source| ClaimsError::ReadPlan {
        path: path.clone(),
        source,
    })?;
    Plan::from_json(&bytes).map_err(|source| ClaimsError::Plan { path, source })
}

/// Opens the run at `dir` and evaluates the claims of its plan.
pub fn evaluate_dir(dir: &Path, options: Options) -> Result<Evaluation, ClaimsError> {
    let run = exp_results::open_run(dir)?;
    let plan = read_plan(dir)?;
    let mut evaluation = evaluate(&run, &plan, options);
    evaluation.warnings.splice(0..0, run.warnings);
    Ok(evaluation)
}
