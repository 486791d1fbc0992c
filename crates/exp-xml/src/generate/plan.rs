//! Options of a generation run and the plan derived from them: which
//! documents a run or shard produces, the batch grid, and the framing
//! (XML declaration, split-root wrapper) of streams and files.

use super::error::GenerateError;
use super::Generator;

const DECLARATION: &[u8] = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

/// How much to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Documents(u64),
    /// Uncompressed bytes (see the module docs); not with shards.
    Bytes(u64),
}

/// How documents are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One stream (stdout or a writer).
    Stream,
    FilePerDocument,
    /// `n` documents per file (n ≥ 1).
    DocumentsPerFile(u64),
}

/// Shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub amount: Amount,
    pub shard: Shard,
    pub layout: Layout,
    pub gzip: bool,
    /// Worker threads (0 counts as 1); the writer is one more thread.
    pub threads: usize,
}

/// The documents and framing of one run, derived from the options.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub start: u64,
    /// `None` for `Amount::Bytes`.
    pub end: Option<u64>,
    pub target: Option<u64>,
    pub batch: u64,
    /// Documents per file; `None` for the stream layout.
    pub per_file: Option<u64>,
    pub root: Option<String>,
    pub gzip: bool,
    pub first_shard: bool,
    pub last_shard: bool,
}

/// The root element of a file of several documents when the set has no
/// split root (its corpus was one document per file).
pub const DEFAULT_WRAPPER: &str = "documents";

impl Plan {
    pub fn new(generator: &Generator, o: &GenerateOptions) -> Result<Plan, GenerateError> {
        let Shard { index, count } = o.shard;
        if count == 0 || index >= count {
            return Err(GenerateError::Options(format!("shard {index}/{count} does not exist")));
        }
        let per_file = match o.layout {
            Layout::Stream => None,
            Layout::FilePerDocument => Some(1),
            Layout::DocumentsPerFile(0) => {
                return Err(GenerateError::Options("documents per file must be ≥ 1".into()));
            }
            Layout::DocumentsPerFile(n) => Some(n),
        };
        let (start, end, target) = match o.amount {
            Amount::Bytes(_) if count > 1 => {
                return Err(GenerateError::Options(
                    "--size cannot be sharded: give shards a document count".into(),
                ));
            }
            Amount::Bytes(target) => (0, (target == 0).then_some(0), Some(target)),
            Amount::Documents(total) => {
                // Shards split whole files (or documents for the stream).
                let unit = per_file.unwrap_or(1);
                let units = total.div_ceil(unit);
                let cut = |k: u64| (u128::from(units) * u128::from(k) / u128::from(count)) as u64;
                let start = cut(index).saturating_mul(unit).min(total);
                let end = cut(index + 1).saturating_mul(unit).min(total);
                (start, Some(end), None)
            }
        };
        Ok(Plan {
            start,
            end,
            target,
            batch: generator.batch_documents(),
            per_file,
            // Several documents in one file need one root: the corpus's
            // split root, or, for a set whose documents were whole files,
            // a wrapper of our own (several roots are not XML).
            root: generator
                .split_root()
                .map(str::to_owned)
                .or_else(|| matches!(per_file, Some(n) if n > 1).then(|| DEFAULT_WRAPPER.to_owned())),
            gzip: o.gzip,
            first_shard: index == 0,
            last_shard: index + 1 == count,
        })
    }

    /// Number of batches, `None` when unbounded (`Amount::Bytes`).
    pub fn batches(&self) -> Option<u64> {
        self.end.map(|end| {
            if end <= self.start {
                0
            } else {
                (end - 1) / self.batch - self.start / self.batch + 1
            }
        })
    }

    /// Documents of batch `k` (global grid of `batch` documents).
    pub fn batch_range(&self, k: u64) -> (u64, u64) {
        let cell = self.start / self.batch + k;
        let lo = (cell * self.batch).max(self.start);
        let hi = (cell + 1) * self.batch;
        (lo, self.end.map_or(hi, |end| hi.min(end)))
    }

    /// Whether files wrap their documents in the split root.
    fn wraps(&self) -> bool {
        self.root.is_some() && self.per_file != Some(1)
    }

    pub fn header(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(DECLARATION);
        if let (true, Some(root)) = (self.wraps(), &self.root) {
            out.push(b'<');
            out.extend_from_slice(root.as_bytes());
            out.extend_from_slice(b">\n");
        }
    }

    pub fn footer(&self, out: &mut Vec<u8>) {
        if let (true, Some(root)) = (self.wraps(), &self.root) {
            out.extend_from_slice(b"</");
            out.extend_from_slice(root.as_bytes());
            out.extend_from_slice(b">\n");
        }
    }
}
