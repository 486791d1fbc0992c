//! The `xml` workload's tables (schemas in `exp_results::schemas`):
//! `xml_generation` (one row per trial: what was generated, how fast, and
//! how close it came to the corpus), `xml_paths` (the fidelity of each
//! path), `xml_path_values` (both sides' values of each path) and
//! `xml_structure` (both sides' depth, fan-out and size histograms), the
//! last two for the report's figures. Rows are built by column name
//! ([`Schema::row`](exp_results::Schema::row)), so
//! they cannot drift from their schema.

pub use exp_results::schemas::GENERATION_TABLE;
use exp_results::schemas::{generation_schema, path_values_schema, paths_schema, structure_schema};
use exp_results::Cell;
use exp_xml::compare::{Comparison, Histogram, PathMetric, ValueShape};
use exp_xml::generate::{GenerateStats, GENERATOR_VERSION};

use crate::executor::{ExecError, WorkloadContext};

/// What one trial of the workload measured, for its `xml_generation` row.
pub(super) struct Generation<'a> {
    pub stats: &'a GenerateStats,
    /// Seconds until the set was ready (extracted and written, or read).
    pub extract_s: f64,
    /// Uncompressed MB per second of generation (NaN when too short).
    pub throughput: f64,
    /// The comparison with the corpus, when there was one.
    pub comparison: Option<&'a Comparison>,
}

/// Writes the trial's `xml_generation` row; the divergences are NaN without
/// a comparison.
pub(super) fn write_generation(ctx: &WorkloadContext, generation: &Generation<'_>) -> Result<(), ExecError> {
    let Generation {
        stats,
        extract_s,
        throughput,
        comparison,
    } = *generation;
    let figure = |f: fn(&Comparison) -> f64| Cell::from(comparison.map_or(f64::NAN, f));
    let schema = generation_schema();
    let row = schema.row([
        ("workload", ctx.workload.name.as_str().into()),
        ("documents", stats.documents.into()),
        ("bytes", stats.bytes.into()),
        ("bytes_written", stats.written.into()),
        ("files", stats.files.into()),
        ("extract_s", extract_s.into()),
        ("generate_s", stats.wall.as_secs_f64().into()),
        ("throughput_mb_per_s", throughput.into()),
        ("skeleton_jsd", figure(|c| c.divergence.skeleton)),
        ("path_jsd", figure(|c| c.divergence.path)),
        ("tag_jsd", figure(|c| c.divergence.tag)),
        ("attribute_jsd", figure(|c| c.divergence.attribute)),
        ("max_total_variation", figure(|c| c.path_summary.max_total_variation)),
        ("max_ks", figure(|c| c.path_summary.max_ks)),
        ("duplicate_rate", figure(|c| c.duplicates.rate)),
        // What the seed generated depends on it (decision 0022).
        ("generator_version", u64::from(GENERATOR_VERSION).into()),
    ])?;
    let mut batch = schema.batch();
    batch.push_row(row)?;
    ctx.tables.sink(&schema).write(batch)?;
    Ok(())
}

/// Writes one `xml_paths` row per path the two corpora share.
pub(super) fn write_paths(ctx: &WorkloadContext, comparison: &Comparison) -> Result<(), ExecError> {
    let schema = paths_schema();
    let mut batch = schema.batch();
    for path in &comparison.paths {
        let (kind, metric, value) = match &path.metric {
            PathMetric::Categorical { total_variation, .. } => ("categorical", "total_variation", *total_variation),
            PathMetric::Numeric { ks_statistic, .. } => ("numeric", "ks_statistic", *ks_statistic),
        };
        batch.push_row(schema.row([
            ("workload", ctx.workload.name.as_str().into()),
            ("path", path.path.as_str().into()),
            ("kind", kind.into()),
            ("original_occurrences", path.original_occurrences.into()),
            ("synthetic_occurrences", path.synthetic_occurrences.into()),
            ("metric", metric.into()),
            ("value", value.into()),
        ])?)?;
    }
    ctx.tables.sink(&schema).write(batch)?;
    write_path_values(ctx, comparison)?;
    write_structure(ctx, comparison)
}

/// Writes a row per bin of the depth, fan-out and document-size histograms.
fn write_structure(ctx: &WorkloadContext, comparison: &Comparison) -> Result<(), ExecError> {
    let schema = structure_schema();
    let mut batch = schema.batch();
    let h = &comparison.histograms;
    let measures: [(&str, &Histogram); 3] = [
        ("depth", &h.depth),
        ("fan_out", &h.fan_out),
        ("document_size", &h.document_size),
    ];
    for (measure, histogram) in measures {
        let bins = histogram.bins.iter().zip(&histogram.original).zip(&histogram.synthetic);
        for (bin, ((label, &original), &synthetic)) in bins.enumerate() {
            batch.push_row(schema.row([
                ("workload", ctx.workload.name.as_str().into()),
                ("measure", measure.into()),
                ("bin", (bin as u64).into()),
                ("label", label.as_str().into()),
                ("original", original.into()),
                ("synthetic", synthetic.into()),
            ])?)?;
        }
    }
    ctx.tables.sink(&schema).write(batch)?;
    Ok(())
}

/// Writes each compared path's value shape: a row per side and quantile
/// (numeric) or per side and frequent value (categorical).
fn write_path_values(ctx: &WorkloadContext, comparison: &Comparison) -> Result<(), ExecError> {
    let schema = path_values_schema();
    let mut batch = schema.batch();
    for path in &comparison.paths {
        let row = |side: &str, rank: usize, value: Cell, label: Cell, fraction: f64| {
            schema.row([
                ("workload", ctx.workload.name.as_str().into()),
                ("path", path.path.as_str().into()),
                ("side", side.into()),
                ("rank", (rank as u64).into()),
                ("value", value),
                ("label", label),
                ("fraction", fraction.into()),
            ])
        };
        match &path.shape {
            ValueShape::Quantiles { original, synthetic } => {
                for (side, values) in [("original", original), ("synthetic", synthetic)] {
                    let last = values.len().saturating_sub(1).max(1) as f64;
                    for (i, &v) in values.iter().enumerate() {
                        batch.push_row(row(side, i, v.into(), Cell::Null, i as f64 / last)?)?;
                    }
                }
            }
            ValueShape::Shares {
                values,
                original,
                synthetic,
            } => {
                for (side, shares) in [("original", original), ("synthetic", synthetic)] {
                    for (i, (label, &share)) in values.iter().zip(shares.iter()).enumerate() {
                        batch.push_row(row(side, i, Cell::Null, label.as_str().into(), share)?)?;
                    }
                }
            }
        }
    }
    ctx.tables.sink(&schema).write(batch)?;
    Ok(())
}
