//! Root-to-leaf paths: the table of distinct paths, each hashed once.

use md5::{Digest, Md5};

use crate::hash::FastMap;

use crate::values::ValueAcc;
use crate::Md5Hash;

/// MD5 of a text.
pub fn md5_of(text: &str) -> Md5Hash {
    Md5Hash(Md5::digest(text.as_bytes()).into())
}

/// One distinct path and its values.
#[derive(Debug)]
pub(crate) struct PathEntry {
    pub text: String,
    pub hash: Md5Hash,
    /// Leaves (or attribute occurrences) seen on this path.
    pub occurrences: u64,
    pub values: ValueAcc,
}

/// Distinct paths, found through a trie of opening
/// tags: a leaf looks up one tag per level from its parent's node instead of
/// hashing and comparing its whole path text; the path text is built from
/// the trie and hashed with MD5 once, when the path is first seen.
#[derive(Debug)]
pub(crate) struct PathTable {
    nodes: Vec<Node>,
    /// Every node's tag, concatenated (one allocation for all of them).
    tags: String,
    /// `(parent, hash of tag)` → the newest node with that key; nodes whose
    /// keys collide are chained through [`Node::next`].
    index: FastMap<(usize, u64), usize>,
    pub entries: Vec<PathEntry>,
}

/// Children looked up by a scan before the hash index: most elements have
/// a few distinct children, and comparing a few short tags is cheaper than
/// hashing one.
const SCANNED: usize = 4;

#[derive(Debug, Default, Clone, Copy)]
struct Node {
    /// The first children; later ones are only in the index.
    first: [usize; SCANNED],
    firsts: usize,
    parent: usize,
    /// The tag (or `@name`) this node adds to its parent's path, as a range
    /// of `tags`.
    tag: (usize, usize),
    entry: Option<usize>,
    next: Option<usize>,
}

impl Default for PathTable {
    fn default() -> Self {
        Self {
            nodes: vec![Node::default()],
            tags: String::new(),
            index: FastMap::default(),
            entries: Vec::new(),
        }
    }
}

fn hash_of(tag: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(tag)
}

impl PathTable {
    /// The root node: the empty path.
    pub const ROOT: usize = 0;

    fn tag(&self, node: &Node) -> &str {
        self.tags.get(node.tag.0..node.tag.1).unwrap_or_default()
    }

    /// Number of nodes, the root included; nodes are numbered in creation
    /// order, so a parent always comes before its children.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The tag `node` adds to its parent's path, and the parent.
    pub fn tag_of(&self, node: usize) -> (&str, usize) {
        match self.nodes.get(node) {
            Some(n) => (self.tag(n), n.parent),
            None => ("", Self::ROOT),
        }
    }

    /// Takes the entries out, each with its node.
    pub fn take_entries(&mut self) -> Vec<(usize, PathEntry)> {
        let mut node_of = vec![Self::ROOT; self.entries.len()];
        for (id, node) in self.nodes.iter_mut().enumerate() {
            if let Some(e) = node.entry.take() {
                if let Some(slot) = node_of.get_mut(e) {
                    *slot = id;
                }
            }
        }
        node_of.into_iter().zip(std::mem::take(&mut self.entries)).collect()
    }

    /// The node of `tag` under `parent` (a tag, or `@name` for an attribute
    /// pseudo path), created when new.
    pub fn child(&mut self, parent: usize, tag: &str) -> usize {
        let Some(&node) = self.nodes.get(parent) else {
            return Self::ROOT;
        };
        for &id in node.first.get(..node.firsts).unwrap_or_default() {
            if self.nodes.get(id).is_some_and(|n| self.tag(n) == tag) {
                return id;
            }
        }
        let id = self.nodes.len();
        if node.firsts < SCANNED {
            self.push_node(parent, tag, None);
            if let Some(p) = self.nodes.get_mut(parent) {
                p.first[p.firsts] = id;
                p.firsts += 1;
            }
            return id;
        }
        let key = (parent, hash_of(tag));
        let first = self.index.get(&key).copied();
        let mut at = first;
        while let Some(id) = at {
            let Some(node) = self.nodes.get(id) else { break };
            if self.tag(node) == tag {
                return id;
            }
            at = node.next;
        }
        self.push_node(parent, tag, first);
        self.index.insert(key, id);
        id
    }

    fn push_node(&mut self, parent: usize, tag: &str, next: Option<usize>) {
        let start = self.tags.len();
        self.tags.push_str(tag);
        self.nodes.push(Node {
            parent,
            tag: (start, self.tags.len()),
            next,
            ..Node::default()
        });
    }

    /// The full path text of `node`: its tags from the root down.
    pub fn text_of(&self, node: usize) -> String {
        let mut chain = Vec::new();
        let mut at = node;
        while at != Self::ROOT {
            let Some(n) = self.nodes.get(at) else { break };
            chain.push(self.tag(n));
            at = n.parent;
        }
        let mut text = String::with_capacity(chain.iter().map(|t| t.len()).sum());
        for tag in chain.iter().rev() {
            text.push_str(tag);
        }
        text
    }

    /// The path entry of `node`; `text` gives the full path text the first
    /// time only.
    pub fn entry(&mut self, node: usize, text: impl FnOnce() -> String) -> &mut PathEntry {
        let existing = self.nodes.get(node).and_then(|n| n.entry);
        let i = match existing {
            Some(i) => i,
            None => {
                let text = text();
                let i = self.entries.len();
                self.entries.push(PathEntry {
                    hash: md5_of(&text),
                    text,
                    occurrences: 0,
                    values: ValueAcc::default(),
                });
                if let Some(n) = self.nodes.get_mut(node) {
                    n.entry = Some(i);
                }
                i
            }
        };
        &mut self.entries[i]
    }

    /// The path entry of `node`, its text built from the trie when new.
    #[inline]
    pub fn entry_of(&mut self, node: usize) -> &mut PathEntry {
        match self.nodes.get(node).and_then(|n| n.entry) {
            Some(i) => &mut self.entries[i],
            None => {
                let text = self.text_of(node);
                self.entry(node, || text)
            }
        }
    }

    /// Adds the paths of a later part of the corpus: counts and values of
    /// known paths grow, new paths are added. Returns where each node of
    /// `other` is now.
    pub fn merge(&mut self, mut other: PathTable) -> Vec<usize> {
        // Filled in creation order: a parent is always created before its
        // children.
        let mut map = vec![Self::ROOT; other.nodes.len()];
        for (id, node) in other.nodes.iter().enumerate().skip(1) {
            let parent = map.get(node.parent).copied().unwrap_or(Self::ROOT);
            map[id] = self.child(parent, other.tag(node));
        }
        for (node, entry) in other.take_entries() {
            let text = entry.text;
            let target = self.entry(map[node], || text);
            target.occurrences += entry.occurrences;
            target.values.merge(entry.values);
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::md5_of;

    #[test]
    fn hashes_print_as_md5sum_does() {
        // `printf '' | md5sum` and `printf 'abc' | md5sum`.
        assert_eq!(md5_of("").to_string(), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5_of("abc").to_string(), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(format!("{:>34}", md5_of("")), "  d41d8cd98f00b204e9800998ecf8427e");
    }
}
