//! The `xml` workload: corpus → synthesis set (optionally obfuscated) →
//! generated documents → comparison with the corpus.
//!
//! Everything it makes stays in the run directory, under
//! `xml/<workload>/trial-<n>/`: `set/` (the set directory), `private/`
//! (the obfuscation map, beside the set and never inside it), `documents/`
//! and `comparison.json`. The tables `xml_generation` (one row per trial)
//! and `xml_paths` (per-path fidelity) hold the figures.

use std::path::Path;
use std::time::Instant;

use exp_plan::Xml;
use exp_results::{Cell, DType, Schema};
use exp_xml::compare::{compare, CompareConfig, PathMetric};
use exp_xml::generate::{generate_to_dir_until, Amount, GenerateOptions, Generator, Layout};
use exp_xml::set::{read_set, write_set, SetOptions, SynthesisSet};
use exp_xml::{obfuscate, AttributePolicy, Config, Source};

use crate::executor::{ExecError, WorkloadContext, WorkloadSummary};

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

/// The corpus inputs of a workload. The compiler already resolved the
/// spec's relative paths against the spec's directory.
fn corpus_sources(corpus: &str) -> Result<Vec<Source>, exp_xml::XmlError> {
    let sources = exp_xml::expand_inputs(&[corpus])?;
    match sources.as_slice() {
        [Source::File(path)] if !path.exists() => Err(exp_xml::XmlError::Open {
            path: path.clone(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
        }),
        _ => Ok(sources),
    }
}

fn config(xml: &Xml) -> Config {
    let policy = match xml.attributes.as_str() {
        "keep" => AttributePolicy::Keep,
        "names" => AttributePolicy::Names,
        _ => AttributePolicy::Auto {
            max_distinct: xml.max_distinct as usize,
        },
    };
    Config {
        split_at: xml.split_at.clone(),
        policy,
        categorical_threshold: xml.categorical_threshold as usize,
        ..Config::default()
    }
}

/// Runs on a blocking thread: every step is CPU or disk work.
pub fn run(ctx: &WorkloadContext, xml: &Xml, out: &Path) -> Result<WorkloadSummary, ExecError> {
    let name = &ctx.workload.name;
    let failed = |step: &'static str, e: &dyn std::fmt::Display| ExecError::step("xml", name, step, e.to_string());
    let threads = match xml.threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n as usize,
    };
    let config = Config { threads, ..config(xml) };
    std::fs::create_dir_all(out).map_err(|e| failed("output directory", &e))?;

    // The workload starts at its window's start (`at`), like every kind.
    let start = ctx.intervals.first().map_or(0, |i| i.start_ns);
    if start > 0 && !ctx.cancel.sleep_until(ctx.clock.at(start)) {
        return Ok(WorkloadSummary::default());
    }
    let started = Instant::now();
    let corpus = match &xml.corpus {
        Some(corpus) => Some(corpus_sources(corpus).map_err(|e| failed("corpus", &e))?),
        None => None,
    };
    let set_dir = out.join("set");
    let mut map = None;
    let set = match (&xml.set, &corpus) {
        (Some(dir), _) => read_set(Path::new(dir)).map_err(|e| failed("set", &e))?,
        (None, Some(sources)) => {
            let extraction = exp_xml::extract(sources, &config).map_err(|e| failed("extraction", &e))?;
            let options = SetOptions {
                threads,
                split_root: extraction.summary.split_root.clone(),
                ..SetOptions::default()
            };
            let mut set = SynthesisSet::from_extraction(extraction, &config, &options);
            if xml.obfuscate {
                let (hidden, private) = obfuscate::obfuscate(&set, ctx.seed).map_err(|e| failed("obfuscation", &e))?;
                obfuscate::write_map(&private, &out.join("private"), &set_dir)
                    .map_err(|e| failed("obfuscation map", &e))?;
                map = Some(private);
                set = hidden;
            }
            write_set(&set, &set_dir).map_err(|e| failed("writing the set", &e))?;
            set
        }
        (None, None) => return Err(failed("input", &"give `corpus` or `set`")),
    };
    let extract_s = started.elapsed().as_secs_f64();
    if ctx.cancel.is_cancelled() {
        return Ok(WorkloadSummary::default());
    }

    let generator = Generator::new(&set, ctx.seed).map_err(|e| failed("generator", &e))?;
    let amount = match (xml.documents, xml.size_bytes) {
        (Some(n), _) => Amount::Documents(n),
        (None, Some(bytes)) => Amount::Bytes(bytes),
        (None, None) => Amount::Documents(set.info.corpus.documents.max(1)),
    };
    let options = GenerateOptions {
        amount,
        // A split run's part generates its share of the documents (exp-xml
        // numbers them as the whole run would).
        shard: ctx
            .split
            .map_or_else(Default::default, |split| exp_xml::generate::Shard {
                index: u64::from(split.index),
                count: u64::from(split.count),
            }),
        layout: match xml.per_file {
            0 | 1 => Layout::FilePerDocument,
            n => Layout::DocumentsPerFile(u64::from(n)),
        },
        gzip: xml.gzip,
        threads,
    };
    let documents_dir = out.join("documents");
    // The end of the workload's window (or of the trial) and Ctrl-C stop
    // generation between batches.
    let end = ctx.intervals.last().and_then(|i| i.end_ns).or(ctx.trial_end_ns);
    let stop = || ctx.cancel.is_cancelled() || end.is_some_and(|end| ctx.clock.now_ns() >= end);
    let stats =
        generate_to_dir_until(&generator, &options, &documents_dir, &stop).map_err(|e| failed("generation", &e))?;
    let generate_s = stats.wall.as_secs_f64();
    let throughput = if generate_s > 0.0 {
        stats.bytes as f64 / 1e6 / generate_s
    } else {
        f64::NAN
    };

    let mut summary = WorkloadSummary::default();
    summary.metrics.insert("throughput".into(), throughput);
    if stats.documents > 0 {
        summary
            .metrics
            .insert("document_size".into(), stats.bytes as f64 / stats.documents as f64);
    }
    let comparison = match (&corpus, xml.compare && !ctx.cancel.is_cancelled()) {
        (Some(original), true) => {
            // Obfuscated documents are compared after revealing them.
            let synthetic_dir = match &map {
                Some(map) => {
                    let revealed = ctx.scratch.join("revealed");
                    obfuscate::reveal_path(map, &documents_dir, &revealed).map_err(|e| failed("reveal", &e))?;
                    revealed
                }
                None => documents_dir.clone(),
            };
            let synthetic = exp_xml::expand_inputs(&[synthetic_dir.to_string_lossy().into_owned()])
                .map_err(|e| failed("reading the documents", &e))?;
            let compare_config = CompareConfig {
                extraction: config.clone(),
                ..CompareConfig::default()
            };
            let comparison = compare(original, &synthetic, &compare_config).map_err(|e| failed("comparison", &e))?;
            let json = serde_json::to_vec_pretty(&comparison).map_err(|e| failed("comparison", &e))?;
            std::fs::write(out.join("comparison.json"), json).map_err(|e| failed("comparison.json", &e))?;
            Some(comparison)
        }
        _ => None,
    };

    let nan = f64::NAN;
    let c = comparison.as_ref();
    let row: Vec<Cell> = vec![
        name.as_str().into(),
        stats.documents.into(),
        stats.bytes.into(),
        stats.written.into(),
        stats.files.into(),
        extract_s.into(),
        generate_s.into(),
        throughput.into(),
        c.map_or(nan, |c| c.divergence.skeleton).into(),
        c.map_or(nan, |c| c.divergence.path).into(),
        c.map_or(nan, |c| c.divergence.tag).into(),
        c.map_or(nan, |c| c.divergence.attribute).into(),
        c.map_or(nan, |c| c.path_summary.max_total_variation).into(),
        c.map_or(nan, |c| c.path_summary.max_ks).into(),
        c.map_or(nan, |c| c.duplicates.rate).into(),
    ];
    let schema = generation_schema();
    let mut batch = schema.batch();
    batch.push_row(row)?;
    ctx.tables.sink(&schema).write(batch)?;
    if let Some(c) = c {
        summary.metrics.insert("skeleton_jsd".into(), c.divergence.skeleton);
        summary
            .metrics
            .insert("max_total_variation".into(), c.path_summary.max_total_variation);
        summary.metrics.insert("max_ks".into(), c.path_summary.max_ks);
        summary.metrics.insert("duplicate_rate".into(), c.duplicates.rate);
        write_paths(ctx, c)?;
    }
    Ok(summary)
}

fn write_paths(ctx: &WorkloadContext, comparison: &exp_xml::compare::Comparison) -> Result<(), ExecError> {
    let schema = paths_schema();
    let mut batch = schema.batch();
    for path in &comparison.paths {
        let (kind, metric, value) = match &path.metric {
            PathMetric::Categorical { total_variation, .. } => ("categorical", "total_variation", *total_variation),
            PathMetric::Numeric { ks_statistic, .. } => ("numeric", "ks_statistic", *ks_statistic),
        };
        batch.push_row(vec![
            ctx.workload.name.as_str().into(),
            path.path.as_str().into(),
            kind.into(),
            path.original_occurrences.into(),
            path.synthetic_occurrences.into(),
            metric.into(),
            value.into(),
        ])?;
    }
    ctx.tables.sink(&schema).write(batch)?;
    Ok(())
}

/// A workload name as one safe path component.
pub fn dir_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Preflight: the corpus must name at least one readable input, a set
/// directory must exist. Returns problems as messages.
pub fn check(xml: &Xml) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(corpus) = &xml.corpus {
        match corpus_sources(corpus) {
            Ok(sources) if sources.is_empty() => problems.push(format!("corpus `{corpus}` matches no file")),
            Ok(_) => {}
            Err(e) => problems.push(format!("corpus `{corpus}`: {e}")),
        }
    }
    if let Some(set) = &xml.set {
        let dir = Path::new(set);
        if !dir.join("set.json").is_file() {
            problems.push(format!("set `{set}`: {} has no set.json", dir.display()));
        }
    }
    if xml.corpus.is_none() && xml.set.is_none() {
        problems.push("give `corpus` (to extract from) or `set` (an existing set directory)".into());
    }
    problems
}
