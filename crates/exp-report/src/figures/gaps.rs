//! Achieved gaps against the target: per fleet and sweep point, the CDF of
//! the time between a device's consecutive sends beside the CDF of the gap
//! distribution the plan asked for. The gaps are those of the text
//! report's gap accuracy (`mqtt/gaps.rs`: warm-up and unsent messages
//! left out), gathered into a log histogram.

use std::collections::BTreeMap;
use std::path::Path;

use exp_results::schemas::MESSAGES_TABLE;
use exp_stats::Sampler;

use super::chart::{Axis, Chart, Marks, Series};
use super::{Context, Figure, MAX_TIMELINES};
use crate::mqtt::achieved::achieved;
use crate::mqtt::gaps::GapTarget;
use crate::mqtt::plan::read_plan;
use crate::sketch::LogHistogram;
use crate::ReportError;

const NS_PER_MS: f64 = 1e6;

pub(super) fn figures(ctx: &Context) -> Result<Vec<Figure>, ReportError> {
    let Some(table) = ctx.run.tables.get(MESSAGES_TABLE) else {
        return Ok(Vec::new());
    };
    let plan = read_plan(&ctx.run.dir, &mut Vec::new());
    // Partitions are sized for the whole table: at most a few more passes.
    let total = ctx.run.manifest.tables.get(MESSAGES_TABLE).map_or(0, |t| t.rows);
    let mut groups: BTreeMap<(String, String), (LogHistogram, Option<GapTarget>)> = BTreeMap::new();
    for (&trial, parts) in &table.trials {
        let point = ctx.record(trial).map_or(0, |t| t.point);
        let files: Vec<&Path> = parts.iter().map(|p| p.path.as_path()).collect();
        let mut gaps = match achieved(&files, total, &|_| 0) {
            Ok(gaps) => gaps,
            Err((index, error)) => {
                ctx.warn(files[index], &error);
                continue;
            }
        };
        for (fleet, values) in gaps.iter_mut() {
            let key = (ctx.point_label(trial), fleet.to_string());
            let entry = groups.entry(key).or_insert_with(|| {
                let target = plan.as_ref().and_then(|p| p.gap_target(point, fleet));
                (LogHistogram::default(), target)
            });
            values.iter().for_each(|&g| entry.0.add(g));
        }
    }
    Ok(groups
        .into_iter()
        .filter(|(_, (h, _))| !h.is_empty())
        .take(MAX_TIMELINES)
        .map(|((point, fleet), (achieved, target))| figure(&point, &fleet, &achieved, target.as_ref()))
        .collect())
}

fn figure(point: &str, fleet: &str, achieved: &LogHistogram, target: Option<&GapTarget>) -> Figure {
    let cdf: Vec<(f64, f64)> = achieved.cdf().into_iter().map(|(v, f)| (v / NS_PER_MS, f)).collect();
    let mut series = Vec::new();
    if let Some(sampler) = target.and_then(|t| Sampler::new(&t.gap).ok()) {
        // The target's CDF over the achieved range, log-spaced.
        let (lo, hi) = (cdf.first().map_or(1.0, |p| p.0), cdf.last().map_or(1.0, |p| p.0));
        let points = (0..=200)
            .map(|i| lo * (hi / lo).powf(f64::from(i) / 200.0))
            .map(|x| (x, sampler.cdf(x * NS_PER_MS)))
            .collect();
        series.push(Series {
            name: "target".into(),
            marks: Marks::Line(points),
        });
    }
    series.insert(
        0,
        Series {
            name: "achieved".into(),
            marks: Marks::Steps(cdf),
        },
    );
    let (at, id) = if point.is_empty() {
        (String::new(), format!("fleet-gaps-{fleet}"))
    } else {
        (format!(", {point}"), format!("fleet-gaps-{fleet}-{point}"))
    };
    Figure::new(
        id,
        Chart {
            title: format!("Gaps of {fleet}{at}"),
            x: Axis::log("gap between a device's sends (ms)"),
            y: Axis::linear("fraction of gaps").with_range(0.0..1.0),
            series,
            bands: Vec::new(),
        },
        "CDF of the achieved gaps (a device's consecutive sends, warm-up left out) and of the gap \
         distribution the plan asked for."
            .into(),
    )
}
