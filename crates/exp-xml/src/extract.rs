//! Walking documents into structures, paths and values.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;

use crate::error::Skipped;
use crate::parse::{DocReader, Document, Span, Token};
use crate::paths::{md5_of, PathStack, PathTable};
use crate::policy::{attribute_key, AttributeCensus, Decider};
use crate::skeleton::{push_tag, Skeleton};
use crate::{CategoricalCount, Config, CorpusSummary, Extraction, Md5Hash, PathInfo, Structure, ValueKind};

/// Accumulates an extraction over any number of inputs.
#[derive(Debug)]
pub struct Extractor<'c> {
    config: Config,
    decider: Decider<'c>,
    structures: HashMap<Md5Hash, (u64, String)>,
    paths: PathTable,
    tags: HashSet<String>,
    attributes: HashSet<String>,
    documents: u64,
    skipped: Vec<Skipped>,
    // Scratch reused across documents.
    skeleton: Skeleton,
    path: PathStack,
    names_path: PathStack,
    tag: String,
    scratch: String,
    keep: Vec<bool>,
    has_child: Vec<bool>,
    /// Path-trie node of each open element.
    nodes: Vec<usize>,
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
            structures: HashMap::new(),
            paths: PathTable::default(),
            tags: HashSet::new(),
            attributes: HashSet::new(),
            documents: 0,
            skipped: Vec::new(),
            skeleton: Skeleton::default(),
            path: PathStack::default(),
            names_path: PathStack::default(),
            tag: String::new(),
            scratch: String::new(),
            keep: Vec::new(),
            has_child: Vec::new(),
            nodes: Vec::new(),
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
    }

    fn document(&mut self, doc: &Document) {
        self.documents += 1;
        self.skeleton.clear();
        self.path.clear();
        self.names_path.clear();
        self.has_child.clear();
        self.nodes.clear();
        let mut pending: Option<(Span, bool)> = None;
        for &token in &doc.tokens {
            match token {
                Token::Open { name, attrs } => {
                    if let Some(parent) = self.has_child.last_mut() {
                        *parent = true;
                    }
                    self.has_child.push(false);
                    pending = None;
                    self.open(doc, doc.str(name), doc.attrs(attrs));
                }
                Token::Text { value, truncated } => pending = Some((value, truncated)),
                Token::Close => {
                    if self.has_child.pop() == Some(false) {
                        let node = self.nodes.last().copied().unwrap_or(PathTable::ROOT);
                        let path = &self.path;
                        let entry = self.paths.entry(node, || path.as_str().to_owned());
                        entry.occurrences += 1;
                        if let Some((value, truncated)) = pending.take() {
                            entry.values.add(doc.str(value), truncated);
                        }
                    }
                    pending = None;
                    self.skeleton.close();
                    self.path.pop();
                    self.names_path.pop();
                    self.nodes.pop();
                }
            }
        }
        let hash = md5_of(self.skeleton.as_str());
        self.structures
            .entry(hash)
            .or_insert_with(|| (0, self.skeleton.as_str().to_owned()))
            .0 += 1;
    }

    fn open(&mut self, doc: &Document, name: &str, attrs: &[(Span, Span)]) {
        if !self.tags.contains(name) {
            self.tags.insert(name.to_owned());
        }
        let mut keep = std::mem::take(&mut self.keep);
        keep.clear();
        for &(k, _) in attrs {
            let kept = self
                .decider
                .keeps(self.names_path.as_str(), doc.str(k), &mut self.scratch);
            keep.push(kept);
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
        self.path.push(&self.tag);
        let parent = self.nodes.last().copied().unwrap_or(PathTable::ROOT);
        let node = self.paths.child(parent, &self.tag);
        self.nodes.push(node);
        self.scratch.clear();
        push_tag(&mut self.scratch, name, std::iter::empty());
        self.names_path.push(&self.scratch);
        for (&(key, value), &kept) in attrs.iter().zip(&keep) {
            let (key, value) = (doc.str(key), doc.str(value));
            if !self.attributes.contains(key) {
                self.attributes.insert(key.to_owned());
            }
            if !kept {
                // Attribute value not in the structure: a value of the
                // pseudo path `<...>@name`.
                self.scratch.clear();
                self.scratch.push('@');
                self.scratch.push_str(key);
                let pseudo = self.paths.child(node, &self.scratch);
                let path = &self.path;
                let entry = self.paths.entry(pseudo, || format!("{}@{key}", path.as_str()));
                entry.occurrences += 1;
                let truncated = value.len() > crate::parse::MAX_VALUE_LEN;
                let mut cut = value.len().min(crate::parse::MAX_VALUE_LEN);
                while !value.is_char_boundary(cut) {
                    cut -= 1;
                }
                entry.values.add(value.get(..cut).unwrap_or_default(), truncated);
            }
        }
        self.keep = keep;
    }

    /// Classifies the paths and returns the extraction; structures are
    /// ordered by frequency (then hash), paths by first appearance.
    pub fn finish(self) -> Extraction {
        let mut structures: Vec<Structure> = self
            .structures
            .into_iter()
            .map(|(hash, (count, skeleton))| Structure { hash, count, skeleton })
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
                        .into_iter()
                        .map(|(value, count)| (value, count, false))
                        .chain(values.truncated.into_iter().map(|(v, c)| (v, c, true)))
                        .map(|(value, count, truncated)| CategoricalCount {
                            path: entry.hash,
                            value,
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
    let mut names = PathStack::default();
    let mut scratch = String::new();
    let mut key = String::new();
    while let Some(doc) = reader.next_document() {
        let Ok(doc) = doc else { continue };
        names.clear();
        for &token in &doc.tokens {
            match token {
                Token::Open { name, attrs } => {
                    for &(attr, value) in doc.attrs(attrs) {
                        let key = attribute_key(&mut key, names.as_str(), doc.str(attr));
                        census.record(key, doc.str(value));
                    }
                    scratch.clear();
                    push_tag(&mut scratch, doc.str(name), std::iter::empty());
                    names.push(&scratch);
                }
                Token::Text { .. } => {}
                Token::Close => names.pop(),
            }
        }
    }
}
