//! One value of a statistic per trial, from that trial's stored rows (or,
//! for `value(…)`, its metric in the manifest), and the trials that count.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use exp_plan::claims::{Stat, StatFn};
use exp_plan::Plan;
use exp_plan::{display_quantity, RangeUnit};
use exp_results::schemas::{CONNECTIONS_TABLE, GENERATION_TABLE, MESSAGES_TABLE, THROUGHPUT_TABLE};
use exp_results::validity::LeftOut;
use exp_results::{ResultsError, RunView, TrialStatus, Warning};

use crate::rows::{self, PhaseWindows};

/// The trials a claim counts: complete ones, invalid ones left out unless
/// asked for (as every aggregate does, `exp_results::validity::counts`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Counted {
    /// Point → its counted trials, ascending.
    pub by_point: BTreeMap<u32, Vec<u32>>,
    pub left_out: LeftOut,
}

impl Counted {
    pub fn of(run: &RunView, include_invalid: bool) -> Counted {
        let mut counted = Counted::default();
        for t in run.manifest.trials.iter().filter(|t| t.status == TrialStatus::Complete) {
            if counted.left_out.note(t, include_invalid) {
                counted.by_point.entry(t.point).or_default().push(t.trial);
            }
        }
        counted
    }
}

/// Reads and remembers statistics per trial, so that claims sharing a
/// statistic (and `until_decided`, which asks again after each
/// repetition) read a trial's rows once.
pub(crate) struct Values<'r> {
    run: &'r RunView,
    cache: HashMap<(u32, String), Option<f64>>,
    pub warnings: Vec<Warning>,
}

impl<'r> Values<'r> {
    pub fn new(run: &'r RunView) -> Self {
        Values {
            run,
            cache: HashMap::new(),
            warnings: Vec::new(),
        }
    }

    /// `stat` in `trial`, `None` when the trial has no rows for it (or its
    /// rows could not be read: warned about).
    pub fn get(&mut self, trial: u32, stat: &Stat) -> Option<f64> {
        let key = (trial, format!("{stat:?}"));
        if let Some(&v) = self.cache.get(&key) {
            return v;
        }
        let value = match self.compute(trial, stat) {
            Ok(v) => v,
            Err(e) => {
                self.warnings.push(Warning {
                    path: self.run.dir.join("tables"),
                    message: format!("trial {trial} left out of `{}`: {e}", stat_name(stat)),
                });
                None
            }
        };
        self.cache.insert(key, value);
        value
    }

    fn files(&self, table: &str, trial: u32) -> Vec<PathBuf> {
        rows::files(self.run, table, trial)
    }

    fn compute(&self, trial: u32, stat: &Stat) -> Result<Option<f64>, ResultsError> {
        let phase = match &stat.phase {
            Some(phase) => match PhaseWindows::read(self.run, trial, phase)? {
                Some(windows) => Some(windows),
                // The anomaly never ran in this trial: no row is in its phase.
                None => return Ok(None),
            },
            None => None,
        };
        let ratio = |(total, failed): (u64, u64)| (total > 0).then(|| failed as f64 / total as f64);
        match &stat.function {
            StatFn::Value => {
                let record = self.run.manifest.trials.iter().find(|t| t.trial == trial);
                let key = format!("{}.{}", stat.workload, stat.metric);
                Ok(record
                    .and_then(|r| r.metrics.get(&key))
                    .copied()
                    .filter(|v| v.is_finite()))
            }
            StatFn::Loss => Ok(ratio(rows::failures(
                &self.files(MESSAGES_TABLE, trial),
                true,
                &stat.workload,
                phase.as_ref(),
            )?)),
            StatFn::Failures => Ok(ratio(rows::failures(
                &self.files(CONNECTIONS_TABLE, trial),
                false,
                &stat.workload,
                phase.as_ref(),
            )?)),
            StatFn::MaxKs => rows::generation(&self.files(GENERATION_TABLE, trial), "max_ks", &stat.workload),
            StatFn::MaxTv => rows::generation(
                &self.files(GENERATION_TABLE, trial),
                "max_total_variation",
                &stat.workload,
            ),
            function if stat.kind == "traffic" && stat.metric == "window_throughput" => {
                let paths = self.files(THROUGHPUT_TABLE, trial);
                Ok(of_rows(
                    function,
                    rows::window_throughputs(&paths, &stat.workload, phase.as_ref())?,
                ))
            }
            function => {
                let Some(metric) = rows::row_metric(&stat.kind, &stat.metric) else {
                    return Ok(None);
                };
                let values = rows::values(
                    &self.files(metric.table, trial),
                    &metric,
                    &stat.workload,
                    phase.as_ref(),
                )?;
                Ok(of_rows(function, values))
            }
        }
    }
}

/// A statistic of one trial's row values; `None` without rows.
pub(crate) fn of_rows(function: &StatFn, mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    match *function {
        StatFn::Mean => Some(values.iter().sum::<f64>() / n),
        StatFn::Median => exp_stats::percentile(&values, 0.5),
        StatFn::Quantile { q } => exp_stats::percentile(&values, q),
        StatFn::Min => values.first().copied(),
        StatFn::Max => values.last().copied(),
        StatFn::Stddev => stddev(&values),
        StatFn::Cv => {
            let mean = values.iter().sum::<f64>() / n;
            stddev(&values).filter(|_| mean > 0.0).map(|sd| sd / mean)
        }
        StatFn::Range => Some(values[values.len() - 1] - values[0]),
        StatFn::MaxOverMin => (values[0] > 0.0).then(|| values[values.len() - 1] / values[0]),
        StatFn::Share { op, threshold } => Some(values.iter().filter(|v| op.holds(**v, threshold)).count() as f64 / n),
        StatFn::Value | StatFn::Loss | StatFn::Failures | StatFn::MaxKs | StatFn::MaxTv => None,
    }
}

/// The sample standard deviation (n − 1); `None` below two values.
fn stddev(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let squares: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    Some((squares / (n - 1) as f64).sqrt())
}

/// `p99(fleet.s.ack_latency)`, as reports name a statistic.
pub(crate) fn stat_name(stat: &Stat) -> String {
    let function = match &stat.function {
        StatFn::Mean => "mean".to_string(),
        StatFn::Median => "median".to_string(),
        StatFn::Quantile { q } => format!("p{}", format_quantile(*q)),
        StatFn::Min => "min".to_string(),
        StatFn::Max => "max".to_string(),
        StatFn::Stddev => "stddev".to_string(),
        StatFn::Cv => "cv".to_string(),
        StatFn::Range => "range".to_string(),
        StatFn::MaxOverMin => "max_over_min".to_string(),
        StatFn::Share { op, threshold } => {
            return format!(
                "share({} {} {})",
                metric_path(stat),
                op.as_str(),
                threshold_text(stat, *threshold)
            )
        }
        StatFn::Value => "value".to_string(),
        StatFn::Loss => return format!("loss({}.{})", stat.kind, stat.workload),
        StatFn::Failures => return format!("failures({}.{})", stat.kind, stat.workload),
        StatFn::MaxKs => return format!("max_ks({}.{})", stat.kind, stat.workload),
        StatFn::MaxTv => return format!("max_tv({}.{})", stat.kind, stat.workload),
    };
    format!("{function}({})", metric_path(stat))
}

/// `fleet.s.ack_latency`; the monitor's metrics as `monitor.cpu_user_pct`.
fn metric_path(stat: &Stat) -> String {
    match stat.kind.as_str() {
        "monitor" => format!("monitor.{}", stat.metric),
        kind => format!("{kind}.{}.{}", stat.workload, stat.metric),
    }
}

/// A share's threshold as the spec writes it (`500ms`, `90%`), in the unit
/// of the metric's column.
fn threshold_text(stat: &Stat, threshold: f64) -> String {
    let unit = match rows::row_metric(&stat.kind, &stat.metric) {
        Some(m) if m.column.ends_with("_ns") => RangeUnit::Duration,
        Some(m) if m.column.ends_with("_pct") => RangeUnit::Percent,
        Some(m) if m.column.ends_with("_bytes") => RangeUnit::Size,
        _ => RangeUnit::Float,
    };
    display_quantity(unit, threshold)
}

/// 0.99 → `99`, 0.999 → `999`, 0.5 → `50`.
fn format_quantile(q: f64) -> String {
    let percent = format!("{}", (q * 1000.0).round() / 10.0);
    percent.replace('.', "")
}

/// What evaluating a plan's claims reads (evaluate.rs, compare.rs): the
/// plan, each trial's values, the trials that count, the bootstrap's seed.
pub(crate) struct Context<'a, 'r> {
    pub plan: &'a Plan,
    /// The run's `--time-scale`, which `scaled(…)` constants follow.
    pub time_scale: f64,
    pub values: Values<'r>,
    pub counted: Counted,
    pub seed: u64,
    /// Only the frames reading this point (`until_decided`); trends, which
    /// need every point, are then left out.
    pub only: Option<u32>,
}

impl Context<'_, '_> {
    /// (trial, value) of `stat` over the counted trials of `point` that have one.
    pub fn sample(&mut self, stat: &Stat, point: u32) -> Vec<(u32, f64)> {
        let trials = self.counted.by_point.get(&point).cloned().unwrap_or_default();
        trials
            .into_iter()
            .filter_map(|t| self.values.get(t, stat).map(|v| (t, v)))
            .collect()
    }
}
