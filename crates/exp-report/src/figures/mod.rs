//! Figures of a run: per workload kind the seeds' figures, built from the
//! run's tables in bounded memory and drawn as SVG (`chart.rs`).
//!
//! [`figures`] looks at which tables the run has and asks each kind's
//! module for its figures; a [`Context`] gives them the run's trials, their
//! labels, the anomaly windows to shade and chunked reading. Time series
//! are drawn for the first [`MAX_TIMELINES`] trials of a table; CDFs and
//! sweep figures cover every trial.

mod anomaly;
pub mod chart;
mod fleet;
mod frame;
mod gaps;
mod legend;
mod sweep;
mod traffic;
mod xml;
mod xml_structure;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use exp_plan::Plan;
use exp_results::schemas::TIMELINE_TABLE;
use exp_results::{PartFile, ResultsError, RunView, TrialRecord, Warning};

pub(crate) use crate::aggregate::{metric_kind, shown_metric};
pub use crate::aggregate::{sweep_table, PointMetric, SweepTable, CONFIDENCE};
use crate::part_chunks::{for_each_chunk, Chunk};
use crate::ReportError;
use chart::{Band, Chart};

/// Trials whose time series are drawn, per table.
pub const MAX_TIMELINES: usize = 6;
/// Seconds of a trial a per-second series covers (a day).
const MAX_SECONDS: usize = 86_400;

/// One figure: its chart and a caption saying what it shows.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File-name-safe and unique within a report (`fleet-ack-latency-cdf`).
    pub id: String,
    pub chart: Chart,
    pub caption: String,
}

impl Figure {
    fn new(id: String, chart: Chart, caption: String) -> Figure {
        Figure {
            id: figure_id(&id),
            chart,
            caption,
        }
    }

    pub fn svg(&self) -> Result<String, ReportError> {
        Ok(self.chart.to_svg()?)
    }
}

/// `text` as (part of) a figure's id: ASCII letters, digits and `-`, every
/// other character a `-` (`hog.achieved_utilization`: `hog-achieved-utilization`).
pub fn figure_id(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' })
        .collect()
}

/// Every figure the run's tables allow, in a fixed order: sweeps, fleets,
/// traffic, system metrics, XML; and a warning for each file that could not
/// be read, which the figures leave out from where it failed. Sweep figures
/// leave invalid trials out unless `include_invalid`.
pub fn figures(
    run: &RunView,
    plan: Option<&Plan>,
    include_invalid: bool,
) -> Result<(Vec<Figure>, Vec<Warning>), ReportError> {
    let ctx = Context::new(run)?;
    let mut out = Vec::new();
    if let Some(plan) = plan {
        out.extend(sweep::figures(&run.manifest, plan, include_invalid));
    }
    out.extend(fleet::figures(&ctx)?);
    out.extend(gaps::figures(&ctx)?);
    out.extend(traffic::figures(&ctx)?);
    out.extend(anomaly::figures(&ctx)?);
    out.extend(xml::figures(&ctx)?);
    // A figure whose every value is NaN or off its axes has nothing to show.
    out.retain(|f| f.chart.ranges().is_some());
    Ok((out, ctx.warnings.into_inner()))
}

/// A trial's sweep point by its parameters' labels (`devices=4000,
/// size=2KiB`), empty without a sweep: how runs and tables name points.
pub fn point_label(trial: &TrialRecord) -> String {
    let labels: Vec<String> = trial.sweep.iter().map(|(k, v)| format!("{k}={v}")).collect();
    labels.join(", ")
}

/// What the kinds' modules need of the run.
pub(crate) struct Context<'a> {
    pub run: &'a RunView,
    windows: BTreeMap<u32, Vec<Band>>,
    warnings: RefCell<Vec<Warning>>,
}

impl<'a> Context<'a> {
    fn new(run: &'a RunView) -> Result<Self, ReportError> {
        let mut ctx = Context {
            run,
            windows: BTreeMap::new(),
            warnings: RefCell::new(Vec::new()),
        };
        let mut windows: BTreeMap<u32, Vec<Band>> = BTreeMap::new();
        for (&trial, parts) in run.tables.get(TIMELINE_TABLE).map(|t| &t.trials).into_iter().flatten() {
            for part in parts {
                ctx.each_chunk(
                    &part.path,
                    &["instance", "actual_start_ns"],
                    &["actual_end_ns", "kind", "ground_truth"],
                    |c| {
                        let (instance, kind) = (c.str("instance")?, c.str_or_null("kind")?);
                        // Runs from before audits have no such column: their windows stand.
                        let ground_truth = c.bool_or("ground_truth", true)?;
                        let (start, end) = (c.u64("actual_start_ns")?, c.u64_or_null("actual_end_ns")?);
                        for i in 0..c.height() {
                            let Some(start) = start.get(i) else { continue };
                            let label = match (instance.get(i), kind.get(i)) {
                                (Some(n), Some(k)) if n != k => format!("{n} ({k})"),
                                (n, k) => n.or(k).unwrap_or("anomaly").to_string(),
                            };
                            let label = if ground_truth.get(i).copied().unwrap_or(true) {
                                label
                            } else {
                                format!("{label}: no work, not ground truth")
                            };
                            // An activation still running at the end has no end: it
                            // lasts to the trial's end, drawn to the last sample.
                            let end = end.get(i).map_or(f64::NAN, |e| e as f64 / 1e9);
                            windows.entry(trial).or_default().push(Band {
                                start: start as f64 / 1e9,
                                end,
                                label,
                            });
                        }
                        Ok(())
                    },
                )?;
            }
        }
        ctx.windows = windows;
        Ok(ctx)
    }

    /// The manifest's record of `trial`.
    pub fn record(&self, trial: u32) -> Option<&'a TrialRecord> {
        self.run.manifest.trials.iter().find(|t| t.trial == trial)
    }

    /// `devices=4000, size=2KiB`, or empty without a sweep.
    pub fn point_label(&self, trial: u32) -> String {
        self.record(trial).map_or_else(String::new, point_label)
    }

    /// `trial 3 (devices=4000, repetition 1)`.
    pub fn trial_label(&self, trial: u32) -> String {
        let point = self.point_label(trial);
        let repetition = self.record(trial).map(|t| t.repetition);
        match (point.is_empty(), repetition) {
            (true, Some(r)) if r > 0 => format!("trial {trial} (repetition {r})"),
            (true, _) => format!("trial {trial}"),
            (false, Some(r)) => format!("trial {trial} ({point}, repetition {r})"),
            (false, None) => format!("trial {trial} ({point})"),
        }
    }

    /// The anomaly windows of `trial`, in seconds of the trial clock.
    pub fn windows(&self, trial: u32) -> Vec<Band> {
        self.windows.get(&trial).cloned().unwrap_or_default()
    }

    /// Every part file of `table`, trial by trial.
    pub fn parts(&self, table: &str) -> impl Iterator<Item = &'a PartFile> + 'a {
        self.run
            .tables
            .get(table)
            .into_iter()
            .flat_map(|t| t.trials.values().flatten())
    }

    pub fn trial_parts(&self, table: &str, trial: u32) -> &'a [PartFile] {
        self.run
            .tables
            .get(table)
            .and_then(|t| t.trials.get(&trial))
            .map_or(&[], Vec::as_slice)
    }

    /// The parts of `table`'s first trial (for tables every trial fills
    /// alike, such as an XML comparison with the same corpus).
    pub fn first_trial_parts(&self, table: &str) -> &'a [PartFile] {
        self.run
            .tables
            .get(table)
            .and_then(|t| t.trials.values().next())
            .map_or(&[], Vec::as_slice)
    }

    /// The trials whose time series of `table` are drawn.
    pub fn timeline_trials(&self, table: &str) -> Vec<u32> {
        self.run
            .tables
            .get(table)
            .map_or_else(Vec::new, |t| t.trials.keys().copied().take(MAX_TIMELINES).collect())
    }

    /// Notes that `path` could not be read (as far as it was read, its rows
    /// are in the figures).
    pub fn warn(&self, path: &Path, error: &dyn std::fmt::Display) {
        self.warnings.borrow_mut().push(Warning {
            path: path.to_path_buf(),
            message: format!("{error}; the figures leave out the rest of this file"),
        });
    }

    /// Calls `each` with the chunks of `path`; a file that fails to read is
    /// a warning, not an error.
    pub fn each_chunk(
        &self,
        path: &Path,
        required: &[&str],
        optional: &[&str],
        each: impl FnMut(&Chunk) -> Result<(), ResultsError>,
    ) -> Result<(), ReportError> {
        if let Err(error) = for_each_chunk(path, required, optional, each) {
            self.warn(path, &error);
        }
        Ok(())
    }
}
