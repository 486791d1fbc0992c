//! What `expc run` prints before (`--dry-run`) and after a run.

use std::collections::BTreeMap;
use std::path::Path;

use exp_plan::Plan;
use exp_report::text::units::metric_text;
use exp_results::manifest::{Manifest, TrialStatus};
use exp_results::schemas::MESSAGES_TABLE;
use exp_runtime::schedule::{intervals, scale};
use exp_runtime::RunOptions;

/// Points shown by a dry run; the rest are counted.
const SHOWN_POINTS: usize = 20;
/// Active windows of one workload shown before "… and N more".
const SHOWN_WINDOWS: usize = 4;

/// The trials and the windows of their workloads on the (scaled) timeline,
/// for the first [`SHOWN_POINTS`] points with selected trials.
pub fn print_schedule(plan: &Plan, options: &RunOptions) {
    let selected: Box<dyn Iterator<Item = u32>> = match &options.trials {
        Some(selection) => Box::new(selection.iter()),
        None => Box::new(plan.trial_indices()),
    };
    let count = options
        .trials
        .as_ref()
        .map_or(u64::from(plan.trial_count()), |s| s.count());
    let trial_ns = plan.experiment.duration_ns.map(|d| scale(d, options.time_scale));
    let pause_ns = scale(plan.experiment.pause_ns, options.time_scale);
    outln!(
        "experiment {:?}: {count} of {} trials",
        plan.experiment.name,
        plan.trial_count()
    );
    if let Some(ns) = trial_ns {
        // In u128: a million trials of 2^53 ns each pass u64 (and used to
        // print u64::MAX ns, "5124095 h", for any longer study).
        let total = u128::from(ns) * u128::from(count) + u128::from(pause_ns) * u128::from(count.saturating_sub(1));
        outln!(
            "  each trial {}, about {} in all{}",
            seconds(ns),
            long_span(total),
            max_note(plan)
        );
    }
    print_order(plan, options);
    // Selected trials grouped by point (trials are numbered point-major).
    let repetitions = plan.repeat.max.max(1);
    let mut points: Vec<(u32, Vec<u32>)> = Vec::new();
    let (mut hidden_points, mut hidden_trials, mut last_hidden) = (0u64, 0u64, None);
    for trial in selected {
        let point = trial / repetitions;
        let shown = points.len();
        match points.last_mut() {
            Some((last, trials)) if *last == point => trials.push(trial),
            _ if shown < SHOWN_POINTS => points.push((point, vec![trial])),
            _ => {
                hidden_trials += 1;
                if last_hidden != Some(point) {
                    hidden_points += 1;
                    last_hidden = Some(point);
                }
            }
        }
    }
    for (point, trials) in &points {
        print_point(plan, *point, trials, trial_ns, options.time_scale);
    }
    if hidden_points > 0 {
        outln!("… and {hidden_points} more points ({hidden_trials} trials)");
    }
}

/// Trials of the run order a dry run lists; the rest are counted.
const SHOWN_ORDER: usize = 40;

/// The order the selected trials will run in, as the runner will take them.
fn print_order(plan: &Plan, options: &RunOptions) {
    let selected = |t: &u32| options.trials.as_ref().is_none_or(|s| s.contains(*t));
    let order: Vec<u32> = plan.run_order().into_iter().filter(selected).collect();
    let how = match plan.repeat.order {
        exp_plan::Order::Randomized => format!("randomized interleaved, seed {}", plan.experiment.seed),
        exp_plan::Order::Interleaved => "interleaved, round by round".to_string(),
        exp_plan::Order::Sequential => "sequential, point by point".to_string(),
    };
    let mut shown: Vec<String> = order.iter().take(SHOWN_ORDER).map(u32::to_string).collect();
    if order.len() > SHOWN_ORDER {
        shown.push(format!("… and {} more", order.len() - SHOWN_ORDER));
    }
    outln!("  run order ({how}): {}", shown.join(", "));
}

/// One point of the dry run: its values, trials and workload windows.
fn print_point(plan: &Plan, index: u32, trials: &[u32], trial_ns: Option<u64>, time_scale: f64) {
    let Some(point) = plan.point(index) else {
        return;
    };
    let sweep: Vec<String> = point.values.iter().map(|(k, v)| format!("{k}={}", v.label)).collect();
    outln!(
        "point {}{}: trials {}",
        point.index,
        bracketed(&sweep.join(", ")),
        ranges(trials)
    );
    for workload in &point.workloads {
        let all = intervals(&workload.window, trial_ns, time_scale);
        let mut windows: Vec<String> = all
            .iter()
            .take(SHOWN_WINDOWS)
            .map(|i| format!("{}–{}", seconds(i.start_ns), i.end_ns.map_or("end".into(), seconds)))
            .collect();
        if all.len() > SHOWN_WINDOWS {
            windows.push(format!("… and {} more", all.len() - SHOWN_WINDOWS));
        }
        outln!(
            "  {:<16} {:<22} {}",
            workload.name,
            workload.config.describe(),
            windows.join(", ")
        );
    }
    if let Some(monitor) = &point.monitor {
        outln!("  {:<16} every {}", "monitor", seconds(monitor.interval_ns));
    }
}

/// `0-3,7`: ascending numbers with runs written as ranges.
pub(crate) fn ranges(numbers: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
            j += 1;
        }
        parts.push(if j > i + 1 {
            format!("{}-{}", numbers[i], numbers[j])
        } else if j == i + 1 {
            format!("{},{}", numbers[i], numbers[j])
        } else {
            numbers[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The end of a run: where it is, how it ended, what it measured.
pub fn print_run(dir: &Path, manifest: &Manifest) {
    let count = |status: TrialStatus| manifest.trials.iter().filter(|t| t.status == status).count();
    outln!("run {} {}", manifest.run_id, manifest.status.as_str());
    outln!("  directory  {}", dir.display());
    outln!(
        "  trials     {} complete, {} failed, {} interrupted, {} skipped",
        count(TrialStatus::Complete),
        count(TrialStatus::Failed),
        count(TrialStatus::Interrupted),
        count(TrialStatus::Skipped)
    );
    if !manifest.shards.is_empty() {
        for line in missing_parts(dir, manifest) {
            outln!("  missing    {line}");
        }
    }
    if let Some(error) = &manifest.error {
        outln!("  error      {error}");
    }
    for trial in manifest.trials.iter().filter(|t| t.error.is_some()) {
        outln!(
            "  trial {:<4} {}",
            trial.trial,
            trial.error.as_deref().unwrap_or_default()
        );
    }
    print_fleet_warnings(manifest);
    print_validity(manifest);
    if let Some(claimed) = &manifest.aborted_by {
        outln!("  aborted    by claim `{claimed}`");
    }
    for line in exp_report::claims::text(&manifest.claims).lines() {
        outln!("  {line}");
    }
    for (name, table) in &manifest.tables {
        outln!(
            "  table      {name:<18} {:>9} rows in {} files",
            table.rows,
            table.files
        );
    }
    // Per-workload metrics (`workload.metric`) of the first trials, with units.
    const SHOWN: usize = 8;
    let kinds = workload_kinds(dir);
    let measured: Vec<_> = manifest.trials.iter().filter(|t| !t.metrics.is_empty()).collect();
    for trial in measured.iter().take(SHOWN) {
        let mut workloads: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (key, value) in &trial.metrics {
            if let Some((workload, metric)) = key.split_once('.') {
                let kind = kinds.get(workload).map_or("", String::as_str);
                workloads
                    .entry(workload)
                    .or_default()
                    .push(metric_text(kind, metric, *value));
            }
        }
        for (workload, metrics) in workloads {
            outln!("  trial {:<4} {workload:<16} {}", trial.trial, metrics.join(", "));
        }
    }
    if measured.len() > SHOWN {
        outln!("  … and {} more trials (all in manifest.json)", measured.len() - SHOWN);
    }
    print_fleets(dir, manifest);
    outln!("details: expc report {}", dir.display());
}

/// The shards or split parts that never started (no fragment), and what
/// that leaves unrun: a shard's trials, a split part's share of every
/// trial. Known from the parts' record (`parts.json`) and the run's plan.
fn missing_parts(dir: &Path, manifest: &Manifest) -> Vec<String> {
    let Ok(Some(agreement)) = exp_results::recorded_parts(dir) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let present: std::collections::BTreeSet<u32> = manifest.shards.iter().map(|s| s.index).collect();
    let plan = std::fs::read(dir.join("plan.json"))
        .ok()
        .and_then(|bytes| exp_plan::Plan::from_json(&bytes).ok());
    for index in (0..agreement.count).filter(|k| !present.contains(k)) {
        let part = exp_runtime::ShardSpec {
            index,
            count: agreement.count,
        };
        let what = match (agreement.mode, &plan) {
            (exp_results::PartMode::Split, _) => "every trial lacks its share of the workloads".to_string(),
            (exp_results::PartMode::Shards, Some(plan)) => {
                let selection = agreement
                    .trials_selected
                    .as_deref()
                    .and_then(|text| exp_runtime::TrialSelection::parse(text, plan.trial_count()).ok());
                match exp_runtime::shard_trials(plan, selection.as_ref(), part).as_slice() {
                    [] => "it has no trials".to_string(),
                    trials => format!("its trials {} have not run", ranges(trials)),
                }
            }
            (exp_results::PartMode::Shards, None) => "its trials have not run".to_string(),
        };
        let flag = match agreement.mode {
            exp_results::PartMode::Split => "--split",
            exp_results::PartMode::Shards => "--shard",
        };
        lines.push(format!(
            "{flag} {part} never started (no {}): {what}",
            exp_results::Role::Shard(index).manifest_file()
        ));
    }
    lines
}

/// How many trials each verdict got, and the findings of those that are
/// not valid (the first few; `expc report` lists them all).
fn print_validity(manifest: &Manifest) {
    const SHOWN: usize = 12;
    let counts = exp_report::validity::counts(manifest);
    if counts == exp_report::validity::Counts::default() {
        return;
    }
    outln!("  validity   {counts}");
    let findings: Vec<(u32, &exp_results::validity::Finding)> = manifest
        .trials
        .iter()
        .flat_map(|t| t.validity.iter().flat_map(|v| &v.findings).map(move |f| (t.trial, f)))
        .collect();
    for (trial, f) in findings.iter().take(SHOWN) {
        let whose = f.workload.as_ref().map_or(String::new(), |w| format!(" `{w}`"));
        outln!(
            "  {:<10} trial {trial}: {}{whose}: {}",
            f.verdict.as_str(),
            f.code,
            f.message
        );
    }
    if findings.len() > SHOWN {
        outln!(
            "  … and {} more findings (expc report lists them)",
            findings.len() - SHOWN
        );
    }
    if counts.degraded + counts.invalid > 0 {
        outln!("  (`expc explain CODE` says what a code means; aggregates leave invalid trials out)");
    }
}

/// Fleets that ran with fewer devices than the spec asked for: the
/// trial completed, but measured less of the fleet (`devices_not_connected`).
fn print_fleet_warnings(manifest: &Manifest) {
    for trial in &manifest.trials {
        for (key, count) in &trial.metrics {
            if let Some((fleet, "devices_not_connected")) = key.split_once('.') {
                outln!(
                    "  warning    trial {}: fleet `{fleet}`: {count} devices did not connect (`mqtt_devices` says \
                     why); their messages are `dropped`",
                    trial.trial
                );
            }
        }
    }
}

/// Each workload's kind (`fleet`, …) from the run's `plan.json`; empty if
/// it cannot be read (metrics then get the units their names imply).
fn workload_kinds(dir: &Path) -> BTreeMap<String, String> {
    let plan = exp_files::read_bytes(&dir.join("plan.json"), crate::PLAN_CAP)
        .ok()
        .and_then(|bytes| exp_plan::Plan::from_json(&bytes).ok());
    plan.iter()
        .flat_map(|plan| &plan.workloads)
        .filter_map(|w| w.variants.first())
        .map(|w| (w.name.clone(), w.config.kind().to_string()))
        .collect()
}

/// The MQTT fleet report of a small run (at most 4 trials and 2 million
/// messages, which it reads in a couple of seconds), so that a run's
/// latency percentiles are on screen when it ends; larger runs point to
/// `expc report`.
fn print_fleets(dir: &Path, manifest: &Manifest) {
    const MAX_TRIALS: usize = 4;
    const MAX_MESSAGES: u64 = 2_000_000;
    let messages = manifest.tables.get(MESSAGES_TABLE).map_or(0, |t| t.rows);
    if messages == 0 || manifest.trials.len() > MAX_TRIALS || messages > MAX_MESSAGES {
        return;
    }
    let Ok(view) = exp_results::open_run(dir) else {
        return;
    };
    // Warnings are for `expc report`; a run that just ended has complete tables.
    if let Some(report) = exp_report::mqtt_report(&view, &mut Vec::new()) {
        out!("{}", exp_report::text::mqtt::render(&report));
    }
}

fn max_note(plan: &Plan) -> &'static str {
    if plan.repeat.stop.is_some() {
        " at most (repeat until may stop earlier)"
    } else {
        ""
    }
}

fn bracketed(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(" ({text})")
    }
}

/// A span of time as people read one: `3 d 2 h`, `2 h 54 min 30 s`,
/// `17 min`, `9.5 s`, `250 ms`; days, hours and minutes in whole seconds.
pub fn seconds(ns: u64) -> String {
    if ns < 1_000_000_000 {
        return match ns {
            0 => "0 s".into(),
            n if n < 1_000 => format!("{n} ns"),
            n if n < 1_000_000 => format!("{} µs", trim(n as f64 / 1e3)),
            n => format!("{} ms", trim(n as f64 / 1e6)),
        };
    }
    if ns < 60_000_000_000 {
        return format!("{} s", trim(ns as f64 / 1e9));
    }
    let total = ns.saturating_add(500_000_000) / 1_000_000_000;
    let (d, h, m, s) = (total / 86_400, total / 3600 % 24, total / 60 % 60, total % 60);
    let parts = [(d, "d"), (h, "h"), (m, "min"), (s, "s")];
    let first = parts.iter().position(|(n, _)| *n > 0).unwrap_or(3);
    let last = parts.iter().rposition(|(n, _)| *n > 0).unwrap_or(3);
    parts[first..=last]
        .iter()
        .map(|(n, unit)| format!("{n} {unit}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Nanoseconds in a year of 365.25 days.
const YEAR_NS: u128 = 31_557_600_000_000_000;

/// [`seconds`], or from two years on `2.5 years`, `285,616 years`: a
/// study's total, which may be far past what `u64` nanoseconds hold.
pub fn long_span(ns: u128) -> String {
    match u64::try_from(ns) {
        Ok(ns) if u128::from(ns) < 2 * YEAR_NS => seconds(ns),
        _ if ns < 100 * YEAR_NS => format!("{:.1} years", ns as f64 / YEAR_NS as f64),
        _ => match u64::try_from(ns / YEAR_NS) {
            Ok(years) => format!("{} years", exp_diagnostics::limits::group(years)),
            Err(_) => format!("{:.1e} years", ns as f64 / YEAR_NS as f64),
        },
    }
}

/// At most two decimals, without trailing zeros: `9.5`, `12`, `0.25`.
fn trim(x: f64) -> String {
    let text = format!("{x:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::{long_span, seconds, YEAR_NS};

    #[test]
    fn spans_of_time_read_as_people_write_them() {
        assert_eq!(seconds(0), "0 s");
        assert_eq!(seconds(250_000_000), "250 ms");
        assert_eq!(seconds(9_500_000_000), "9.5 s");
        assert_eq!(seconds(60_000_000_000), "1 min");
        assert_eq!(seconds(1_020_000_000_000), "17 min");
        assert_eq!(seconds(10_470_000_000_000), "2 h 54 min 30 s");
        assert_eq!(seconds(7_200_000_000_000), "2 h");
        assert_eq!(seconds(3_601_000_000_000), "1 h 0 min 1 s");
        assert_eq!(seconds(90_000_000_000_000), "1 d 1 h");
        // The longest trial a plan holds: 2^53 − 1 ns.
        assert_eq!(seconds((1 << 53) - 1), "104 d 5 h 59 min 59 s");
        // A hand-edited plan's longest trial.
        assert_eq!(seconds(u64::MAX), "213503 d 23 h 34 min 33 s");
    }

    #[test]
    fn long_totals_are_counted_in_years() {
        assert_eq!(long_span(3_600_000_000_000), "1 h");
        assert_eq!(long_span(YEAR_NS), "365 d 6 h");
        assert_eq!(long_span(5 * YEAR_NS / 2), "2.5 years");
        // A million trials of 2^53 − 1 ns each.
        assert_eq!(long_span(((1u128 << 53) - 1) * 1_000_000), "285,420 years");
        assert_eq!(long_span(u128::MAX), "1.1e22 years");
    }
}
