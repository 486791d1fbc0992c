//! Opening tags as written → path node, so a tag seen before costs one
//! hash lookup: no attribute parsing, sorting, policy decisions or
//! canonical tag text.
//!
//! Keyed by the parent's path node and the tag's raw bytes (name and
//! attributes as written). Only tags whose every attribute value is kept in
//! the path are cached: a tag carrying a value outside the structure (a
//! timestamp, say) has that value to record each time, and would fill the
//! cache with tags seen once.

use std::hash::BuildHasher;

use crate::hash::FastMap;

#[derive(Debug, Default)]
pub(crate) struct RawTags {
    /// Hash of the key → newest entry with that hash; entries whose hashes
    /// collide are chained through [`Entry::next`].
    index: FastMap<u64, usize>,
    entries: Vec<Entry>,
    /// Every entry's name and attributes, concatenated.
    bytes: Vec<u8>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    parent: usize,
    /// `name` then `attrs`, as ranges of `bytes`.
    name: (usize, usize),
    attrs: (usize, usize),
    found: Found,
    next: Option<usize>,
}

/// What a cached tag opens: its path node and, under `Auto`, its node in the
/// census's names trie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub node: usize,
    pub names: usize,
}

fn key_hash(parent: usize, name: &[u8], attrs: &[u8]) -> u64 {
    foldhash::fast::FixedState::default().hash_one((parent, name, attrs))
}

impl RawTags {
    pub fn get(&self, parent: usize, name: &[u8], attrs: &[u8]) -> Option<Found> {
        let mut at = self.index.get(&key_hash(parent, name, attrs)).copied();
        while let Some(i) = at {
            let e = self.entries.get(i)?;
            if e.parent == parent
                && self.bytes.get(e.name.0..e.name.1) == Some(name)
                && self.bytes.get(e.attrs.0..e.attrs.1) == Some(attrs)
            {
                return Some(e.found);
            }
            at = e.next;
        }
        None
    }

    pub fn insert(&mut self, parent: usize, name: &[u8], attrs: &[u8], found: Found) {
        if self.get(parent, name, attrs).is_some() {
            return;
        }
        let hash = key_hash(parent, name, attrs);
        let mut push = |b: &[u8]| {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(b);
            (start, self.bytes.len())
        };
        let (name, attrs) = (push(name), push(attrs));
        let id = self.entries.len();
        let next = self.index.insert(hash, id);
        self.entries.push(Entry {
            parent,
            name,
            attrs,
            found,
            next,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_exact_tags_under_their_parent() {
        let mut tags = RawTags::default();
        let a = Found { node: 7, names: 3 };
        tags.insert(1, b"sensor", b" id=\"1\"", a);
        assert_eq!(tags.get(1, b"sensor", b" id=\"1\""), Some(a));
        assert_eq!(tags.get(2, b"sensor", b" id=\"1\""), None);
        assert_eq!(tags.get(1, b"sensor", b" id=\"2\""), None);
        assert_eq!(tags.get(1, b"sensor id", b"=\"1\""), None);
        // A second insert of the same key keeps the first.
        tags.insert(1, b"sensor", b" id=\"1\"", Found { node: 9, names: 3 });
        assert_eq!(tags.get(1, b"sensor", b" id=\"1\""), Some(a));
    }
}
