//! Which figures of a report a claim is about: for each statistic the claim
//! reads (both sides of a comparison, the statistic of a trend), the figure
//! that plots its workload's metric — the distribution or time-series
//! figure of that kind of workload — and the sweep or repetitions figure of
//! the trial metric of the same name. The HTML page links each claim to
//! these figures and shows the claim under each of them.
//!
//! Figures are found by id among those the run has, so a claim whose
//! metric no figure plots (no monitor for an anomaly's memory, one
//! repetition without sweep for a trial metric) has none, and the page
//! says so.

use exp_plan::claims::{Claim, ClaimKind, Stat, StatFn, Term};

use crate::figures::{figure_id, Figure};

/// The ids of the figures among `figures` that `claim` is about, in the
/// order of its statistics, each once.
pub fn figures_of(claim: &Claim, figures: &[Figure]) -> Vec<String> {
    let parameter = match &claim.kind {
        ClaimKind::Trend { parameter, .. } => Some(parameter.as_str()),
        _ => None,
    };
    let mut ids: Vec<String> = Vec::new();
    for stat in stats(claim) {
        for id in kind_figures(stat, figures)
            .into_iter()
            .chain(trial_metric_figures(stat, parameter, figures))
        {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

/// The statistics a claim reads; constants have none.
fn stats(claim: &Claim) -> Vec<&Stat> {
    fn scaled(term: &Term) -> Option<&Stat> {
        match term {
            Term::Scaled { stat, .. } => Some(stat),
            Term::Constant { .. } => None,
        }
    }
    // `if let` rather than a `match`: a kind of claim added later links to
    // no figure until it is taught here, instead of failing to build.
    if let ClaimKind::Compare { left, right, .. } | ClaimKind::Within { left, right, .. } = &claim.kind {
        [left, right].into_iter().filter_map(scaled).collect()
    } else if let ClaimKind::Trend { stat, .. } = &claim.kind {
        vec![stat]
    } else {
        Vec::new()
    }
}

/// The figure of the statistic's workload kind that plots its metric: the
/// first of the families it prefers that the run has, with every figure of
/// that family (a per-trial figure is drawn for several trials).
fn kind_figures(stat: &Stat, figures: &[Figure]) -> Vec<String> {
    let workload = figure_id(&stat.workload);
    let families: Vec<String> = match (stat.kind.as_str(), stat.metric.as_str(), &stat.function) {
        ("fleet", "ack_latency", _) if stat.phase.is_some() => {
            vec!["fleet-ack-latency-by-phase-cdf".into(), "fleet-ack-latency-cdf".into()]
        }
        ("fleet", "ack_latency", _) => vec!["fleet-ack-latency-cdf".into()],
        ("fleet", "delivery_latency", _) => vec!["fleet-delivery-latency-cdf".into()],
        ("fleet", "send_lateness", _) => vec![format!("fleet-gaps-{workload}")],
        ("fleet", _, StatFn::Loss) => vec!["fleet-throughput-trial".into()],
        ("traffic", "duration", _) => vec!["traffic-connection-duration-cdf".into()],
        ("traffic", "response_time", _) => vec!["traffic-response-time-cdf".into()],
        ("traffic", _, StatFn::Failures) => vec!["traffic-active-connections-trial".into()],
        ("anomaly", "achieved_utilization" | "cpu_time", _) => vec!["cpu-trial".into()],
        ("anomaly", "peak_rss", _) => vec!["memory-trial".into()],
        ("xml", _, StatFn::MaxKs | StatFn::MaxTv) => vec!["xml-path-distances".into()],
        ("xml", "document_size", _) => vec![format!("xml-structure-{workload}-document-size")],
        _ => Vec::new(),
    };
    families
        .iter()
        .map(|family| {
            figures
                .iter()
                .filter(|f| f.id == *family || f.id.starts_with(&format!("{family}-")))
                .map(|f| f.id.clone())
                .collect::<Vec<_>>()
        })
        .find(|found| !found.is_empty())
        .unwrap_or_default()
}

/// The sweep figures (against the trend's parameter, for a trend) or the
/// repetitions figure of the trial metric that summarises the statistic:
/// `ack_latency_p99` for `p99(… ack_latency)` if the run has it, else the
/// metric's own name (`value(hog.operations)`: `hog.operations`).
fn trial_metric_figures(stat: &Stat, parameter: Option<&str>, figures: &[Figure]) -> Vec<String> {
    let metric = match &stat.function {
        StatFn::Loss => "messages_lost".to_string(),
        StatFn::Failures => "failed_connections".to_string(),
        _ => stat.metric.clone(),
    };
    if metric.is_empty() {
        return Vec::new();
    }
    let quantile = match &stat.function {
        StatFn::Median => Some(0.5),
        StatFn::Quantile { q } => Some(*q),
        _ => None,
    };
    let names = quantile
        // 0.99 → `p99`, 0.999 → `p999`: the percent to a tenth, without its point.
        .map(|q| {
            format!(
                "{metric}_p{}",
                format!("{}", (q * 1000.0).round() / 10.0).replace('.', "")
            )
        })
        .into_iter()
        .chain([metric]);
    let parameter = parameter.map(figure_id);
    names
        .map(|name| figure_id(&format!("{}.{name}", stat.workload)))
        .map(|key| {
            figures
                .iter()
                .filter(|f| {
                    let swept =
                        f.id.strip_prefix(&format!("sweep-{key}-by-"))
                            .is_some_and(|by| parameter.as_deref().is_none_or(|p| by == p));
                    swept || f.id == format!("repetitions-{key}")
                })
                .map(|f| f.id.clone())
                .collect::<Vec<_>>()
        })
        .find(|found| !found.is_empty())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::chart::{Axis, Chart};
    use exp_plan::claims::{CmpOp, Direction, Phase, PhaseRelation};
    use exp_plan::{Origin, Unit};

    fn figure(id: &str) -> Figure {
        Figure {
            id: id.into(),
            chart: Chart {
                title: id.into(),
                x: Axis::linear("x"),
                y: Axis::linear("y"),
                series: Vec::new(),
                bands: Vec::new(),
            },
            caption: String::new(),
        }
    }

    fn stat(function: StatFn, workload: &str, kind: &str, metric: &str) -> Stat {
        Stat {
            function,
            workload: workload.into(),
            kind: kind.into(),
            metric: metric.into(),
            phase: None,
            points: Vec::new(),
            unit: Unit::Ns,
        }
    }

    fn claim(kind: ClaimKind) -> Claim {
        Claim {
            text: "a claim".into(),
            group: None,
            origin: Origin {
                file: "spec.exp".into(),
                line: 1,
                column: 1,
            },
            kind,
            abort: None,
        }
    }

    fn compare(left: Stat, right: Term) -> Claim {
        claim(ClaimKind::Compare {
            left: Term::Scaled {
                factor: 1.0,
                stat: left,
            },
            op: CmpOp::Gt,
            right,
        })
    }

    #[test]
    fn a_comparison_links_both_sides_figures_each_once() {
        let figures: Vec<Figure> = [
            "fleet-ack-latency-cdf",
            "fleet-ack-latency-by-phase-cdf",
            "cpu-trial-0",
            "cpu-trial-1",
            "memory-trial-0",
            "repetitions-hog-achieved-utilization",
        ]
        .map(figure)
        .into();
        let mut during = stat(StatFn::Quantile { q: 0.99 }, "sensors", "fleet", "ack_latency");
        during.phase = Some(Phase {
            relation: PhaseRelation::During,
            anomaly: "hog".into(),
        });
        let utilization = stat(StatFn::Median, "hog", "anomaly", "achieved_utilization");
        let both = compare(
            during,
            Term::Scaled {
                factor: 2.0,
                stat: utilization,
            },
        );
        assert_eq!(
            figures_of(&both, &figures),
            [
                "fleet-ack-latency-by-phase-cdf",
                "cpu-trial-0",
                "cpu-trial-1",
                "repetitions-hog-achieved-utilization"
            ]
        );
        // Without a phase, the CDF of all messages; a constant has no figure.
        let threshold = compare(
            stat(StatFn::Quantile { q: 0.99 }, "sensors", "fleet", "ack_latency"),
            Term::Constant {
                value: 1.0,
                unit: Unit::Ns,
                time_scaled: false,
            },
        );
        assert_eq!(figures_of(&threshold, &figures), ["fleet-ack-latency-cdf"]);
    }

    #[test]
    fn a_trend_links_the_sweep_figure_of_its_parameter_and_quantile() {
        let figures: Vec<Figure> = [
            "sweep-sensors-ack-latency-p99-by-devices",
            "sweep-sensors-ack-latency-p99-by-size",
            "sweep-sensors-ack-latency-by-devices",
        ]
        .map(figure)
        .into();
        let trend = claim(ClaimKind::Trend {
            stat: stat(StatFn::Quantile { q: 0.99 }, "sensors", "fleet", "ack_latency"),
            direction: Direction::Increases,
            parameter: "devices".into(),
        });
        assert_eq!(
            figures_of(&trend, &figures),
            ["sweep-sensors-ack-latency-p99-by-devices"]
        );
    }

    #[test]
    fn a_metric_no_figure_plots_links_nothing() {
        let figures: Vec<Figure> = ["fleet-ack-latency-cdf", "repetitions-leak-operations"]
            .map(figure)
            .into();
        let rss = compare(
            stat(StatFn::Median, "leak", "anomaly", "peak_rss"),
            Term::Constant {
                value: 1.0,
                unit: Unit::Bytes,
                time_scaled: false,
            },
        );
        assert!(figures_of(&rss, &figures).is_empty());
        let operations = compare(
            stat(StatFn::Value, "leak", "anomaly", "operations"),
            Term::Constant {
                value: 1.0,
                unit: Unit::Count,
                time_scaled: false,
            },
        );
        assert_eq!(figures_of(&operations, &figures), ["repetitions-leak-operations"]);
    }
}
