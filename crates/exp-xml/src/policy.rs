//! Attribute policy: whether attribute values belong to the structure (paths
//! and skeletons) or are treated as values.
//!
//! Identifiers such as `id="0001"` or `name="b"` distinguish sensors and
//! belong in the path; timestamps or sequence numbers are unique per document
//! and would make every document its own structure. `Auto` tells the two
//! apart by counting distinct values per attribute in a first pass.

use std::collections::{HashMap, HashSet};

/// How attribute values are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributePolicy {
    /// Keep every attribute value in paths and skeletons.
    Keep,
    /// Keep only attribute names; values become values of the pseudo path
    /// `<element path>@name`.
    Names,
    /// Keep an attribute's value only when that attribute (element path by
    /// names + attribute name) has at most `max_distinct` distinct values in
    /// the corpus; otherwise as `Names`.
    Auto { max_distinct: usize },
}

/// Key of an attribute independent of any attribute values: the element's
/// path by tag names only, then `@name`, e.g. `<device><sensor>@name`.
/// Written into a reused buffer: this runs for every attribute occurrence.
pub(crate) fn attribute_key<'b>(buf: &'b mut String, names_path: &str, attr: &str) -> &'b str {
    buf.clear();
    buf.push_str(names_path);
    buf.push('@');
    buf.push_str(attr);
    buf
}

/// First-pass result for `Auto`: distinct values per attribute, each set
/// capped at `max_distinct + 1` so a timestamp attribute costs `K + 1`
/// strings, not one per document.
#[derive(Debug, Default)]
pub struct AttributeCensus {
    max_distinct: usize,
    seen: HashMap<String, HashSet<String>>,
}

impl AttributeCensus {
    pub fn new(max_distinct: usize) -> Self {
        Self {
            max_distinct,
            seen: HashMap::new(),
        }
    }

    pub(crate) fn record(&mut self, key: &str, value: &str) {
        let cap = self.max_distinct.saturating_add(1);
        if let Some(set) = self.seen.get_mut(key) {
            // Look up before allocating: most occurrences repeat a value.
            if set.len() < cap && !set.contains(value) {
                set.insert(value.to_owned());
            }
        } else {
            let mut set = HashSet::new();
            set.insert(value.to_owned());
            self.seen.insert(key.to_owned(), set);
        }
    }

    /// Whether the attribute's value is kept in paths (at most K distinct).
    pub fn keeps(&self, key: &str) -> bool {
        self.seen.get(key).is_none_or(|set| set.len() <= self.max_distinct)
    }

    /// Number of distinct attributes seen.
    pub fn attributes(&self) -> usize {
        self.seen.len()
    }
}

/// Decision for one attribute under a policy (with the census for `Auto`).
#[derive(Debug)]
pub(crate) enum Decider<'a> {
    Keep,
    Names,
    Census(&'a AttributeCensus),
}

impl Decider<'_> {
    /// `scratch` is a reused buffer for the attribute key.
    pub(crate) fn keeps(&self, names_path: &str, attr: &str, scratch: &mut String) -> bool {
        match self {
            Decider::Keep => true,
            Decider::Names => false,
            Decider::Census(c) => c.keeps(attribute_key(scratch, names_path, attr)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn census_sets_are_capped_at_k_plus_one() {
        let mut census = AttributeCensus::new(3);
        for i in 0..1000 {
            census.record("<e>@ts", &i.to_string());
            census.record("<e>@kind", ["a", "b", "c"][i % 3]);
        }
        assert_eq!(census.seen.get("<e>@ts").map(HashSet::len), Some(4));
        assert!(!census.keeps("<e>@ts"));
        assert!(census.keeps("<e>@kind"));
        // Never seen: nothing to drop.
        assert!(census.keeps("<e>@other"));
        assert_eq!(census.attributes(), 2);
    }
}
