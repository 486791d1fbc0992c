//! What claims may say: the statistics they apply and the unit of each
//! trial metric (row metrics carry theirs in [`super::RowMetric`]).

use exp_plan::Unit;
use exp_syntax::units::Dimension;

/// What a statistic applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// A row metric, summarised per trial (`p99(ack_latency)`).
    Rows,
    /// A row metric with a condition: the share of rows meeting it.
    Share,
    /// A trial metric's value (`value(throughput)`).
    Trial,
    /// A workload of this kind itself (`loss(fleet.sensors)`).
    Workload(&'static str),
}

/// A statistic of claims: name, what it applies to, and what it computes.
#[derive(Debug, Clone, Copy)]
pub struct Statistic {
    pub name: &'static str,
    pub applies: Applies,
    pub doc: &'static str,
}

const fn stat(name: &'static str, applies: Applies, doc: &'static str) -> Statistic {
    Statistic { name, applies, doc }
}

/// Every statistic; quantiles are `p` and two digits (percent) or `p999`, `p9999`.
pub const STATISTICS: &[Statistic] = &[
    stat("mean", Applies::Rows, "The mean of the trial's rows."),
    stat("median", Applies::Rows, "The median of the trial's rows."),
    stat("min", Applies::Rows, "The least value of the trial's rows."),
    stat("max", Applies::Rows, "The largest value of the trial's rows."),
    stat(
        "p50",
        Applies::Rows,
        "The 50th percentile of the trial's rows (any `pNN`, `p999`, `p9999`).",
    ),
    stat("p90", Applies::Rows, "The 90th percentile of the trial's rows."),
    stat("p95", Applies::Rows, "The 95th percentile of the trial's rows."),
    stat("p99", Applies::Rows, "The 99th percentile of the trial's rows."),
    stat("p999", Applies::Rows, "The 99.9th percentile of the trial's rows."),
    stat(
        "stddev",
        Applies::Rows,
        "The sample standard deviation of the trial's rows (n − 1), in the metric's unit.",
    ),
    stat(
        "cv",
        Applies::Rows,
        "The coefficient of variation of the trial's rows: standard deviation over mean (a ratio).",
    ),
    stat(
        "range",
        Applies::Rows,
        "The largest of the trial's rows minus the smallest, in the metric's unit.",
    ),
    stat(
        "max_over_min",
        Applies::Rows,
        "The largest of the trial's rows over the smallest (a plain number).",
    ),
    stat(
        "share",
        Applies::Share,
        "The share of the trial's rows meeting a condition: `share(duration < 500ms)`.",
    ),
    stat(
        "value",
        Applies::Trial,
        "A trial metric's value: `value(fleet.sensors.throughput)`.",
    ),
    stat(
        "loss",
        Applies::Workload("fleet"),
        "Lost messages over scheduled messages of a fleet.",
    ),
    stat(
        "failures",
        Applies::Workload("traffic"),
        "Failed connections over connections of a traffic workload.",
    ),
    stat(
        "max_ks",
        Applies::Workload("xml"),
        "The largest Kolmogorov–Smirnov distance over an xml set's paths, against the corpus.",
    ),
    stat(
        "max_tv",
        Applies::Workload("xml"),
        "The largest total-variation distance over an xml set's paths, against the corpus.",
    ),
];

/// The statistic `name`; a quantile `pNN`, `p999` or `p9999` with its level.
pub fn statistic(name: &str) -> Option<(Statistic, Option<f64>)> {
    if let Some(found) = STATISTICS.iter().find(|s| s.name == name) {
        return Some((*found, quantile(name)));
    }
    let q = quantile(name)?;
    Some((stat("p", Applies::Rows, "A percentile of the trial's rows."), Some(q)))
}

/// `p01` … `p99` as hundredths; `p999`, `p9999` as 0.999, 0.9999.
fn quantile(name: &str) -> Option<f64> {
    let digits = name.strip_prefix('p')?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match digits {
        "00" => None,
        d if d.len() == 2 => d.parse::<f64>().ok().map(|n| n / 100.0),
        "999" => Some(0.999),
        "9999" => Some(0.9999),
        _ => None,
    }
}

/// The plan's unit of a dimension (`None`: a plain number).
pub fn unit(dimension: Option<Dimension>) -> Unit {
    match dimension {
        Some(Dimension::Duration) => Unit::Ns,
        Some(Dimension::Bytes) => Unit::Bytes,
        Some(Dimension::Bandwidth) => Unit::BitPerS,
        Some(Dimension::Rate) => Unit::PerS,
        Some(Dimension::Percent) => Unit::Ratio,
        None => Unit::Count,
    }
}

/// The unit of trial metric `metric` of a `kind` workload (the names in
/// its `metrics`, as the runtime reports them).
pub fn trial_metric_unit(kind: &str, metric: &str) -> Unit {
    let timed = ["latency", "lateness", "duration", "response_time"];
    match (kind, metric) {
        (_, "outage" | "runner_cpu_per_message") => Unit::Ns,
        (_, m) if timed.iter().any(|t| m.contains(t)) => Unit::Ns,
        (_, "runner_rss_per_device" | "bytes_touched" | "document_size") => Unit::Bytes,
        (_, "runner_cpu_ratio" | "achieved_utilization" | "duplicate_rate") => Unit::Ratio,
        ("fleet", "throughput") => Unit::PerS,
        ("traffic", "throughput") => Unit::BitPerS,
        // xml's throughput is MB/s, a plain number; counts and divergences.
        _ => Unit::Count,
    }
}

/// How a unit reads in messages, with an example constant.
pub fn describe_unit(unit: Unit) -> &'static str {
    match unit {
        Unit::Ns => "a duration (e.g. `25ms`)",
        Unit::Bytes => "a size (e.g. `4KiB`)",
        Unit::BitPerS => "a bandwidth (e.g. `10Mbit/s`)",
        Unit::PerS => "a rate (e.g. `100/s`)",
        Unit::Ratio | Unit::Count => "a plain number or a percentage",
    }
}

/// The unit as a word: "a duration", "a ratio", ….
pub fn unit_word(unit: Unit) -> &'static str {
    match unit {
        Unit::Ns => "a duration",
        Unit::Bytes => "a size",
        Unit::BitPerS => "a bandwidth",
        Unit::PerS => "a rate",
        Unit::Ratio => "a ratio",
        Unit::Count => "a number",
    }
}

/// Whether values of the two units compare: the same dimension, plain
/// numbers and ratios being one.
pub fn compatible(a: Unit, b: Unit) -> bool {
    let plain = |u: Unit| matches!(u, Unit::Ratio | Unit::Count);
    a == b || (plain(a) && plain(b))
}
