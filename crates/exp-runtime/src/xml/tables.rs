//! The `xml` workload's tables: `xml_generation` (one row per trial: what
//! was generated, how fast, and how close it came to the corpus) and
//! `xml_paths` (the fidelity of each path). Rows are built by column name
//! ([`Schema::row`]), so they cannot drift from their schema.

use exp_results::{Cell, DType, Schema};
use exp_xml::compare::{Comparison, PathMetric};
use exp_xml::generate::GenerateStats;

use crate::executor::{ExecError, WorkloadContext};

/// One row per generated batch of documents.
pub const GENERATION_TABLE: &str = "xml_generation";

pub fn generation_schema() -> Schema {
    Schema::new(GENERATION_TABLE)
        .column("workload", DType::Str)
        .column("documents", DType::U64)
        .column("bytes", DType::U64)
        .column("bytes_written", DType::U64)
        .column("files", DType::U64)
        .column("extract_s", DType::F64)
        .column("generate_s", DType::F64)
        .column("throughput_mb_per_s", DType::F64)
        .column("skeleton_jsd", DType::F64)
        .column("path_jsd", DType::F64)
        .column("tag_jsd", DType::F64)
        .column("attribute_jsd", DType::F64)
        .column("max_total_variation", DType::F64)
        .column("max_ks", DType::F64)
        .column("duplicate_rate", DType::F64)
}

pub fn paths_schema() -> Schema {
    Schema::new("xml_paths")
        .column("workload", DType::Str)
        .column("path", DType::Str)
        .column("kind", DType::Str)
        .column("original_occurrences", DType::U64)
        .column("synthetic_occurrences", DType::U64)
        .column("metric", DType::Str)
        .column("value", DType::F64)
}

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
    Ok(())
}
