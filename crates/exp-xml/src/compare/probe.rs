//! The probe query: count elements with a given tag and attribute (and
//! optionally attribute value) in its own streaming pass, timed, so the
//! runtime is that of the query alone.

use std::time::Instant;

use serde::Serialize;

use crate::parse::{DocReader, Token};
use crate::{Source, XmlError};

/// Elements named `tag` carrying `attribute` (equal to `value` when given;
/// compared after entity unescaping).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeQuery {
    pub tag: String,
    pub attribute: String,
    pub value: Option<String>,
}

/// The probe's result on one corpus.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeRun {
    /// Matching elements in well-formed documents (skipped documents are
    /// not searched, as in the comparison).
    pub matches: u64,
    pub documents: u64,
    /// Wall-clock time of the pass: reading, parsing and matching.
    pub seconds: f64,
}

/// Runs `query` over `sources`, documents split as in `split_at`.
pub fn probe(sources: &[Source], split_at: Option<&str>, query: &ProbeQuery) -> Result<ProbeRun, XmlError> {
    let start = Instant::now();
    let mut matches = 0u64;
    let mut documents = 0u64;
    crate::for_each_input(sources, |name, input| {
        let mut reader = DocReader::new(name, input, split_at);
        while let Some(doc) = reader.next_document() {
            let Ok(doc) = doc else { continue };
            documents += 1;
            for token in &doc.tokens {
                let Token::Open { name, attrs } = *token else { continue };
                if doc.str(name) != query.tag {
                    continue;
                }
                let hit = doc.attrs(attrs).iter().any(|&(k, v)| {
                    doc.str(k) == query.attribute && query.value.as_deref().is_none_or(|want| doc.str(v) == want)
                });
                matches += u64::from(hit);
            }
        }
    })?;
    Ok(ProbeRun {
        matches,
        documents,
        seconds: start.elapsed().as_secs_f64(),
    })
}
