//! `repeat until` replaces an invalid repetition: the trial runs again at
//! once, with the same seed, after its invalid attempt is set aside
//! (`attempts/trial=<n>/attempt-<k>/`, recorded with its audit), within a
//! budget of half the rule's maximum per point (at least one), so a host
//! that spoils every trial cannot make a point run forever. Only for a stop
//! rule, never with `--include-invalid` (which counts invalid trials) and
//! never in a split run (which `repeat until` cannot be).

use exp_results::manifest::{AttemptRecord, TrialRecord, TrialStatus};
use exp_results::validity::{counts, Verdict};

use crate::run_context::{RunContext, RunError};

/// Replacements a point may run: half the maximum, at least one; none
/// without a stop rule or with invalid trials counted.
/// Attempts of `record` replaced earlier (by a run this one resumes).
pub(crate) fn replaced_before(record: &TrialRecord) -> u32 {
    record.attempts.iter().filter(|a| a.validity.is_some()).count() as u32
}

pub(crate) fn budget(ctx: &RunContext<'_>) -> u32 {
    match &ctx.plan.repeat.stop {
        Some(_) if !ctx.options.include_invalid && ctx.options.split.is_none() => (ctx.plan.repeat.max / 2).max(1),
        _ => 0,
    }
}

/// Whether `record`, just finished, is to be replaced: it completed but is
/// invalid, its point has not met its rule, and the budget is not spent.
pub(crate) fn due(ctx: &RunContext<'_>, record: &TrialRecord, stopped: bool, replaced: u32) -> bool {
    record.status == TrialStatus::Complete
        && !counts(record, false)
        && !stopped
        && !ctx.cancel.is_cancelled()
        && replaced < budget(ctx)
}

/// Sets the invalid attempt aside and makes the record `planned` again.
pub(crate) fn set_aside(ctx: &RunContext<'_>, record: &mut TrialRecord) -> Result<(), RunError> {
    // Its files' rows leave the run's counts with them (an unreadable
    // file's rows were never counted in a footer, so none are subtracted).
    let (removed, _) = ctx.run_dir.count_trial_tables(record.trial);
    let moved =
        ctx.run_dir
            .set_attempt_aside(record.trial, record.attempts.len() + 1, crate::kinds::KEPT_OUTPUT_DIRS)?;
    let codes: Vec<&str> = record
        .validity
        .iter()
        .flat_map(|v| &v.findings)
        .filter(|f| f.verdict == Verdict::Invalid)
        .map(|f| f.code.as_str())
        .collect();
    record.attempts.push(AttemptRecord {
        status: record.status,
        started_at_unix_ns: record.started_at_unix_ns.take(),
        ended_at_unix_ns: record.ended_at_unix_ns.take(),
        error: Some(format!("invalid ({}): replaced by `repeat until`", codes.join(", "))),
        files: moved.map(|m| m.dir),
        validity: record.validity.take(),
    });
    record.metrics.clear();
    record.error = None;
    record.status = TrialStatus::Planned;
    ctx.store.reopen_trial(record.trial, &removed);
    ctx.run_dir.record_trial(record)?;
    Ok(())
}
