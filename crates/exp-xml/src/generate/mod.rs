//! Generation: synthetic documents from a [`SynthesisSet`].
//!
//! [`Generator::new`] compiles the set once: each skeleton becomes a
//! template (literal bytes plus slots, see `template.rs`) and each path a
//! value source (see `values.rs`). Document i is then a pure function of
//! (seed, i): its generator is `Rng::new(seed).stream(i)`, which picks a
//! skeleton by frequency (alias table) and fills the slots in document
//! order. So any range of documents can be produced independently — by
//! threads, or by shards on other machines — and concatenates to the same
//! bytes as one sequential run. The output driver is in `output.rs`.
//!
//! What a seed generates is versioned ([`GENERATOR_VERSION`]): the bytes
//! for a (set, seed) stay the same within a version
//! (`tests/generate_pinned.rs`), and change only with a new version and a
//! decision record.

mod cursor;
mod draw;
mod error;
mod number;
mod output;
mod plan;
mod template;
mod values;
mod ziggurat;

use exp_stats::{AliasIndex, Rng};

pub use error::GenerateError;
pub use output::{generate_to_dir, generate_to_dir_until, generate_to_writer, GenerateStats, STOP_POLL};
pub use plan::{Amount, GenerateOptions, Layout, Shard};

use std::ops::Range;

use crate::hash::FastMap;
use crate::set::{NumericPath, SynthesisSet};
use crate::{md5_of, CategoricalCount, Md5Hash, PathInfo, ValueKind, XmlError};
use cursor::Cursor;
use template::Template;
use values::{Context, Source};

/// Uncompressed bytes a work batch aims at: large enough that per-batch
/// costs (channel, write call, gzip member) vanish, small enough that a few
/// batches per thread in flight stay a few MiB.
const BATCH_BYTES: f64 = 256.0 * 1024.0;
const MAX_BATCH_DOCUMENTS: u64 = 4096;

/// Documents whose generators [`Generator::documents`] derives together:
/// deriving one is a chain of ten dependent SplitMix64 rounds, and several
/// chains in a row overlap in the CPU instead of each stalling its document.
const STREAMS_AHEAD: usize = 8;

/// The version of what a seed generates. 1: exp-stats' samplers
/// (Box–Muller normals, inverse-CDF exponentials). 2: ziggurat normals and
/// exponentials for the common families (decision 0022,
/// docs/decisions/0022-generation-ziggurat-draws.md); same distributions,
/// other numbers.
pub const GENERATOR_VERSION: u32 = 2;

/// A compiled synthesis set that writes documents.
#[derive(Debug, Clone)]
pub struct Generator {
    base: Rng,
    structures: AliasIndex,
    templates: Vec<Template>,
    sources: Vec<Source>,
    split_root: Option<String>,
    /// Expected document length in bytes (an estimate from the set).
    expected_len: f64,
}

impl Generator {
    /// Compiles `set`. Errors ([`XmlError::Config`]): no structure (or only
    /// zero counts), a malformed skeleton, a leaf or attribute path missing
    /// from the set, a numeric path without its numeric record or with an
    /// invalid range or fit.
    pub fn new(set: &SynthesisSet, seed: u64) -> Result<Self, XmlError> {
        if set.structures.is_empty() {
            return Err(XmlError::Config("the set has no structures".into()));
        }
        let counts: Vec<u64> = set.structures.iter().map(|s| s.count).collect();
        let structures =
            AliasIndex::from_counts(&counts).map_err(|e| XmlError::Config(format!("structure frequencies: {e}")))?;
        let mut compiler = Compiler::new(set);
        let templates = set
            .structures
            .iter()
            .map(|s| template::compile(&s.skeleton, |path, context| compiler.source(path, context)))
            .collect::<Result<Vec<_>, _>>()?;
        let sources = compiler.sources;
        let lengths: Vec<f64> = sources.iter().map(Source::expected_len).collect();
        let total: f64 = counts.iter().map(|&c| c as f64).sum();
        let expected_len = templates
            .iter()
            .zip(&counts)
            .map(|(t, &c)| {
                let values: f64 = t.sources().map(|s| lengths.get(s).copied().unwrap_or(0.0)).sum();
                (t.literal_len() as f64 + values) * c as f64 / total
            })
            .sum();
        Ok(Generator {
            base: Rng::new(seed),
            structures,
            templates,
            sources,
            split_root: set.info.split_root.clone(),
            expected_len,
        })
    }

    /// Appends document `i` to `out` (no XML declaration, no newline).
    /// Depends only on the seed and `i`.
    pub fn document(&self, i: u64, out: &mut Vec<u8>) {
        let mut cursor = Cursor::append(out);
        self.write(self.base.stream(i), &mut cursor);
        cursor.finish();
    }

    /// Appends documents `range`, each followed by a newline: the same
    /// bytes as [`Generator::document`] for each.
    pub fn documents(&self, range: Range<u64>, out: &mut Vec<u8>) {
        let mut cursor = Cursor::append(out);
        let mut next = range.start;
        while range.end.saturating_sub(next) >= STREAMS_AHEAD as u64 {
            let streams: [Rng; STREAMS_AHEAD] = std::array::from_fn(|k| self.base.stream(next + k as u64));
            for rng in streams {
                self.write(rng, &mut cursor);
                cursor.push(b'\n');
            }
            next += STREAMS_AHEAD as u64;
        }
        for i in next..range.end {
            self.write(self.base.stream(i), &mut cursor);
            cursor.push(b'\n');
        }
        cursor.finish();
    }

    /// Writes the document whose generator is `rng`.
    #[inline]
    fn write(&self, mut rng: Rng, out: &mut Cursor) {
        let structure = self.structures.sample(&mut rng);
        if let Some(template) = self.templates.get(structure) {
            template.fill(out, |source, out| {
                if let Some(source) = self.sources.get(source) {
                    source.write(&mut rng, out);
                }
            });
        }
    }

    /// The root element that wraps several documents in one file.
    pub fn split_root(&self) -> Option<&str> {
        self.split_root.as_deref()
    }

    /// Expected length of a document in bytes, estimated from the set.
    pub fn expected_document_len(&self) -> f64 {
        self.expected_len
    }

    /// Documents per work batch: about [`BATCH_BYTES`] of output. Depends
    /// only on the set, so batch boundaries (and gzip members) do not
    /// depend on the thread count.
    pub(crate) fn batch_documents(&self) -> u64 {
        let n = (BATCH_BYTES / self.expected_len.max(1.0)).round();
        (n as u64).clamp(1, MAX_BATCH_DOCUMENTS)
    }
}

/// Builds one value source per (path, context), on first use.
struct Compiler<'s> {
    paths: FastMap<Md5Hash, &'s PathInfo>,
    categorical: FastMap<Md5Hash, Vec<&'s CategoricalCount>>,
    numeric: FastMap<Md5Hash, &'s NumericPath>,
    built: FastMap<(Md5Hash, Context), usize>,
    sources: Vec<Source>,
}

impl<'s> Compiler<'s> {
    fn new(set: &'s SynthesisSet) -> Self {
        let mut categorical: FastMap<Md5Hash, Vec<&CategoricalCount>> = FastMap::default();
        for row in &set.categorical {
            categorical.entry(row.path).or_default().push(row);
        }
        Compiler {
            paths: set.paths.iter().map(|p| (p.hash, p)).collect(),
            categorical,
            numeric: set.numeric.iter().map(|n| (n.path, n)).collect(),
            built: FastMap::default(),
            sources: Vec::new(),
        }
    }

    fn source(&mut self, path_text: &str, context: Context) -> Result<usize, XmlError> {
        let hash = md5_of(path_text);
        if let Some(&i) = self.built.get(&(hash, context)) {
            return Ok(i);
        }
        let path = self
            .paths
            .get(&hash)
            .ok_or_else(|| XmlError::Config(format!("path {hash} of a skeleton is not in the set")))?;
        let source = match path.kind {
            ValueKind::Categorical => {
                let rows = self.categorical.get(&hash).map(Vec::as_slice).unwrap_or_default();
                values::categorical(path, rows, context)?
            }
            ValueKind::Numeric => {
                let numeric = self
                    .numeric
                    .get(&hash)
                    .ok_or_else(|| XmlError::Config(format!("numeric path {hash} has no numeric record")))?;
                values::numeric(path, numeric)?
            }
        };
        self.sources.push(source);
        let i = self.sources.len() - 1;
        self.built.insert((hash, context), i);
        Ok(i)
    }
}
