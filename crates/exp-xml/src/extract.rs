//! Walking documents into structures, paths and values.
//!
//! Per element the walk does a few short hash lookups (the element name in
//! the names trie, its canonical tag in the path trie) and writes the tag
//! once, into the skeleton; path texts are built from the trie and hashed
//! with MD5 only when a path is new, skeletons are counted by text and
//! hashed once per distinct skeleton at the end.

use std::io::BufRead;

use crate::hash::{FastMap, FastSet};

use crate::error::Skipped;
use crate::parse::{DocReader, Document, Span, Token, MAX_VALUE_LEN};
use crate::paths::{md5_of, PathTable};
use crate::policy::{AttributeCensus, Decider, NamesTrie};
use crate::skeleton::{push_tag, Skeleton};
use crate::{CategoricalCount, Config, CorpusSummary, Extraction, PathInfo, Structure, ValueKind};

/// Accumulates an extraction over any number of inputs.
#[derive(Debug)]
pub struct Extractor<'c> {
    config: Config,
    decider: Decider<'c>,
    /// Skeleton text → index into `structures`.
    structure_index: FastMap<Box<str>, usize>,
    /// `(count, skeleton)` in first-seen order.
    structures: Vec<(u64, String)>,
    paths: PathTable,
    tags: FastSet<Box<str>>,
    attributes: FastSet<Box<str>>,
    /// Attribute decisions per (parent names path, attribute name).
    names: NamesTrie<bool>,
    documents: u64,
    skipped: Vec<Skipped>,
    split_root: Option<String>,
    // Scratch reused across documents.
    skeleton: Skeleton,
    stack: Vec<OpenElement>,
    scratch: String,
    keep: Vec<bool>,
}

/// An element being walked.
#[derive(Debug, Clone, Copy)]
struct OpenElement {
    path_node: usize,
    names_node: usize,
    name: Span,
    has_child: bool,
}

impl<'c> Extractor<'c> {
    /// For `AttributePolicy::Auto` pass the census of a first pass over the
    /// same corpus; without one, `Auto` keeps every value (as `Keep`).
    pub fn new(config: &Config, census: Option<&'c AttributeCensus>) -> Self {
        let decider = match (config.policy, census) {
            (crate::AttributePolicy::Names, _) => Decider::Names,
            (crate::AttributePolicy::Auto { .. }, Some(c)) => Decider::Census(c),
            _ => Decider::Keep,
        };
        Self {
            config: config.clone(),
            decider,
            structure_index: FastMap::default(),
            structures: Vec::new(),
            paths: PathTable::default(),
            tags: FastSet::default(),
            attributes: FastSet::default(),
            names: NamesTrie::default(),
            documents: 0,
            skipped: Vec::new(),
            split_root: None,
            skeleton: Skeleton::default(),
            stack: Vec::new(),
            scratch: String::new(),
            keep: Vec::new(),
        }
    }

    /// Reads every document of one input.
    pub fn feed<R: BufRead>(&mut self, input: &str, source: R) {
        let mut reader = DocReader::new(input, source, self.config.split_at.as_deref());
        while let Some(doc) = reader.next_document() {
            match doc {
                Ok(doc) => self.document(doc),
                Err(skipped) => self.skipped.push(skipped),
            }
        }
        self.note_root(reader.root());
    }

    /// Records the root element of an input that split into documents
    /// (the first one seen wins).
    pub(crate) fn note_root(&mut self, root: Option<&str>) {
        if self.config.split_at.is_some() && self.split_root.is_none() {
            self.split_root = root.map(str::to_owned);
        }
    }

    pub(crate) fn skip(&mut self, skipped: Skipped) {
        self.skipped.push(skipped);
    }

    /// Adds one well-formed document.
    pub(crate) fn document(&mut self, doc: &Document) {
        self.documents += 1;
        self.skeleton.clear();
        self.stack.clear();
        let mut pending: Option<(Span, bool)> = None;
        for &token in &doc.tokens {
            match token {
                Token::Open { name, attrs } => {
                    if let Some(parent) = self.stack.last_mut() {
                        parent.has_child = true;
                    }
                    pending = None;
                    self.open(doc, name, doc.attrs(attrs));
                }
                Token::Text { value, truncated } => pending = Some((value, truncated)),
                Token::Close => {
                    let Some(top) = self.stack.pop() else { continue };
                    if !top.has_child {
                        let entry = self.paths.entry_of(top.path_node);
                        entry.occurrences += 1;
                        if let Some((value, truncated)) = pending.take() {
                            entry.values.add(doc.str(value), truncated);
                        }
                    }
                    pending = None;
                    self.skeleton.close_named(doc.str(top.name));
                }
            }
        }
        let skeleton = self.skeleton.as_str();
        match self.structure_index.get(skeleton) {
            Some(&i) => {
                if let Some(s) = self.structures.get_mut(i) {
                    s.0 += 1;
                }
            }
            None => {
                self.structure_index.insert(skeleton.into(), self.structures.len());
                self.structures.push((1, skeleton.to_owned()));
            }
        }
    }

    fn open(&mut self, doc: &Document, name_span: Span, attrs: &[(Span, Span)]) {
        let name = doc.str(name_span);
        let parent = self.stack.last().copied();
        let parent_names = parent.map_or(NamesTrie::<bool>::ROOT, |p| p.names_node);
        let (names_node, new) = self.names.child(parent_names, name);
        if new && !self.tags.contains(name) {
            self.tags.insert(name.into());
        }
        let mut keep = std::mem::take(&mut self.keep);
        keep.clear();
        for &(k, _) in attrs {
            let key = doc.str(k);
            let Self {
                decider, attributes, ..
            } = self;
            // Keyed by the parent's names path, as the census is.
            let kept = self.names.attr(parent_names, key, |full_key| {
                if !attributes.contains(key) {
                    attributes.insert(key.into());
                }
                decider.keeps_key(full_key)
            });
            keep.push(kept.copied().unwrap_or(true));
        }
        let start = self.skeleton.open_with(|out| {
            push_tag(
                out,
                name,
                attrs
                    .iter()
                    .zip(&keep)
                    .map(|(&(k, v), &kept)| (doc.str(k), kept.then_some(doc.str(v)))),
            );
        });
        let parent_path = parent.map_or(PathTable::ROOT, |p| p.path_node);
        let node = self.paths.child(parent_path, self.skeleton.since(start));
        self.stack.push(OpenElement {
            path_node: node,
            names_node,
            name: name_span,
            has_child: false,
        });
        for (&(key, value), &kept) in attrs.iter().zip(&keep) {
            if kept {
                continue;
            }
            // Attribute value not in the structure: a value of the pseudo
            // path `<...>@name`.
            let (key, value) = (doc.str(key), doc.str(value));
            self.scratch.clear();
            self.scratch.push('@');
            self.scratch.push_str(key);
            let pseudo = self.paths.child(node, &self.scratch);
            let entry = self.paths.entry_of(pseudo);
            entry.occurrences += 1;
            let truncated = value.len() > MAX_VALUE_LEN;
            let mut cut = value.len().min(MAX_VALUE_LEN);
            while !value.is_char_boundary(cut) {
                cut -= 1;
            }
            entry.values.add(value.get(..cut).unwrap_or_default(), truncated);
        }
        self.keep = keep;
    }

    /// Adds the extraction of a later part of the corpus (the next inputs
    /// or documents), as if this extractor had read it after its own:
    /// paths new to this one come last in their first-seen order.
    pub fn merge(&mut self, other: Extractor<'_>) {
        self.documents += other.documents;
        self.skipped.extend(other.skipped);
        for tag in other.tags {
            self.tags.insert(tag);
        }
        for attribute in other.attributes {
            self.attributes.insert(attribute);
        }
        for (count, skeleton) in other.structures {
            match self.structure_index.get(skeleton.as_str()) {
                Some(&i) => {
                    if let Some(s) = self.structures.get_mut(i) {
                        s.0 += count;
                    }
                }
                None => {
                    self.structure_index
                        .insert(skeleton.as_str().into(), self.structures.len());
                    self.structures.push((count, skeleton));
                }
            }
        }
        self.paths.merge(other.paths);
        if self.split_root.is_none() {
            self.split_root = other.split_root;
        }
    }

    /// Classifies the paths and returns the extraction; structures are
    /// ordered by frequency (then hash), paths by first appearance.
    pub fn finish(self) -> Extraction {
        let mut structures: Vec<Structure> = self
            .structures
            .into_iter()
            .map(|(count, skeleton)| Structure {
                hash: md5_of(&skeleton),
                count,
                skeleton,
            })
            .collect();
        structures.sort_by(|a, b| b.count.cmp(&a.count).then(a.hash.cmp(&b.hash)));
        let mut paths = Vec::new();
        let mut categorical = Vec::new();
        let mut numeric = Vec::new();
        for entry in self.paths.entries {
            let values = entry.values;
            let is_numeric = !values.non_numeric
                && values.numeric.is_some()
                && values.distinct() > self.config.categorical_threshold;
            let kind = if is_numeric {
                ValueKind::Numeric
            } else {
                ValueKind::Categorical
            };
            paths.push(PathInfo {
                hash: entry.hash,
                text: entry.text,
                kind,
                occurrences: entry.occurrences,
            });
            match (is_numeric, values.numeric) {
                (true, Some(acc)) => numeric.push(acc.summarize(entry.hash)),
                _ => {
                    let mut rows: Vec<CategoricalCount> = values
                        .counts
                        .rows
                        .into_iter()
                        .map(|(value, row)| (value, row.count, false))
                        .chain(values.truncated.rows.into_iter().map(|(v, row)| (v, row.count, true)))
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
            unique_tags: self.tags.len(),
            unique_attributes: self.attributes.len(),
            paths: paths.len(),
            structures: structures.len(),
            skipped: self.skipped,
            split_root: self.split_root,
        };
        Extraction {
            structures,
            paths,
            categorical,
            numeric,
            summary,
        }
    }
}

/// First pass for `Auto`: records each attribute's distinct values (capped).
/// Malformed documents are ignored here; the second pass records them.
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
pub(crate) fn census_document(census: &mut AttributeCensus, doc: &Document, stack: &mut Vec<usize>) {
    stack.clear();
    for &token in &doc.tokens {
        match token {
            Token::Open { name, attrs } => {
                // Keys name the parent's path (see `Decider::keeps`).
                let parent = stack.last().copied().unwrap_or(NamesTrie::<usize>::ROOT);
                for &(attr, value) in doc.attrs(attrs) {
                    census.record_at(parent, doc.str(attr), doc.str(value));
                }
                let (node, _) = census.trie.child(parent, doc.str(name));
                stack.push(node);
            }
            Token::Text { .. } => {}
            Token::Close => {
                stack.pop();
            }
        }
    }
}
