//! Comparison of an original corpus with a synthetic one (`expc xml
//! compare ORIGINAL SYNTHETIC`).
//!
//! Each corpus is read in one streaming pass (the two passes run on two
//! threads) with the extraction's `Config`, so skeleton and path texts mean
//! the same on both sides. With `AttributePolicy::Auto` the attribute census
//! of the *original* decides, for both corpora, which attribute values are
//! part of the structure; otherwise a generator that spreads an attribute
//! over more values would silently change the synthetic side's skeletons.
//!
//! What is compared:
//! - counts side by side (documents, skipped, elements, distinct tags,
//!   attribute names, paths, skeletons) and how many are shared;
//! - Jensen–Shannon divergence (base 2, in [0, 1]) of the skeleton, path,
//!   tag and attribute-name frequency distributions;
//! - per path present on both sides: total variation of the value
//!   distribution (categorical) or the two-sample KS statistic and p-value
//!   (numeric), the kind decided on the original with the extraction's rule;
//!   paths found on one side only are listed;
//! - depth, fan-out and document-size histograms (bins in `histogram.rs`);
//! - the exact-duplicate rate: the share of synthetic documents whose
//!   canonical form equals that of an original document. The canonical form
//!   is the skeleton with every attribute value and text kept: tags with
//!   attributes sorted by name, values unescaped and re-escaped one way,
//!   text trimmed, comments/PIs/declarations dropped. Attribute order,
//!   quoting, indentation and entity spelling therefore cannot hide a copy.
//!   Its MD5 is compared; its length in bytes is the document size of the
//!   size histogram (so formatting does not count as size either);
//! - an optional probe query, run as its own timed pass on each corpus.

mod collect;
mod freq;
mod histogram;
mod paths;
mod probe;
mod report;

use serde::Serialize;

use self::collect::CorpusStats;
use self::freq::{jensen_shannon, FreqTable};
pub use self::histogram::Histogram;
pub use self::paths::{
    OneSidedPath, PathComparison, PathMetric, PathScore, PathSummary, ValueShape, SHAPE_QUANTILES, SHAPE_VALUES,
};
pub use self::probe::{probe, ProbeQuery, ProbeRun};
use crate::policy::Decider;
use crate::{census_input, AttributeCensus, AttributePolicy, Config, Source, XmlError};

/// Settings of a comparison.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// The extraction settings of the original (split, attribute policy,
    /// categorical threshold). `threads` is not used: the comparison reads
    /// the two corpora on two threads, each in one pass.
    pub extraction: Config,
    pub probe: Option<ProbeQuery>,
    /// Length of the worst-paths lists.
    pub worst_paths: usize,
}

impl Default for CompareConfig {
    fn default() -> Self {
        Self {
            extraction: Config::default(),
            probe: None,
            worst_paths: 10,
        }
    }
}

/// Counts of one corpus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CorpusCounts {
    /// Well-formed documents read.
    pub documents: u64,
    /// Malformed documents skipped.
    pub skipped: u64,
    pub elements: u64,
    /// Distinct element names.
    pub tags: usize,
    /// Distinct attribute names.
    pub attributes: usize,
    pub paths: usize,
    pub skeletons: usize,
}

/// Distinct items found in both corpora.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SharedCounts {
    pub tags: usize,
    pub attributes: usize,
    pub paths: usize,
    pub skeletons: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub original: CorpusCounts,
    pub synthetic: CorpusCounts,
    pub shared: SharedCounts,
}

/// Jensen–Shannon divergences (base 2) of frequency distributions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergences {
    pub skeleton: f64,
    pub path: f64,
    pub tag: f64,
    pub attribute: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Histograms {
    /// Element depth, document root = 1; one count per element.
    pub depth: Histogram,
    /// Child elements per element; one count per element.
    pub fan_out: Histogram,
    /// Bytes of the canonical form; one count per document.
    pub document_size: Histogram,
}

/// Exact copies of original documents among the synthetic ones.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Duplicates {
    pub synthetic_documents: u64,
    /// Synthetic documents equal (canonically) to some original document.
    pub copies: u64,
    /// `copies / synthetic_documents`, 0 without synthetic documents.
    pub rate: f64,
    /// Distinct original documents that were copied at least once.
    pub originals_copied: u64,
    /// Share of original documents that repeat an earlier original one: the
    /// duplicate rate expected from the data itself.
    pub original_repeat_rate: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeComparison {
    pub query: ProbeQuery,
    pub original: ProbeRun,
    pub synthetic: ProbeRun,
}

/// Skipped documents, up to [`SKIPPED_EXAMPLES`] per side, as
/// `input@position: reason`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedExamples {
    pub original: Vec<String>,
    pub synthetic: Vec<String>,
}

/// How many skipped documents are described per side.
pub const SKIPPED_EXAMPLES: usize = 10;

/// The settings both corpora were read with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settings {
    pub split_at: Option<String>,
    /// The attribute policy in the spec's terms (`keep`, `names`,
    /// `auto (max_distinct = 30)`).
    pub policy: String,
    pub categorical_threshold: usize,
}

/// The comparison report; `Display` renders it as side-by-side text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub settings: Settings,
    pub counts: Counts,
    pub divergence: Divergences,
    pub path_summary: PathSummary,
    /// Paths present in both corpora, in the original's first-seen order.
    pub paths: Vec<PathComparison>,
    /// Most frequent first.
    pub only_in_original: Vec<OneSidedPath>,
    pub only_in_synthetic: Vec<OneSidedPath>,
    pub histograms: Histograms,
    pub duplicates: Duplicates,
    pub probe: Option<ProbeComparison>,
    pub skipped: SkippedExamples,
}

/// Compares `synthetic` with `original`; see the module documentation.
pub fn compare(original: &[Source], synthetic: &[Source], config: &CompareConfig) -> Result<Comparison, XmlError> {
    let extraction = &config.extraction;
    if extraction.split_at.as_deref() == Some("") {
        return Err(XmlError::Config("split_at must not be empty".into()));
    }
    let split = extraction.split_at.as_deref();
    let census = match extraction.policy {
        AttributePolicy::Auto { max_distinct } => {
            let mut census = AttributeCensus::new(max_distinct);
            crate::for_each_input(original, |name, r| census_input(&mut census, name, r, split))?;
            Some(census)
        }
        _ => None,
    };
    let decider = || match (extraction.policy, &census) {
        (AttributePolicy::Names, _) => Decider::Names,
        (AttributePolicy::Auto { .. }, Some(c)) => Decider::Census(c),
        _ => Decider::Keep,
    };
    let read = |sources: &[Source]| -> Result<CorpusStats<'_>, XmlError> {
        let mut stats = CorpusStats::new(decider(), split);
        crate::for_each_input(sources, |name, r| stats.feed(name, r))?;
        Ok(stats)
    };
    let (o, s) = std::thread::scope(|scope| {
        let synthetic_pass = scope.spawn(|| read(synthetic));
        let o = read(original);
        let s = synthetic_pass
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (o, s)
    });
    let (o, s) = (o?, s?);
    let path_results = paths::compare_paths(&o.paths, &s.paths, extraction.categorical_threshold, config.worst_paths)?;
    let probe = match &config.probe {
        Some(query) => Some(ProbeComparison {
            query: query.clone(),
            original: probe(original, split, query)?,
            synthetic: probe(synthetic, split, query)?,
        }),
        None => None,
    };
    Ok(Comparison {
        settings: Settings {
            split_at: extraction.split_at.clone(),
            policy: extraction.policy.to_string(),
            categorical_threshold: extraction.categorical_threshold,
        },
        counts: Counts {
            original: counts(&o),
            synthetic: counts(&s),
            shared: SharedCounts {
                tags: o.tags.shared(&s.tags),
                attributes: o.attributes.shared(&s.attributes),
                paths: path_results.compared.len(),
                skeletons: o.skeletons.shared(&s.skeletons),
            },
        },
        divergence: Divergences {
            skeleton: jsd(&o.skeletons, &s.skeletons),
            path: jsd(&path_occurrences(&o), &path_occurrences(&s)),
            tag: jsd(&o.tags, &s.tags),
            attribute: jsd(&o.attributes, &s.attributes),
        },
        path_summary: path_results.summary,
        paths: path_results.compared,
        only_in_original: path_results.only_in_original,
        only_in_synthetic: path_results.only_in_synthetic,
        histograms: Histograms {
            depth: Histogram::side_by_side(&o.depth, &s.depth),
            fan_out: Histogram::side_by_side(&o.fan_out, &s.fan_out),
            document_size: Histogram::side_by_side(&o.size, &s.size),
        },
        duplicates: duplicates(&o, &s),
        probe,
        skipped: SkippedExamples {
            original: skipped_examples(&o),
            synthetic: skipped_examples(&s),
        },
    })
}

fn counts(stats: &CorpusStats<'_>) -> CorpusCounts {
    CorpusCounts {
        documents: stats.documents,
        skipped: stats.skipped.len() as u64,
        elements: stats.elements,
        tags: stats.tags.len(),
        attributes: stats.attributes.len(),
        paths: stats.paths.entries.len(),
        skeletons: stats.skeletons.len(),
    }
}

fn jsd<K: std::hash::Hash + Eq + Clone>(a: &FreqTable<K>, b: &FreqTable<K>) -> f64 {
    jensen_shannon(&a.paired(b).collect::<Vec<_>>())
}

/// Path text → occurrences, for the path frequency divergence.
fn path_occurrences(stats: &CorpusStats<'_>) -> FreqTable<String> {
    let mut table = FreqTable::default();
    for entry in &stats.paths.entries {
        table.add(entry.text.as_str(), entry.occurrences);
    }
    table
}

fn duplicates(o: &CorpusStats<'_>, s: &CorpusStats<'_>) -> Duplicates {
    let mut copies = 0;
    let mut originals_copied = 0;
    for (hash, n) in &s.documents_by_hash {
        if o.documents_by_hash.contains_key(hash) {
            copies += n;
            originals_copied += 1;
        }
    }
    let share = |part: u64, whole: u64| if whole == 0 { 0.0 } else { part as f64 / whole as f64 };
    let repeats = o.documents - o.documents_by_hash.len() as u64;
    Duplicates {
        synthetic_documents: s.documents,
        copies,
        rate: share(copies, s.documents),
        originals_copied,
        original_repeat_rate: share(repeats, o.documents),
    }
}

fn skipped_examples(stats: &CorpusStats<'_>) -> Vec<String> {
    stats
        .skipped
        .iter()
        .take(SKIPPED_EXAMPLES)
        .map(|s| format!("{}@{}: {}", s.input, s.position, s.reason))
        .collect()
}
