//! Attribute policy: whether attribute values belong to the structure (paths
//! and skeletons) or are treated as values.
//!
//! Identifiers such as `id="0001"` or `name="b"` distinguish sensors and
//! belong in the path; timestamps or sequence numbers are unique per document
//! and would make every document its own structure. `Auto` tells the two
//! apart by counting distinct values per attribute in a first pass.

use std::io::BufRead;

use crate::hash::{FastMap, FastSet};
use crate::parse::{DocReader, Document, Token};
use crate::skeleton::push_tag;

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

/// In the spec's terms: `keep`, `names`, `auto (max_distinct = 16)`.
impl std::fmt::Display for AttributePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttributePolicy::Keep => f.write_str("keep"),
            AttributePolicy::Names => f.write_str("names"),
            AttributePolicy::Auto { max_distinct } => write!(f, "auto (max_distinct = {max_distinct})"),
        }
    }
}

/// Key of an attribute independent of any attribute values: the element's
/// own path by tag names only, then `@name`, e.g. `<device><sensor>@name`
/// for `<sensor name="...">` inside `<device>`.
/// Written into a reused buffer: this runs for every attribute occurrence.
pub(crate) fn attribute_key<'b>(buf: &'b mut String, names_path: &str, attr: &str) -> &'b str {
    buf.clear();
    buf.push_str(names_path);
    buf.push('@');
    buf.push_str(attr);
    buf
}

/// Element paths by tag names only (`<device><sensor>`), as a trie, with a
/// value of type `T` per attribute name of each node: the walk finds an
/// attribute's slot with one short lookup per element instead of building
/// and hashing its whole key per occurrence.
#[derive(Debug)]
pub(crate) struct NamesTrie<T> {
    nodes: Vec<NamesNode<T>>,
}

/// Children found by a scan before the hash map (see `paths.rs`).
const SCANNED: usize = 4;

#[derive(Debug)]
struct NamesNode<T> {
    first: [usize; SCANNED],
    firsts: usize,
    /// Children after the first [`SCANNED`].
    children: FastMap<Box<str>, usize>,
    parent: usize,
    name: Box<str>,
    attrs: Vec<(Box<str>, T)>,
    /// Index into `attrs` once it is too long to scan (an element with
    /// thousands of distinct attribute names must not cost a scan each).
    attr_index: FastMap<Box<str>, usize>,
}

impl<T> NamesNode<T> {
    fn new(parent: usize, name: &str) -> Self {
        Self {
            first: [0; SCANNED],
            firsts: 0,
            children: FastMap::default(),
            parent,
            name: name.into(),
            attrs: Vec::new(),
            attr_index: FastMap::default(),
        }
    }
}

impl<T> Default for NamesTrie<T> {
    fn default() -> Self {
        Self {
            nodes: vec![NamesNode::new(0, "")],
        }
    }
}

impl<T> NamesTrie<T> {
    pub const ROOT: usize = 0;

    /// The node of element `name` under `parent`; `true` when it is new.
    pub fn child(&mut self, parent: usize, name: &str) -> (usize, bool) {
        let Some(node) = self.nodes.get(parent) else {
            return (Self::ROOT, false);
        };
        for &id in node.first.get(..node.firsts).unwrap_or_default() {
            if self.nodes.get(id).is_some_and(|n| &*n.name == name) {
                return (id, false);
            }
        }
        if let Some(&id) = node.children.get(name) {
            return (id, false);
        }
        let id = self.nodes.len();
        self.nodes.push(NamesNode::new(parent, name));
        if let Some(node) = self.nodes.get_mut(parent) {
            if node.firsts < SCANNED {
                node.first[node.firsts] = id;
                node.firsts += 1;
            } else {
                node.children.insert(name.into(), id);
            }
        }
        (id, true)
    }

    /// The value of attribute `attr` of `node`; when new, `make` gets the
    /// attribute key (see [`attribute_key`]) and gives the value.
    pub fn attr(&mut self, node: usize, attr: &str, make: impl FnOnce(&str) -> T) -> Option<&T> {
        let n = self.nodes.get(node)?;
        let at = if n.attrs.len() > 2 * SCANNED {
            n.attr_index.get(attr).copied()
        } else {
            n.attrs.iter().position(|(name, _)| &**name == attr)
        };
        let at = match at {
            Some(at) => at,
            None => {
                let mut path = String::new();
                self.names_path(node, &mut path);
                let mut key = String::new();
                let value = make(attribute_key(&mut key, &path, attr));
                let n = self.nodes.get_mut(node)?;
                n.attrs.push((attr.into(), value));
                if n.attrs.len() > 2 * SCANNED {
                    if n.attr_index.is_empty() {
                        n.attr_index = n
                            .attrs
                            .iter()
                            .enumerate()
                            .map(|(i, (name, _))| (name.clone(), i))
                            .collect();
                    } else {
                        n.attr_index.insert(attr.into(), n.attrs.len() - 1);
                    }
                }
                n.attrs.len() - 1
            }
        };
        self.nodes.get(node)?.attrs.get(at).map(|(_, v)| v)
    }

    /// Writes the names path of `node`, e.g. `<device><sensor>`.
    fn names_path(&self, node: usize, out: &mut String) {
        let mut chain = Vec::new();
        let mut at = node;
        while at != Self::ROOT {
            let Some(n) = self.nodes.get(at) else { break };
            chain.push(&*n.name);
            at = n.parent;
        }
        for name in chain.iter().rev() {
            push_tag(out, name, std::iter::empty());
        }
    }
}

/// First-pass result for `Auto`: distinct values per attribute, each set
/// capped at `max_distinct + 1` so a timestamp attribute costs `K + 1`
/// strings, not one per document.
#[derive(Debug, Default)]
pub struct AttributeCensus {
    max_distinct: usize,
    /// Attribute key → index into `sets`.
    keys: FastMap<String, usize>,
    sets: Vec<FastSet<Box<str>>>,
    /// The walk's shortcut to `sets`.
    pub(crate) trie: NamesTrie<usize>,
}

impl AttributeCensus {
    pub fn new(max_distinct: usize) -> Self {
        Self {
            max_distinct,
            ..Self::default()
        }
    }

    /// The set of an attribute key, created when new.
    pub(crate) fn slot(&mut self, key: &str) -> usize {
        slot_of(&mut self.keys, &mut self.sets, key)
    }

    /// The slot of attribute `attr` of the element at names-trie `node`,
    /// created when new.
    pub(crate) fn slot_at(&mut self, node: usize, attr: &str) -> Option<usize> {
        let Self { trie, keys, sets, .. } = self;
        trie.attr(node, attr, |key| slot_of(keys, sets, key)).copied()
    }

    /// Whether the slot's attribute has at most K distinct values so far.
    pub(crate) fn keeps_slot(&self, slot: usize) -> bool {
        self.sets.get(slot).is_none_or(|set| set.len() <= self.max_distinct)
    }

    /// Records one occurrence of attribute `attr` of the element at
    /// names-trie `node`.
    pub(crate) fn record_at(&mut self, node: usize, attr: &str, value: &str) {
        if let Some(slot) = self.slot_at(node, attr) {
            self.record_slot(slot, value);
        }
    }

    #[cfg(test)]
    pub(crate) fn record(&mut self, key: &str, value: &str) {
        let slot = self.slot(key);
        self.record_slot(slot, value);
    }

    pub(crate) fn record_slot(&mut self, slot: usize, value: &str) {
        let cap = self.max_distinct.saturating_add(1);
        if let Some(set) = self.sets.get_mut(slot) {
            // Look up before allocating: most occurrences repeat a value.
            if set.len() < cap && !set.contains(value) {
                set.insert(value.into());
            }
        }
    }

    /// Whether the attribute's value is kept in paths (at most K distinct).
    pub fn keeps(&self, key: &str) -> bool {
        self.keys
            .get(key)
            .and_then(|&slot| self.sets.get(slot))
            .is_none_or(|set| set.len() <= self.max_distinct)
    }

    /// Number of distinct attributes seen.
    pub fn attributes(&self) -> usize {
        self.sets.len()
    }

    /// Adds the census of another part of the corpus. Sets stay capped at
    /// `K + 1`, so which values they hold may differ from one pass over
    /// everything, but never whether an attribute has more than K.
    pub fn merge(&mut self, other: AttributeCensus) {
        let mut keys: Vec<(String, usize)> = other.keys.into_iter().collect();
        keys.sort_by_key(|&(_, slot)| slot);
        let mut sets = other.sets;
        for (key, slot) in keys {
            let mine = self.slot(&key);
            for value in std::mem::take(&mut sets[slot]) {
                self.record_slot(mine, &value);
            }
        }
    }
}

fn slot_of(keys: &mut FastMap<String, usize>, sets: &mut Vec<FastSet<Box<str>>>, key: &str) -> usize {
    if let Some(&slot) = keys.get(key) {
        return slot;
    }
    let slot = sets.len();
    sets.push(FastSet::default());
    keys.insert(key.to_owned(), slot);
    slot
}

/// A census pass on its own (the comparison needs the original corpus's
/// census to walk both corpora the same way). Malformed documents are left
/// out, as in the extraction.
pub fn census_input<R: BufRead>(census: &mut AttributeCensus, input: &str, source: R, split_at: Option<&str>) {
    let mut reader = DocReader::new(input, source, split_at);
    let mut stack = Vec::new();
    while let Some(doc) = reader.next_document() {
        if let Ok(doc) = doc {
            census_document(census, doc, &mut stack);
        }
    }
}

/// Census of one well-formed document; `stack` is scratch (names-trie node
/// of each open element).
fn census_document(census: &mut AttributeCensus, doc: &Document, stack: &mut Vec<usize>) {
    stack.clear();
    for &token in &doc.tokens {
        match token {
            Token::Open { name, attrs } => {
                let parent = stack.last().copied().unwrap_or(NamesTrie::<usize>::ROOT);
                let (node, _) = census.trie.child(parent, doc.str(name));
                for &(attr, value) in doc.attrs(attrs) {
                    census.record_at(node, doc.str(attr), doc.str(value));
                }
                stack.push(node);
            }
            Token::Text { .. } => {}
            Token::Close => {
                stack.pop();
            }
        }
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
    /// Decision for a complete attribute key (see [`attribute_key`]).
    pub(crate) fn keeps_key(&self, key: &str) -> bool {
        match self {
            Decider::Keep => true,
            Decider::Names => false,
            Decider::Census(c) => c.keeps(key),
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
        let slot = census.slot("<e>@ts");
        assert_eq!(census.sets.get(slot).map(FastSet::len), Some(4));
        assert!(!census.keeps("<e>@ts"));
        assert!(census.keeps("<e>@kind"));
        // Never seen: nothing to drop.
        assert!(census.keeps("<e>@other"));
        assert_eq!(census.attributes(), 2);
    }
}
