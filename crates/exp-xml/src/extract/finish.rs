//! The end of an extraction: `Auto`'s collapse, then paths classified as
//! categorical or numeric, in the output order.

use crate::hash::FastSet;
use crate::paths::PathTable;
use crate::skeleton::tag_parts;
use crate::{CategoricalCount, CorpusSummary, Extraction, PathInfo, ValueKind};

use super::{collapse, Extractor};

impl Extractor {
    /// Classifies the paths and returns the extraction; structures are
    /// ordered by frequency (then hash), paths by text.
    pub fn finish(self) -> Extraction {
        let (mut paths, skeletons) = match &self.census {
            Some(census) => collapse::collapse(self.paths, self.skeletons, census),
            None => (self.paths, self.skeletons),
        };
        let (unique_tags, unique_attributes) = names_used(&paths, &skeletons.opens(paths.len()));
        let structures = skeletons.into_structures(&paths);
        let mut entries: Vec<_> = paths.take_entries().into_iter().map(|(_, e)| Box::new(e)).collect();
        // Boxed: entries are large, and a corpus can have millions.
        entries.sort_unstable_by(|a, b| a.text.cmp(&b.text));
        let mut infos = Vec::new();
        let mut categorical = Vec::new();
        let mut numeric = Vec::new();
        for entry in entries {
            let entry = *entry;
            let mut values = entry.values;
            let is_numeric = values.is_numeric(self.config.categorical_threshold);
            infos.push(PathInfo {
                hash: entry.hash,
                text: entry.text,
                kind: if is_numeric {
                    ValueKind::Numeric
                } else {
                    ValueKind::Categorical
                },
                occurrences: entry.occurrences,
            });
            match (is_numeric, values.numeric.take()) {
                (true, Some(acc)) => numeric.push(acc.summarize(entry.hash)),
                _ => {
                    let (counts, truncated) = values.into_counts();
                    let mut rows: Vec<CategoricalCount> = counts
                        .into_rows()
                        .map(|(value, count)| (value, count, false))
                        .chain(truncated.into_rows().map(|(value, count)| (value, count, true)))
                        .map(|(value, count, truncated)| CategoricalCount {
                            path: entry.hash,
                            value: value.into(),
                            count,
                            truncated,
                        })
                        .collect();
                    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.value.cmp(&b.value)));
                    categorical.extend(rows);
                }
            }
        }
        let summary = CorpusSummary {
            documents: self.documents,
            unique_tags,
            unique_attributes,
            paths: infos.len(),
            structures: structures.len(),
            skipped: self.skipped,
            split_root: self.split_root,
        };
        Extraction {
            structures,
            paths: infos,
            categorical,
            numeric,
            summary,
        }
    }
}

/// Distinct element names and attribute names of the tags opened in
/// well-formed documents (`opens` per path node).
fn names_used(paths: &PathTable, opens: &[u64]) -> (usize, usize) {
    let mut tags: FastSet<&str> = FastSet::default();
    let mut attributes: FastSet<&str> = FastSet::default();
    for (node, _) in opens.iter().enumerate().filter(|(_, &n)| n > 0) {
        let (name, attrs) = tag_parts(paths.tag_of(node).0);
        tags.insert(name);
        attributes.extend(attrs.into_iter().map(|(key, _)| key));
    }
    (tags.len(), attributes.len())
}
