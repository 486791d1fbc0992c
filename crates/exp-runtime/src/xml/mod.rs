//! The `xml` workload: corpus → synthesis set (optionally obfuscated) →
//! generated documents → comparison with the corpus.
//!
//! Everything it makes stays in the run directory, under
//! `xml/<workload>/trial-<n>/`: `set/` (the set directory), `private/`
//! (the obfuscation map, beside the set and never inside it), `documents/`
//! and `comparison.json`. The tables `xml_generation` (one row per trial)
//! and `xml_paths` (per-path fidelity) hold the figures, `xml_path_values`
//! both sides' values of each path and `xml_structure` their depth, fan-out
//! and size histograms (`xml/tables.rs`).
//!
//! The set is made by exp-xml's one corpus → set pipeline
//! ([`exp_xml::extract_set`]), the same `expc xml extract` runs.

pub(crate) mod check;
mod tables;

pub use tables::GENERATION_TABLE;

/// The run directory's directory of the files the workload keeps
/// (`xml/<workload>/trial-<n>/`), which a resume sets aside by trial.
pub(crate) const OUTPUT_DIR: &str = "xml";

use std::fmt::Display;
use std::path::Path;
use std::time::Instant;

use exp_plan::Xml;
use exp_xml::compare::{compare, CompareConfig, Comparison};
use exp_xml::generate::{generate_to_dir_until, Amount, GenerateOptions, GenerateStats, Generator, Layout, Shard};
use exp_xml::obfuscate::{self, ObfuscationMap};
use exp_xml::pipeline::{Obfuscation, SetError, SetJob, SetPhase};
use exp_xml::set::{read_set, SynthesisSet};
use exp_xml::{AttributePolicy, Config, Source};

use crate::audit::XmlAmount;
use crate::executor::{ExecError, WorkloadContext, WorkloadSummary};
use tables::Generation;

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

/// The error of `step` of the workload `ctx` runs.
fn failed(ctx: &WorkloadContext, step: &'static str, e: impl Display) -> ExecError {
    ExecError::step("xml", &ctx.workload.name, step, e.to_string())
}

/// Runs on a blocking thread: every step is CPU or disk work.
pub fn run(ctx: &WorkloadContext, xml: &Xml, out: &Path) -> Result<WorkloadSummary, ExecError> {
    let threads = match xml.threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n as usize,
    };
    let config = Config { threads, ..config(xml) };
    // Only below the run directory: one moved away is not made again here.
    exp_results::create_dir_below(&ctx.run_dir, out).map_err(|e| failed(ctx, "output directory", e))?;

    // The workload starts at its window's start (`at`), like every kind.
    let start = ctx.intervals.first().map_or(0, |i| i.start_ns);
    if start > 0 && !ctx.cancel.sleep_until(ctx.clock.at(start)) {
        return Ok(WorkloadSummary::default());
    }
    let started = Instant::now();
    let corpus = match &xml.corpus {
        Some(corpus) => Some(corpus_sources(corpus).map_err(|e| failed(ctx, "corpus", e))?),
        None => None,
    };
    let (set, map) = set_to_generate_from(ctx, xml, &config, corpus.as_deref(), out)?;
    let extract_s = started.elapsed().as_secs_f64();
    if ctx.cancel.is_cancelled() {
        return Ok(WorkloadSummary::default());
    }

    let documents_dir = out.join("documents");
    let (stats, asked) = generate(ctx, xml, &set, threads, &documents_dir)?;
    let throughput = throughput(&stats);
    let mut summary = WorkloadSummary::default();
    summary
        .findings
        .extend(crate::audit::xml_output(asked, stats.documents, stats.bytes));
    summary.metrics.insert("throughput".into(), throughput);
    if stats.documents > 0 {
        summary
            .metrics
            .insert("document_size".into(), stats.bytes as f64 / stats.documents as f64);
    }
    let comparison = match &corpus {
        Some(original) if xml.compare && !ctx.cancel.is_cancelled() => {
            let synthetic = (documents_dir.as_path(), map.as_ref());
            Some(compare_with_corpus(ctx, &config, original, synthetic, out)?)
        }
        _ => None,
    };
    let generation = Generation {
        stats: &stats,
        extract_s,
        throughput,
        comparison: comparison.as_ref(),
    };
    tables::write_generation(ctx, &generation)?;
    if let Some(c) = &comparison {
        summary.metrics.insert("skeleton_jsd".into(), c.divergence.skeleton);
        summary
            .metrics
            .insert("max_total_variation".into(), c.path_summary.max_total_variation);
        summary.metrics.insert("max_ks".into(), c.path_summary.max_ks);
        summary.metrics.insert("duplicate_rate".into(), c.duplicates.rate);
        tables::write_paths(ctx, c)?;
    }
    Ok(summary)
}

/// The set to generate from: the workload's `set` directory, or one made
/// from its corpus by exp-xml's pipeline and written to `out/set` (when
/// obfuscated, with its map, returned too, in `out/private`).
fn set_to_generate_from(
    ctx: &WorkloadContext,
    xml: &Xml,
    config: &Config,
    corpus: Option<&[Source]>,
    out: &Path,
) -> Result<(SynthesisSet, Option<ObfuscationMap>), ExecError> {
    let sources = match (&xml.set, corpus) {
        (Some(dir), _) => return Ok((read_set(Path::new(dir)).map_err(|e| failed(ctx, "set", e))?, None)),
        (None, Some(sources)) => sources,
        (None, None) => return Err(failed(ctx, "input", "give `corpus` or `set`")),
    };
    let (set_dir, map_dir) = (out.join("set"), out.join("private"));
    let job = SetJob {
        obfuscation: xml.obfuscate.then_some(Obfuscation {
            seed: ctx.seed,
            map_dir: &map_dir,
        }),
        ..SetJob::new(&set_dir)
    };
    let made = exp_xml::extract_set(sources, config, &job).map_err(|e| failed(ctx, set_step(&e), e))?;
    Ok((made.set, made.map.map(|written| written.map)))
}

/// The workload's name for the phase a set failed in.
fn set_step(error: &SetError) -> &'static str {
    match error.phase {
        SetPhase::Extract => "extraction",
        SetPhase::Obfuscate => "obfuscation",
        SetPhase::WriteMap => "obfuscation map",
        SetPhase::WriteSet => "writing the set",
    }
}

/// Generates the workload's documents into `documents_dir`, until the
/// amount is reached, the workload's window (or the trial) ends, or Ctrl-C.
fn generate(
    ctx: &WorkloadContext,
    xml: &Xml,
    set: &SynthesisSet,
    threads: usize,
    documents_dir: &Path,
) -> Result<(GenerateStats, XmlAmount), ExecError> {
    let generator = Generator::new(set, ctx.seed).map_err(|e| failed(ctx, "generator", e))?;
    let amount = match (xml.documents, xml.size_bytes) {
        (Some(n), _) => Amount::Documents(n),
        (None, Some(bytes)) => Amount::Bytes(bytes),
        (None, None) => Amount::Documents(set.info.corpus.documents.max(1)),
    };
    // What this process was asked for: a split part's share of the
    // documents; by size, the whole (a part's share is not audited).
    let asked = match (amount, ctx.split) {
        (Amount::Documents(n), Some(split)) => {
            let share = crate::split::share(n, split);
            XmlAmount::Documents(share.end - share.start)
        }
        (Amount::Documents(n), None) => XmlAmount::Documents(n),
        (Amount::Bytes(_), Some(_)) => XmlAmount::Bytes(0),
        (Amount::Bytes(n), None) => XmlAmount::Bytes(n),
    };
    let options = GenerateOptions {
        amount,
        // A split run's part generates its share of the documents (exp-xml
        // numbers them as the whole run would).
        shard: ctx.split.map_or_else(Default::default, |split| Shard {
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
    // The end of the workload's window (or of the trial) and Ctrl-C stop
    // generation between batches.
    let end = ctx.intervals.last().and_then(|i| i.end_ns).or(ctx.trial_end_ns);
    let stop = || ctx.cancel.is_cancelled() || end.is_some_and(|end| ctx.clock.now_ns() >= end);
    let stats =
        generate_to_dir_until(&generator, &options, documents_dir, &stop).map_err(|e| failed(ctx, "generation", e))?;
    let live = &ctx.live;
    live.documents
        .fetch_add(stats.documents, std::sync::atomic::Ordering::Relaxed);
    live.document_bytes
        .fetch_add(stats.bytes, std::sync::atomic::Ordering::Relaxed);
    Ok((stats, asked))
}

/// Uncompressed MB generated per second; NaN when it took no time.
fn throughput(stats: &GenerateStats) -> f64 {
    let generate_s = stats.wall.as_secs_f64();
    if generate_s > 0.0 {
        stats.bytes as f64 / 1e6 / generate_s
    } else {
        f64::NAN
    }
}

/// Compares the generated documents (`synthetic`: their directory, and the
/// map that reveals them when the set was obfuscated) with the corpus, and
/// writes the comparison to `out/comparison.json`.
fn compare_with_corpus(
    ctx: &WorkloadContext,
    config: &Config,
    original: &[Source],
    (documents_dir, map): (&Path, Option<&ObfuscationMap>),
    out: &Path,
) -> Result<Comparison, ExecError> {
    // Obfuscated documents are compared after revealing them.
    let synthetic_dir = match map {
        Some(map) => {
            let revealed = ctx.scratch.join("revealed");
            obfuscate::reveal_path(map, documents_dir, &revealed).map_err(|e| failed(ctx, "reveal", e))?;
            revealed
        }
        None => documents_dir.to_path_buf(),
    };
    let synthetic = exp_xml::expand_inputs(&[synthetic_dir.to_string_lossy().into_owned()])
        .map_err(|e| failed(ctx, "reading the documents", e))?;
    let compare_config = CompareConfig {
        extraction: config.clone(),
        ..CompareConfig::default()
    };
    let comparison = compare(original, &synthetic, &compare_config).map_err(|e| failed(ctx, "comparison", e))?;
    let json = serde_json::to_vec_pretty(&comparison).map_err(|e| failed(ctx, "comparison", e))?;
    std::fs::write(out.join("comparison.json"), json).map_err(|e| failed(ctx, "comparison.json", e))?;
    Ok(comparison)
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
