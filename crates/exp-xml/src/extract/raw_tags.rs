//! Opening tags as written → path node, so a tag seen before costs one
//! comparison or one hash lookup: no name check, attribute parsing,
//! sorting, policy decisions or canonical tag text.
//!
//! Keyed by the parent's path node and the tag's raw bytes (name and
//! attributes as written). Only tags whose every attribute value is kept in
//! the path are cached: a tag carrying a value outside the structure (a
//! timestamp, say) has that value to record each time, and would fill the
//! cache with tags seen once.
//!
//! Documents of a corpus mostly repeat each other's shape, so before
//! hashing, the lookup tries the tag that came at the same place last
//! time: the first child of the element just opened, or the next sibling
//! of the element just closed.

use std::hash::BuildHasher;

use crate::hash::FastMap;
use crate::short::same;

#[derive(Debug, Default)]
pub(crate) struct RawTags {
    /// Hash of the key → newest entry with that hash; entries whose hashes
    /// collide are chained through [`Entry::next`].
    index: FastMap<u64, usize>,
    entries: Vec<Entry>,
    /// Every entry's tag, concatenated.
    bytes: Vec<u8>,
    /// Per path node: the entry opened last time right after opening it
    /// (`[0]`) and right after closing it (`[1]`).
    follow: Vec<[Option<usize>; 2]>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    parent: usize,
    /// The tag, as a range of `bytes`.
    tag: (usize, usize),
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

/// What happened just before a tag: which element was opened or closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    Opened(usize),
    Closed(usize),
}

impl After {
    fn slot(self) -> (usize, usize) {
        match self {
            After::Opened(node) => (node, 0),
            After::Closed(node) => (node, 1),
        }
    }
}

fn key_hash(parent: usize, tag: &[u8]) -> u64 {
    foldhash::fast::FixedState::default().hash_one((parent, tag))
}

impl RawTags {
    /// The cached tag `tag` under `parent`; `after` says what came just
    /// before it, to try last time's successor first.
    #[inline]
    pub fn get(&mut self, parent: usize, tag: &[u8], after: After) -> Option<Found> {
        let (node, side) = after.slot();
        let predicted = self.follow.get(node).and_then(|f| f[side]);
        if let Some(e) = predicted.and_then(|i| self.entries.get(i)) {
            if e.parent == parent && self.bytes.get(e.tag.0..e.tag.1).is_some_and(|b| same(b, tag)) {
                return Some(e.found);
            }
        }
        let i = self.find(parent, tag)?;
        if self.follow.len() <= node {
            self.follow.resize(node + 1, [None; 2]);
        }
        self.follow[node][side] = Some(i);
        self.entries.get(i).map(|e| e.found)
    }

    fn find(&self, parent: usize, tag: &[u8]) -> Option<usize> {
        let mut at = self.index.get(&key_hash(parent, tag)).copied();
        while let Some(i) = at {
            let e = self.entries.get(i)?;
            if e.parent == parent && self.bytes.get(e.tag.0..e.tag.1).is_some_and(|b| same(b, tag)) {
                return Some(i);
            }
            at = e.next;
        }
        None
    }

    pub fn insert(&mut self, parent: usize, tag: &[u8], found: Found) {
        if self.find(parent, tag).is_some() {
            return;
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(tag);
        let id = self.entries.len();
        let next = self.index.insert(key_hash(parent, tag), id);
        self.entries.push(Entry {
            parent,
            tag: (start, self.bytes.len()),
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
        let after = After::Opened(1);
        let a = Found { node: 7, names: 3 };
        tags.insert(1, b"sensor id=\"1\"", a);
        assert_eq!(tags.get(1, b"sensor id=\"1\"", after), Some(a));
        // Predicted now, and still only under the same parent and bytes.
        assert_eq!(tags.get(1, b"sensor id=\"1\"", after), Some(a));
        assert_eq!(tags.get(2, b"sensor id=\"1\"", after), None);
        assert_eq!(tags.get(1, b"sensor id=\"2\"", after), None);
        assert_eq!(tags.get(1, b"sensor id=\"1\"", After::Closed(1)), Some(a));
        // A second insert of the same key keeps the first.
        tags.insert(1, b"sensor id=\"1\"", Found { node: 9, names: 3 });
        assert_eq!(tags.get(1, b"sensor id=\"1\"", after), Some(a));
    }
}
