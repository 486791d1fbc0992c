//! Root-to-leaf paths: the current path while walking, and the table of
//! distinct paths, each hashed once.

use std::collections::HashMap;

use md5::{Digest, Md5};

use crate::values::ValueAcc;
use crate::Md5Hash;

/// MD5 of a text.
pub fn md5_of(text: &str) -> Md5Hash {
    Md5Hash(Md5::digest(text.as_bytes()).into())
}

/// The path of the element being walked: a string of opening tags plus the
/// length before each, so closing an element is a truncate.
#[derive(Debug, Default)]
pub(crate) struct PathStack {
    text: String,
    marks: Vec<usize>,
}

impl PathStack {
    pub fn push(&mut self, tag: &str) {
        self.marks.push(self.text.len());
        self.text.push_str(tag);
    }

    pub fn pop(&mut self) {
        if let Some(mark) = self.marks.pop() {
            self.text.truncate(mark);
        }
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.marks.clear();
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
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

/// Distinct paths in first-seen order, found through a trie of opening
/// tags: a leaf looks up one tag per level from its parent's node instead of
/// hashing and comparing its whole path text; the path text is hashed with
/// MD5 once, when the path is first seen.
#[derive(Debug)]
pub(crate) struct PathTable {
    nodes: Vec<Node>,
    pub entries: Vec<PathEntry>,
}

#[derive(Debug, Default)]
struct Node {
    children: HashMap<String, usize>,
    entry: Option<usize>,
}

impl Default for PathTable {
    fn default() -> Self {
        Self {
            nodes: vec![Node::default()],
            entries: Vec::new(),
        }
    }
}

impl PathTable {
    /// The root node: the empty path.
    pub const ROOT: usize = 0;

    /// The node of `tag` under `parent` (a tag, or `@name` for an attribute
    /// pseudo path), created when new.
    pub fn child(&mut self, parent: usize, tag: &str) -> usize {
        if let Some(&id) = self.nodes.get(parent).and_then(|n| n.children.get(tag)) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        if let Some(node) = self.nodes.get_mut(parent) {
            node.children.insert(tag.to_owned(), id);
        }
        id
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
}
