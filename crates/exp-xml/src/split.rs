//! A split that most likely names the wrong element: `split_at` names the
//! documents themselves (`event` in `<log><event>…</event>…</log>`), and
//! naming their parent instead (`log`) is read without error, each input
//! then being one document. [`SplitSuspicion`] says so when a split yields
//! at most one document per input while the documents are large.

use std::fmt;

/// Mean document size above which at most one document per input is
/// suspicious: event-log documents are hundreds of bytes, and a corpus
/// written one document per file (a generated set read back) stays far
/// below it.
pub const SUSPICIOUS_DOCUMENT_BYTES: u64 = 16 * 1024;

/// A split that yielded suspiciously few documents for its input size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitSuspicion {
    pub split_at: String,
    pub inputs: usize,
    pub documents: u64,
    /// Bytes of the inputs as stored (compressed ones as compressed).
    pub bytes: u64,
}

impl SplitSuspicion {
    /// `Some` when `split_at` is set, the split gave at most one document
    /// per input (but at least one) and they average more than
    /// [`SUSPICIOUS_DOCUMENT_BYTES`].
    pub fn check(split_at: Option<&str>, inputs: usize, documents: u64, bytes: u64) -> Option<SplitSuspicion> {
        let split_at = split_at?;
        let few = documents > 0 && documents <= inputs as u64;
        (few && bytes / documents > SUSPICIOUS_DOCUMENT_BYTES).then(|| SplitSuspicion {
            split_at: split_at.to_owned(),
            inputs,
            documents,
            bytes,
        })
    }
}

impl fmt::Display for SplitSuspicion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            split_at,
            inputs,
            documents,
            bytes,
        } = self;
        write!(
            f,
            "split at `{split_at}` gave {documents} document(s) from {inputs} input(s) of {bytes} bytes \
             (about {} bytes a document): `split_at` names the document elements themselves, \
             the repeated children of the root (`event` in `<log><event>…</event></log>`), not the root",
            bytes / documents
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_large_documents_are_suspicious() {
        let found = SplitSuspicion::check(Some("log"), 3, 3, 180_000).unwrap();
        assert!(found.to_string().contains("3 document(s) from 3 input(s)"), "{found}");
        assert!(found.to_string().contains("not the root"), "{found}");
    }

    #[test]
    fn many_or_small_documents_or_no_split_are_not() {
        // 1,200 events in 3 files: the right split.
        assert_eq!(SplitSuspicion::check(Some("event"), 3, 1200, 180_000), None);
        // A generated set read back, one small document per file.
        assert_eq!(SplitSuspicion::check(Some("event"), 500, 500, 75_000), None);
        // Without a split, a whole file is meant to be one document.
        assert_eq!(SplitSuspicion::check(None, 3, 3, 180_000), None);
        // No document at all is an error reported elsewhere.
        assert_eq!(SplitSuspicion::check(Some("x"), 3, 0, 180_000), None);
    }
}
