//! XML synthesis figures from `xml_paths`: how often each path occurs in
//! the corpus against the generated documents (the structure-frequency
//! comparison; on the diagonal when the structure was kept), and each
//! path's distance between original and synthetic values, worst first.
//! The run keeps distances, not values: value histograms need the corpus.

use std::collections::BTreeMap;

use super::chart::{Axis, Chart, Marks, Series};
use super::{Context, Figure};
use crate::ReportError;

const PATHS: &str = "xml_paths";

pub(super) fn figures(ctx: &Context) -> Result<Vec<Figure>, ReportError> {
    let mut occurrences: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut distances: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for part in ctx.parts(PATHS) {
        let required = [
            "workload",
            "original_occurrences",
            "synthetic_occurrences",
            "metric",
            "value",
        ];
        ctx.each_chunk(&part.path, &required, &[], |c| {
            let (workload, metric) = (c.str("workload")?, c.str("metric")?);
            let (original, synthetic, value) = (
                c.u64("original_occurrences")?,
                c.u64("synthetic_occurrences")?,
                c.f64("value")?,
            );
            for i in 0..c.height() {
                let w = workload.get(i).unwrap_or("?").to_string();
                if let (Some(o), Some(s)) = (original.get(i), synthetic.get(i)) {
                    occurrences.entry(w.clone()).or_default().push((o as f64, s as f64));
                }
                if let (Some(m), Some(v)) = (metric.get(i), value.get(i)) {
                    distances
                        .entry(format!("{w} {}", m.replace('_', " ")))
                        .or_default()
                        .push(v);
                }
            }
            Ok(())
        })?;
    }
    let mut out = Vec::new();
    if !occurrences.is_empty() {
        out.push(Figure::new(
            "xml-path-occurrences".into(),
            Chart {
                title: "Path occurrences, corpus against generated".into(),
                x: Axis::log("occurrences in the corpus"),
                y: Axis::log("occurrences in the generated documents"),
                series: occurrences.into_iter().map(|(name, p)| Series { name, marks: Marks::Points(p) }).collect(),
                bands: Vec::new(),
            },
            "One point per path present in both; the structure is kept where the points lie on a line through the origin (the generated set's size over the corpus's).".into(),
        ));
    }
    if !distances.is_empty() {
        let series = distances
            .into_iter()
            .map(|(name, mut values)| {
                values.sort_by(|a, b| b.total_cmp(a));
                let points = values
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| (i as f64 + 1.0, v))
                    .collect();
                Series {
                    name,
                    marks: Marks::Points(points),
                }
            })
            .collect();
        out.push(Figure::new(
            "xml-path-distances".into(),
            Chart {
                title: "Per-path distance, original against synthetic values".into(),
                x: Axis::linear("path, worst first"),
                y: Axis::linear("distance").with_range(0.0..1.0),
                series,
                bands: Vec::new(),
            },
            "Total variation distance (categorical paths) and Kolmogorov–Smirnov statistic (numeric paths) between each path's values in the corpus and in the generated documents; 0 is identical.".into(),
        ));
    }
    Ok(out)
}
