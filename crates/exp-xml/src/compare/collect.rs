//! One streaming pass over a corpus, gathering everything a comparison
//! needs: frequencies of tags, attribute names, paths and skeletons, values
//! per path, depth/fan-out/size histograms and a canonical hash per document.
//!
//! Skeletons and paths are built exactly as the extraction builds them
//! (`push_tag`, the same attribute decision), so the two sides and an
//! extraction of either all agree on path and skeleton texts.

use std::io::BufRead;

use super::freq::FreqTable;
use super::histogram::{Bins, Counter};
use crate::error::Skipped;
use crate::hash::FastMap;
use crate::parse::{DocReader, Document, TextRange, Token, MAX_VALUE_LEN};
use crate::paths::{md5_of, PathTable};
use crate::policy::{Decider, NamesTrie};
use crate::skeleton::{push_tag, Skeleton};
use crate::values::{counts_are_numeric, parse_number};
use crate::Md5Hash;

/// Values seen on one path.
#[derive(Debug, Clone, Default)]
pub(crate) struct PathValues {
    pub text: String,
    /// Leaves (or attribute occurrences) on this path.
    pub occurrences: u64,
    /// Distinct values and their counts (values cut to `MAX_VALUE_LEN` are
    /// in `truncated`).
    pub values: FreqTable<String>,
    pub truncated: FreqTable<String>,
    /// Every value that parses as a decimal number, in document order.
    pub numbers: Vec<f64>,
    /// Values that are not numbers (truncated ones included).
    pub non_numeric: u64,
}

impl PathValues {
    fn add(&mut self, value: &str, truncated: bool) {
        if truncated {
            self.truncated.add(value, 1);
            self.non_numeric += 1;
            return;
        }
        self.values.add(value, 1);
        match parse_number(value) {
            Some((v, _)) => self.numbers.push(v),
            None => self.non_numeric += 1,
        }
    }

    /// Occurrences that carried a value.
    pub fn valued(&self) -> u64 {
        self.values.total() + self.truncated.total()
    }

    pub fn distinct(&self) -> usize {
        self.values.len() + self.truncated.len()
    }

    /// The extraction's rule: numeric when every value is a number and
    /// there are more than `threshold` distinct values, or the values are
    /// count data a discrete family fits ([`counts_are_numeric`]).
    pub fn is_numeric(&self, threshold: usize) -> bool {
        self.non_numeric == 0
            && !self.numbers.is_empty()
            && (self.distinct() > threshold
                || (self.truncated.len() == 0 && counts_are_numeric(self.values.iter().map(|(v, c)| (v.as_str(), c)))))
    }
}

/// Distinct paths in first-seen order, found through the extraction's trie.
#[derive(Debug, Default)]
pub(crate) struct PathIndex {
    trie: PathTable,
    /// Trie node → index into `entries`.
    node_entry: FastMap<usize, usize>,
    pub entries: Vec<PathValues>,
}

impl PathIndex {
    /// The values of the path ending at trie `node`, created when new.
    fn entry(&mut self, node: usize) -> &mut PathValues {
        let i = *self.node_entry.entry(node).or_insert_with(|| {
            self.entries.push(PathValues {
                text: self.trie.text_of(node),
                ..PathValues::default()
            });
            self.entries.len() - 1
        });
        &mut self.entries[i]
    }
}

/// Everything gathered from one corpus.
#[derive(Debug)]
pub(crate) struct CorpusStats<'c> {
    decider: Decider<'c>,
    split_at: Option<String>,
    pub documents: u64,
    pub elements: u64,
    pub skipped: Vec<Skipped>,
    pub tags: FreqTable<String>,
    pub attributes: FreqTable<String>,
    pub skeletons: FreqTable<Md5Hash>,
    pub paths: PathIndex,
    pub depth: Counter,
    pub fan_out: Counter,
    pub size: Counter,
    /// Canonical document hash → number of documents.
    pub documents_by_hash: FastMap<Md5Hash, u64>,
    /// Attribute decisions per (parent names path, attribute name), as the
    /// extraction caches them.
    names: NamesTrie<bool>,
    // Scratch reused across documents.
    skeleton: Skeleton,
    canonical: String,
    tag: String,
    scratch: String,
    keep: Vec<bool>,
    stack: Vec<OpenElement>,
}

/// An element being walked.
#[derive(Debug, Clone, Copy)]
struct OpenElement {
    path_node: usize,
    names_node: usize,
    name: TextRange,
    children: u64,
}

impl<'c> CorpusStats<'c> {
    pub fn new(decider: Decider<'c>, split_at: Option<&str>) -> Self {
        Self {
            decider,
            split_at: split_at.map(str::to_owned),
            documents: 0,
            elements: 0,
            skipped: Vec::new(),
            tags: FreqTable::default(),
            attributes: FreqTable::default(),
            skeletons: FreqTable::default(),
            paths: PathIndex::default(),
            depth: Counter::new(Bins::depth()),
            fan_out: Counter::new(Bins::fan_out()),
            size: Counter::new(Bins::document_size()),
            documents_by_hash: FastMap::default(),
            names: NamesTrie::default(),
            skeleton: Skeleton::default(),
            canonical: String::new(),
            tag: String::new(),
            scratch: String::new(),
            keep: Vec::new(),
            stack: Vec::new(),
        }
    }

    /// Reads every document of one input; malformed ones are recorded.
    pub fn feed<R: BufRead>(&mut self, input: &str, source: R) {
        let mut reader = DocReader::new(input, source, self.split_at.as_deref());
        while let Some(doc) = reader.next_document() {
            match doc {
                Ok(doc) => self.document(doc),
                Err(skipped) => self.skipped.push(skipped),
            }
        }
    }

    fn document(&mut self, doc: &Document) {
        self.documents += 1;
        self.skeleton.clear();
        self.canonical.clear();
        self.stack.clear();
        let mut pending: Option<(TextRange, bool)> = None;
        for &token in &doc.tokens {
            match token {
                Token::Open { name, attrs } => {
                    if let Some(parent) = self.stack.last_mut() {
                        parent.children += 1;
                    }
                    self.elements += 1;
                    self.depth.add(self.stack.len() as u64 + 1);
                    pending = None;
                    self.open(doc, name, doc.attrs(attrs));
                }
                Token::Text { value, truncated } => {
                    pending = Some((value, truncated));
                    push_escaped(&mut self.canonical, doc.str(value));
                }
                Token::Close => {
                    let Some(top) = self.stack.pop() else { continue };
                    self.fan_out.add(top.children);
                    if top.children == 0 {
                        let entry = self.paths.entry(top.path_node);
                        entry.occurrences += 1;
                        if let Some((value, truncated)) = pending {
                            entry.add(doc.str(value), truncated);
                        }
                    }
                    pending = None;
                    self.skeleton.close();
                    self.canonical.push_str("</");
                    self.canonical.push_str(doc.str(top.name));
                    self.canonical.push('>');
                }
            }
        }
        self.skeletons.add(&md5_of(self.skeleton.as_str()), 1);
        self.size.add(self.canonical.len() as u64);
        *self.documents_by_hash.entry(md5_of(&self.canonical)).or_insert(0) += 1;
    }

    fn open(&mut self, doc: &Document, name_range: TextRange, attrs: &[(TextRange, TextRange)]) {
        let name = doc.str(name_range);
        self.tags.add(name, 1);
        // Canonical form: every attribute with its value (already sorted by
        // name by the reader), whatever the policy.
        push_tag(
            &mut self.canonical,
            name,
            attrs.iter().map(|&(k, v)| (doc.str(k), Some(doc.str(v)))),
        );
        let parent = self.stack.last().copied();
        let parent_names = parent.map_or(NamesTrie::<bool>::ROOT, |p| p.names_node);
        let (names_node, _) = self.names.child(parent_names, name);
        let mut keep = std::mem::take(&mut self.keep);
        keep.clear();
        for &(key, _) in attrs {
            let key = doc.str(key);
            self.attributes.add(key, 1);
            // Keyed by the element's names path, as the census is.
            let decider = &self.decider;
            let kept = self.names.attr(names_node, key, |full_key| decider.keeps_key(full_key));
            keep.push(kept.copied().unwrap_or(true));
        }
        self.tag.clear();
        push_tag(
            &mut self.tag,
            name,
            attrs
                .iter()
                .zip(&keep)
                .map(|(&(k, v), &kept)| (doc.str(k), kept.then_some(doc.str(v)))),
        );
        self.skeleton.open(&self.tag, name);
        let parent_path = parent.map_or(PathTable::ROOT, |p| p.path_node);
        let node = self.paths.trie.child(parent_path, &self.tag);
        self.stack.push(OpenElement {
            path_node: node,
            names_node,
            name: name_range,
            children: 0,
        });
        for (&(key, value), &kept) in attrs.iter().zip(&keep) {
            if kept {
                continue;
            }
            // A value outside the structure: a value of the pseudo path
            // `<...>@name`, as in the extraction.
            let (key, value) = (doc.str(key), doc.str(value));
            self.scratch.clear();
            self.scratch.push('@');
            self.scratch.push_str(key);
            let pseudo = self.paths.trie.child(node, &self.scratch);
            let entry = self.paths.entry(pseudo);
            entry.occurrences += 1;
            let truncated = value.len() > MAX_VALUE_LEN;
            let mut cut = value.len().min(MAX_VALUE_LEN);
            while !value.is_char_boundary(cut) {
                cut -= 1;
            }
            entry.add(value.get(..cut).unwrap_or_default(), truncated);
        }
        self.keep = keep;
    }
}

/// Text in the canonical form, escaped so a value can never read as a tag.
fn push_escaped(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            c => out.push(c),
        }
    }
}
