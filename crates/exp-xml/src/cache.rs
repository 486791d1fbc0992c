//! `AttributePolicy::Auto` needs the whole corpus's attribute census before
//! it can extract anything, so the corpus is read twice. Parsing is about
//! half of each pass; the census pass therefore keeps the parsed documents
//! (within a memory budget) and the extraction pass walks them instead of
//! parsing the inputs again. Past the budget the kept documents are dropped
//! and the inputs are read again: the result is the same either way.

use std::io::BufRead;

use crate::extract::census_document;
use crate::parallel::{Item, Partial};
use crate::parse::DocReader;
use crate::{AttributeCensus, Extractor};

/// Parsed documents kept at most (their heap size).
pub(crate) const BUDGET: usize = 256 << 20;

/// The documents of the inputs read so far, in order.
pub(crate) struct DocCache {
    inputs: Vec<(Vec<Item>, Option<String>)>,
    bytes: usize,
    budget: usize,
    overflowed: bool,
}

impl Default for DocCache {
    fn default() -> Self {
        Self::with_budget(BUDGET)
    }
}

impl DocCache {
    fn with_budget(budget: usize) -> Self {
        Self {
            inputs: Vec::new(),
            bytes: 0,
            budget,
            overflowed: false,
        }
    }

    /// The census pass over one input, keeping its documents.
    pub fn census_input(
        &mut self,
        census: &mut AttributeCensus,
        input: &str,
        source: &mut dyn BufRead,
        split_at: Option<&str>,
    ) {
        let mut reader = DocReader::new(input, source, split_at);
        let mut items = Vec::new();
        let mut stack = Vec::new();
        while let Some(doc) = reader.next_document() {
            let item = match doc {
                Ok(doc) => {
                    census_document(census, doc, &mut stack);
                    if self.overflowed {
                        continue;
                    }
                    self.bytes += doc.heap_size();
                    Item::Doc(doc.clone())
                }
                Err(skipped) => Item::Skip(skipped),
            };
            if self.bytes > self.budget {
                self.overflowed = true;
                self.inputs.clear();
                items.clear();
            }
            if !self.overflowed {
                items.push(item);
            }
        }
        if !self.overflowed {
            self.inputs.push((items, reader.root().map(str::to_owned)));
        }
    }

    /// Feeds the kept documents to `extractor`; `false` (and nothing fed)
    /// when they did not fit the budget.
    pub fn replay(self, extractor: &mut Extractor<'_>) -> bool {
        if self.overflowed {
            return false;
        }
        for (items, root) in self.inputs {
            for item in &items {
                extractor.add(item);
            }
            extractor.end_input(root.as_deref());
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttributePolicy, Config};

    fn two_pass(budget: usize) -> (bool, crate::Extraction) {
        let mut xml = String::from("<log>");
        for i in 0..200 {
            xml.push_str(&format!("<e ts='{i}' k='{}'><v>{}</v></e>", i % 3, i % 7));
        }
        xml.push_str("<e><v>1</w></e></log>");
        let config = Config {
            split_at: Some("e".into()),
            policy: AttributePolicy::Auto { max_distinct: 5 },
            ..Config::default()
        };
        let mut census = AttributeCensus::new(5);
        let mut cache = DocCache::with_budget(budget);
        for name in ["a", "b"] {
            cache.census_input(&mut census, name, &mut xml.as_bytes(), Some("e"));
        }
        let mut extractor = Extractor::new(&config, Some(&census));
        let replayed = cache.replay(&mut extractor);
        if !replayed {
            for name in ["a", "b"] {
                extractor.feed(name, xml.as_bytes());
            }
        }
        (replayed, extractor.finish())
    }

    #[test]
    fn kept_documents_and_a_second_read_give_the_same_extraction() {
        let (replayed, kept) = two_pass(BUDGET);
        let (reread, again) = two_pass(4096);
        assert!(replayed && !reread);
        assert_eq!(kept.summary, again.summary);
        assert_eq!(kept.summary.documents, 400);
        assert_eq!(kept.summary.skipped.len(), 2);
        assert_eq!(kept.paths, again.paths);
        assert_eq!(kept.structures, again.structures);
        assert_eq!(kept.categorical, again.categorical);
        assert_eq!(kept.numeric, again.numeric);
    }
}
