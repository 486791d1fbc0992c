//! Extraction of structure, categorical values and numeric value collections
//! from a schema-less XML corpus (the core of the planned `expc xml`
//! commands; see docs/architecture.md §4.12).
//!
//! Inputs (files, `.gz`, `.zip` entries; see [`expand_inputs`]) are read
//! with a streaming byte-level lexer (`lexer/`); a document is the whole
//! input or, with [`Config::split_at`], each child of the root with that
//! name. Malformed documents are skipped and recorded, entities are never
//! expanded, nothing recurses on document depth, and a document nesting
//! deeper than [`MAX_DEPTH`] levels is skipped (its paths alone would take
//! memory quadratic in its depth).

pub mod compare;
mod error;
mod extract;
pub mod generate;
mod hash;
mod inputs;
mod lexer;
pub mod obfuscate;
mod parallel;
mod parse;
mod paths;
pub mod pipeline;
mod policy;
pub mod set;
mod short;
mod skeleton;
mod split;
mod unescape;
mod values;

use std::fmt;
use std::path::PathBuf;

pub use compare::{compare, CompareConfig, Comparison, ProbeQuery};
pub use error::{SkipReason, Skipped, XmlError};
pub use extract::Extractor;
pub use inputs::expand_inputs;
pub use parse::{MAX_DEPTH, MAX_VALUE_LEN};
pub use paths::md5_of;
pub use pipeline::{extract_set, SetError, SetJob};
pub use policy::{census_input, AttributeCensus, AttributePolicy};
pub use split::{SplitSuspicion, SUSPICIOUS_DOCUMENT_BYTES};
pub use values::{NumberFormat, NumericSummary};

/// Largest `set.json` or obfuscation `map.json` read (the map names every
/// distinct string of a corpus: large, never this large); a FIFO or device
/// in their place is refused.
pub const MAX_SET_FILE_BYTES: exp_files::Cap = exp_files::Cap::new(1 << 30, "a set or map file");

/// Default number of distinct values up to which a numeric path is still
/// treated as categorical (status codes, small enumerations).
pub const DEFAULT_CATEGORICAL_THRESHOLD: usize = 30;

/// An MD5 digest; `Display` is lowercase hex, as `md5sum` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Md5Hash(pub [u8; 16]);

impl Md5Hash {
    /// Lowercase hex, as [`Display`](fmt::Display) writes it: by table, as
    /// a set writes one per categorical value.
    pub fn hex(&self) -> [u8; 32] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0; 32];
        for (pair, byte) in out.chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 0xf)];
        }
        out
    }
}

impl fmt::Display for Md5Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.hex();
        // Hex digits are ASCII.
        f.pad(std::str::from_utf8(&hex).map_err(|_| fmt::Error)?)
    }
}

/// Extraction settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Element name of the documents themselves, the root's repeated
    /// children (`event` in `<log><event>…</event></log>`, not `log`);
    /// `None` makes each input one document. A root with this name is one
    /// document (a generated set read back one document per file).
    pub split_at: Option<String>,
    pub policy: AttributePolicy,
    /// Paths with at most this many distinct values are categorical, unless
    /// they are count data a discrete family fits better.
    pub categorical_threshold: usize,
    /// Threads for [`extract`]: 1 reads everything on the calling thread;
    /// more read batches of consecutive inputs, or a single large plain
    /// input with `split_at` in parts cut at document starts (see
    /// `parallel/`); 0 uses every available core. The result is the same.
    pub threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            split_at: None,
            policy: AttributePolicy::Keep,
            categorical_threshold: DEFAULT_CATEGORICAL_THRESHOLD,
            threads: 1,
        }
    }
}

/// One input of a corpus. Files are opened once per pass (twice for
/// `AttributePolicy::Auto`); a `.gz` file is read through gzip, each entry
/// of a `.zip` archive is an input named `archive.zip:entry` (see
/// [`expand_inputs`] for command-line arguments).
#[derive(Debug, Clone)]
pub enum Source {
    File(PathBuf),
    Memory { name: String, data: Vec<u8> },
}

/// A distinct document skeleton.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Structure {
    pub hash: Md5Hash,
    pub count: u64,
    pub skeleton: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Categorical,
    Numeric,
}

/// A distinct root-to-leaf path (or attribute pseudo path `<...>@name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathInfo {
    /// MD5 of `text`.
    pub hash: Md5Hash,
    pub text: String,
    pub kind: ValueKind,
    pub occurrences: u64,
}

/// Count of one value of a categorical path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoricalCount {
    pub path: Md5Hash,
    pub value: String,
    pub count: u64,
    /// The value was longer than [`MAX_VALUE_LEN`] and is cut to that.
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusSummary {
    /// Well-formed documents extracted.
    pub documents: u64,
    pub unique_tags: usize,
    /// Distinct attribute names.
    pub unique_attributes: usize,
    pub paths: usize,
    pub structures: usize,
    pub skipped: Vec<Skipped>,
    /// With [`Config::split_at`]: the root element that held the documents
    /// (of the first input that has one), so generation can wrap
    /// multi-document files the same way.
    pub split_root: Option<String>,
}

/// Everything extracted from a corpus.
#[derive(Debug, Clone)]
pub struct Extraction {
    /// By frequency, most frequent first.
    pub structures: Vec<Structure>,
    /// Sorted by text (a depth-first walk of the path tree).
    pub paths: Vec<PathInfo>,
    /// Grouped by path (path order), most frequent value first.
    pub categorical: Vec<CategoricalCount>,
    pub numeric: Vec<NumericSummary>,
    pub summary: CorpusSummary,
}

/// Calls `f` with the name and a reader of every input unit of `sources`
/// (files, gzip streams, archive entries), in order. A missing file is an
/// error; a corrupt compressed input reaches `f` as a reader that fails.
fn for_each_input(sources: &[Source], mut f: impl FnMut(&str, &mut dyn std::io::BufRead)) -> Result<(), XmlError> {
    for unit in inputs::units(sources)? {
        inputs::with_unit(&unit, &mut f)?;
    }
    Ok(())
}

/// Extracts a corpus in one pass (`Auto` too, see `extract/collapse.rs`).
/// With `threads > 1` the work is split into batches of inputs, or one
/// large input into parts; the result is identical to one thread's.
pub fn extract(sources: &[Source], config: &Config) -> Result<Extraction, XmlError> {
    if config.split_at.as_deref() == Some("") {
        return Err(XmlError::Config("split_at must not be empty".into()));
    }
    let threads = match config.threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    };
    let units = inputs::units(sources)?;
    let extractor = if threads > 1 {
        parallel::run(&units, config, threads)?
    } else {
        let (mut extractor, mut reading) = (Extractor::new(config), inputs::Inputs::default());
        for unit in &units {
            reading.with(unit, |name, r| extractor.feed(name, r))?;
        }
        extractor
    };
    Ok(extractor.finish())
}

/// Skeleton and path counts a policy yields on a corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyCount {
    pub policy: AttributePolicy,
    pub structures: usize,
    pub paths: usize,
}

/// Runs the extraction once per policy and reports how many skeletons and
/// paths each yields, to choose a policy for a corpus.
pub fn policy_counts(
    sources: &[Source],
    config: &Config,
    policies: &[AttributePolicy],
) -> Result<Vec<PolicyCount>, XmlError> {
    policies
        .iter()
        .map(|&policy| {
            let config = Config {
                policy,
                ..config.clone()
            };
            let x = extract(sources, &config)?;
            Ok(PolicyCount {
                policy,
                structures: x.summary.structures,
                paths: x.summary.paths,
            })
        })
        .collect()
}
