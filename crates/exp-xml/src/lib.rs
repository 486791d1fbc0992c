//! Extraction of structure, categorical values and numeric value collections
//! from a schema-less XML corpus (the core of the planned `expc xml`
//! commands; see docs/architecture.md §4.12).
//!
//! Inputs are read with quick-xml's streaming reader; a document is the whole
//! input or, with [`Config::split_at`], each child of the root with that
//! name. Malformed documents are skipped and recorded, entities are never
//! expanded, and nothing recurses on document depth.

mod error;
mod extract;
mod parse;
mod paths;
mod policy;
mod skeleton;
mod values;

use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

pub use error::{SkipReason, Skipped, XmlError};
pub use extract::{census_input, Extractor};
pub use parse::MAX_VALUE_LEN;
pub use paths::md5_of;
pub use policy::{AttributeCensus, AttributePolicy};
pub use values::{NumberFormat, NumericSummary};

/// Default number of distinct values up to which a numeric path is still
/// treated as categorical (status codes, small enumerations).
pub const DEFAULT_CATEGORICAL_THRESHOLD: usize = 30;

/// An MD5 digest; `Display` is lowercase hex, as `md5sum` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Md5Hash(pub [u8; 16]);

impl fmt::Display for Md5Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// Extraction settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Element name of the documents under the root (e.g. `event`); `None`
    /// makes each input one document.
    pub split_at: Option<String>,
    pub policy: AttributePolicy,
    /// Paths with at most this many distinct values are categorical.
    pub categorical_threshold: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            split_at: None,
            policy: AttributePolicy::Keep,
            categorical_threshold: DEFAULT_CATEGORICAL_THRESHOLD,
        }
    }
}

/// One input of a corpus. Files are opened once per pass (twice for
/// `AttributePolicy::Auto`).
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
}

/// Everything extracted from a corpus.
#[derive(Debug, Clone)]
pub struct Extraction {
    /// By frequency, most frequent first.
    pub structures: Vec<Structure>,
    /// In order of first appearance.
    pub paths: Vec<PathInfo>,
    /// Grouped by path (path order), most frequent value first.
    pub categorical: Vec<CategoricalCount>,
    pub numeric: Vec<NumericSummary>,
    pub summary: CorpusSummary,
}

fn for_each_input(sources: &[Source], mut f: impl FnMut(&str, &mut dyn std::io::BufRead)) -> Result<(), XmlError> {
    for source in sources {
        match source {
            Source::File(path) => {
                let file = File::open(path).map_err(|source| XmlError::Open {
                    path: path.clone(),
                    source,
                })?;
                f(&path.display().to_string(), &mut BufReader::new(file));
            }
            Source::Memory { name, data } => f(name, &mut data.as_slice()),
        }
    }
    Ok(())
}

/// Extracts a corpus; `Auto` reads it twice (census, then extraction).
pub fn extract(sources: &[Source], config: &Config) -> Result<Extraction, XmlError> {
    if config.split_at.as_deref() == Some("") {
        return Err(XmlError::Config("split_at must not be empty".into()));
    }
    let split = config.split_at.as_deref();
    let census = match config.policy {
        AttributePolicy::Auto { max_distinct } => {
            let mut census = AttributeCensus::new(max_distinct);
            for_each_input(sources, |name, r| census_input(&mut census, name, r, split))?;
            Some(census)
        }
        _ => None,
    };
    let mut extractor = Extractor::new(config, census.as_ref());
    for_each_input(sources, |name, r| extractor.feed(name, r))?;
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
