//! XML synthesis figures from `xml_paths`: how often each path occurs in
//! the corpus against the generated documents (the structure-frequency
//! comparison; on the diagonal when the structure was kept), each path's
//! distance between original and synthetic values, worst first, and for
//! the worst [`WORST`] numeric and categorical paths both sides' values
//! (`xml_path_values`: quantiles, or the shares of the most frequent values);
//! then the structure histograms (`xml_structure.rs`).

use std::collections::BTreeMap;

use exp_results::schemas::{PATHS_TABLE as PATHS, PATH_VALUES_TABLE};

use super::chart::{Axis, Chart, Marks, Series};
use super::{Context, Figure};
use crate::ReportError;

/// Paths of each kind whose values are drawn, the most distant first.
const WORST: usize = 3;
/// Longest path text in a title.
const TITLE_CHARS: usize = 70;

pub(super) fn figures(ctx: &Context) -> Result<Vec<Figure>, ReportError> {
    let mut out = overview(ctx)?;
    out.extend(values(ctx)?);
    out.extend(super::xml_structure::figures(ctx)?);
    Ok(out)
}

/// Occurrences and distances of every path.
fn overview(ctx: &Context) -> Result<Vec<Figure>, ReportError> {
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

/// One path's values on both sides, as `xml_path_values` holds them.
#[derive(Default)]
struct Shape {
    /// (rank, value, label, fraction) per side.
    original: Vec<(u64, f64, Option<String>, f64)>,
    synthetic: Vec<(u64, f64, Option<String>, f64)>,
}

/// Both sides' values of the most distant paths of each kind.
fn values(ctx: &Context) -> Result<Vec<Figure>, ReportError> {
    // The most distant paths of each kind over all trials, by their worst value.
    let mut worst: BTreeMap<(String, String, String), f64> = BTreeMap::new();
    for part in ctx.parts(PATHS) {
        ctx.each_chunk(&part.path, &["workload", "path", "kind", "value"], &[], |c| {
            let (w, p, k, v) = (c.str("workload")?, c.str("path")?, c.str("kind")?, c.f64("value")?);
            for i in 0..c.height() {
                if let (Some(w), Some(p), Some(k), Some(v)) = (w.get(i), p.get(i), k.get(i), v.get(i)) {
                    let entry = worst.entry((k.to_string(), w.to_string(), p.to_string())).or_insert(v);
                    *entry = entry.max(v);
                }
            }
            Ok(())
        })?;
    }
    let mut chosen: Vec<((String, String, String), f64)> = worst.into_iter().collect();
    chosen.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut picked: Vec<(String, String, String)> = Vec::new();
    for kind in ["numeric", "categorical"] {
        picked.extend(
            chosen
                .iter()
                .filter(|(k, _)| k.0 == kind)
                .take(WORST)
                .map(|(k, _)| k.clone()),
        );
    }
    let mut shapes: BTreeMap<(String, String), Shape> = BTreeMap::new();
    let wanted = |w: &str, p: &str| picked.iter().any(|(_, pw, pp)| pw == w && pp == p);
    // The first trial's values: every trial compares the same corpus.
    for part in ctx.first_trial_parts(PATH_VALUES_TABLE) {
        let required = ["workload", "path", "side", "rank", "fraction"];
        ctx.each_chunk(&part.path, &required, &["value", "label"], |c| {
            let (w, p, side, rank) = (c.str("workload")?, c.str("path")?, c.str("side")?, c.u64("rank")?);
            let (value, label, fraction) = (c.f64("value")?, c.str_or_null("label")?, c.f64("fraction")?);
            for i in 0..c.height() {
                let (Some(w), Some(p), Some(side), Some(rank), Some(f)) =
                    (w.get(i), p.get(i), side.get(i), rank.get(i), fraction.get(i))
                else {
                    continue;
                };
                if !wanted(w, p) {
                    continue;
                }
                let shape = shapes.entry((w.to_string(), p.to_string())).or_default();
                let row = (
                    rank,
                    value.get(i).unwrap_or(f64::NAN),
                    label.get(i).map(str::to_string),
                    f,
                );
                if side == "original" {
                    shape.original.push(row)
                } else {
                    shape.synthetic.push(row)
                }
            }
            Ok(())
        })?;
    }
    Ok(picked
        .iter()
        .enumerate()
        .filter_map(|(n, (kind, w, p))| {
            let shape = shapes.remove(&(w.clone(), p.clone()))?;
            Some(value_figure(n, kind == "numeric", w, p, shape))
        })
        .collect())
}

fn value_figure(n: usize, numeric: bool, workload: &str, path: &str, mut shape: Shape) -> Figure {
    shape.original.sort_by_key(|r| r.0);
    shape.synthetic.sort_by_key(|r| r.0);
    let title: String = if path.chars().count() > TITLE_CHARS {
        let tail: String = path
            .chars()
            .rev()
            .take(TITLE_CHARS - 1)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("…{tail}")
    } else {
        path.to_string()
    };
    let side = |rows: &[(u64, f64, Option<String>, f64)], name: &str| -> Series {
        let points = if numeric {
            Marks::Line(rows.iter().map(|r| (r.1, r.3)).collect())
        } else {
            Marks::Points(rows.iter().map(|r| (r.0 as f64 + 1.0, r.3)).collect())
        };
        Series {
            name: name.to_string(),
            marks: points,
        }
    };
    let series = vec![side(&shape.original, "original"), side(&shape.synthetic, "synthetic")];
    let (x, y, caption) = if numeric {
        (
            Axis::linear("value"),
            Axis::linear("fraction of values").with_range(0.0..1.0),
            format!("{workload}: the values of a numeric path at 0, 5, …, 100 % on each side (its KS distance is among the largest)."),
        )
    } else {
        let labels: Vec<String> = shape
            .original
            .iter()
            .map(|r| {
                format!(
                    "{} = {}",
                    r.0 + 1,
                    r.2.as_deref().unwrap_or("?").chars().take(24).collect::<String>()
                )
            })
            .collect();
        (
            Axis::linear("value, most frequent in the corpus first"),
            Axis::linear("share of the path's occurrences"),
            format!(
                "{workload}: the share of the most frequent values of a categorical path on each side (its total \
                 variation is among the largest). Values: {}.",
                labels.join(", ")
            ),
        )
    };
    Figure::new(
        format!("xml-path-values-{}", n + 1),
        Chart {
            title,
            x,
            y,
            series,
            bands: Vec::new(),
        },
        caption,
    )
}
