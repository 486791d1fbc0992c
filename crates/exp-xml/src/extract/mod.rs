//! One pass from documents to structures, paths and values.
//!
//! The extractor is a [`Sink`] of the scanner: it sees each document's
//! elements as they are read and stages what they add (skeleton, values,
//! new cache entries) until the scanner says whether the document was
//! well-formed; only then is it counted. Most opening tags were seen before
//! as written, and cost one lookup in [`RawTags`].
//!
//! `Auto` needs to know whether an attribute has more than K distinct
//! values in the whole corpus before it can tell whether its values belong
//! in the path — which a single pass cannot know. The pass therefore keeps
//! an attribute's values in the path while it has seen at most K of them,
//! and treats them as values once it has seen more; at the end
//! [`collapse`] rewrites what was built under the final census (see that
//! module). The result is the one a census pass followed by an extraction
//! pass would give, in one pass.

use std::io::BufRead;

mod collapse;
mod finish;
mod raw_tags;
mod skeletons;

use crate::error::Skipped;
use crate::parse::{parse_attributes, trimmed, RawTag, Scanner, Sink, TagError, TextRange, MAX_VALUE_LEN};
use crate::paths::PathTable;
use crate::policy::{AttributeCensus, NamesTrie};
use crate::skeleton::push_tag;
use crate::{AttributePolicy, Config};

use raw_tags::{After, Found, RawTags};
use skeletons::{node_id, Skeletons, CLOSE};

/// Accumulates an extraction over any number of inputs.
#[derive(Debug)]
pub struct Extractor {
    config: Config,
    /// Under `Auto`: the census so far, whose names trie also keys the
    /// attribute decisions.
    census: Option<AttributeCensus>,
    paths: PathTable,
    skeletons: Skeletons,
    raw_tags: RawTags,
    documents: u64,
    skipped: Vec<Skipped>,
    split_root: Option<String>,
    /// What the current document adds, until it is known to be well-formed.
    doc: Staged,
    stack: Vec<OpenElement>,
    /// The element opened or closed last, to predict the next tag.
    after: After,
    // Scratch reused across elements.
    attr_text: String,
    attr_ranges: Vec<(TextRange, TextRange)>,
    keep: Vec<bool>,
    tag: String,
}

/// An element being walked.
#[derive(Debug, Clone, Copy)]
struct OpenElement {
    found: Found,
    has_child: bool,
}

/// A string in [`Staged::text`] or [`Staged::raw`]: start, end.
type Range = (usize, usize);

/// A staged value and whether it was cut at [`MAX_VALUE_LEN`].
#[derive(Debug, Clone, Copy)]
struct Value {
    range: Range,
    truncated: bool,
}

/// A raw tag to cache once the document counts.
#[derive(Debug, Clone, Copy)]
struct NewTag {
    parent: usize,
    tag: Range,
    found: Found,
}

/// The current document's additions. Strings are ranges of `text`.
#[derive(Debug, Default)]
struct Staged {
    text: String,
    /// Raw tags (not necessarily UTF-8), as ranges.
    raw: Vec<u8>,
    /// The skeleton: path node per opening tag, [`CLOSE`] per closing one.
    nodes: Vec<u32>,
    /// Leaves and attribute values outside the structure, in document order:
    /// path node and value (range, truncated).
    values: Vec<(usize, Option<Value>)>,
    /// Text read since the last tag: the value of a leaf if a closing tag
    /// follows.
    pending: Option<Value>,
    /// New raw tags: parent, name and attributes as ranges, what they open.
    raw_tags: Vec<NewTag>,
    /// Attribute values for the census: slot, value range.
    census: Vec<(usize, Range)>,
}

impl Staged {
    fn clear(&mut self) {
        self.text.clear();
        self.raw.clear();
        self.nodes.clear();
        self.values.clear();
        self.pending = None;
        self.raw_tags.clear();
        self.census.clear();
    }

    fn push_text(&mut self, s: &str) -> Range {
        let start = self.text.len();
        self.text.push_str(s);
        (start, self.text.len())
    }

    fn push_raw(&mut self, b: &[u8]) -> Range {
        let start = self.raw.len();
        self.raw.extend_from_slice(b);
        (start, self.raw.len())
    }

    fn raw(&self, (start, end): Range) -> &[u8] {
        self.raw.get(start..end).unwrap_or_default()
    }

    fn str(&self, (start, end): Range) -> &str {
        self.text.get(start..end).unwrap_or_default()
    }
}

impl Extractor {
    pub fn new(config: &Config) -> Self {
        let census = match config.policy {
            AttributePolicy::Auto { max_distinct } => Some(AttributeCensus::new(max_distinct)),
            _ => None,
        };
        Self {
            config: config.clone(),
            census,
            paths: PathTable::default(),
            skeletons: Skeletons::default(),
            raw_tags: RawTags::default(),
            documents: 0,
            skipped: Vec::new(),
            split_root: None,
            doc: Staged::default(),
            stack: Vec::new(),
            after: After::Opened(PathTable::ROOT),
            attr_text: String::new(),
            attr_ranges: Vec::new(),
            keep: Vec::new(),
            tag: String::new(),
        }
    }

    /// Reads every document of one input.
    pub fn feed<R: BufRead>(&mut self, input: &str, source: R) {
        let mut scanner = Scanner::new(input, source, self.config.split_at.as_deref());
        self.read(&mut scanner);
        self.note_root(scanner.root());
    }

    /// Reads the documents `scanner` yields (all of an input, or of a part
    /// of one).
    pub(crate) fn read<R: BufRead>(&mut self, scanner: &mut Scanner<R>) {
        while let Some(result) = scanner.next_document(self) {
            match result {
                Ok(()) => self.commit(),
                Err(skipped) => self.skipped.push(skipped),
            }
        }
    }

    /// Records the root element of an input that split into documents
    /// (the first one seen wins).
    pub(crate) fn note_root(&mut self, root: Option<&str>) {
        if self.config.split_at.is_some() && self.split_root.is_none() {
            self.split_root = root.map(str::to_owned);
        }
    }

    /// A child element starts: the parent is no leaf, text before it is no
    /// value. Returns the parent's path node.
    #[inline]
    fn enter(&mut self) -> usize {
        if let Some(pending) = self.doc.pending.take() {
            self.doc.text.truncate(pending.range.0);
        }
        match self.stack.last_mut() {
            Some(parent) => {
                parent.has_child = true;
                parent.found.node
            }
            None => PathTable::ROOT,
        }
    }

    /// Opens an element from its parsed attributes (sorted by name, ranges
    /// of `text`); `raw` is the whole tag as written, to cache.
    fn open_parsed(&mut self, name: &str, raw: Option<&[u8]>, text: &str, attrs: &[(TextRange, TextRange)]) {
        let parent = self.stack.last().map(|p| p.found);
        let parent_node = parent.map_or(PathTable::ROOT, |p| p.node);
        let mut keep = std::mem::take(&mut self.keep);
        keep.clear();
        let names = match &mut self.census {
            Some(census) => {
                let parent_names = parent.map_or(NamesTrie::<usize>::ROOT, |p| p.names);
                let (names, _) = census.trie.child(parent_names, name);
                for &(key, value) in attrs {
                    let slot = census.slot_at(names, key.of(text));
                    // Kept while at most K distinct values were seen; the
                    // census needs no more values once it has K + 1.
                    let kept = slot.is_none_or(|slot| census.keeps_slot(slot));
                    if let (Some(slot), true) = (slot, kept) {
                        let value = self.doc.push_text(value.of(text));
                        self.doc.census.push((slot, value));
                    }
                    keep.push(kept);
                }
                names
            }
            None => {
                let kept = self.config.policy == AttributePolicy::Keep;
                keep.extend(attrs.iter().map(|_| kept));
                NamesTrie::<usize>::ROOT
            }
        };
        self.tag.clear();
        push_tag(
            &mut self.tag,
            name,
            attrs
                .iter()
                .zip(&keep)
                .map(|(&(k, v), &kept)| (k.of(text), kept.then_some(v.of(text)))),
        );
        let node = self.paths.child(parent_node, &self.tag);
        let found = Found { node, names };
        self.push_open(found);
        for (&(key, value), _) in attrs.iter().zip(&keep).filter(|(_, &kept)| !kept) {
            // A value outside the structure: a value of the pseudo path
            // `<...>@name`.
            self.tag.clear();
            self.tag.push('@');
            self.tag.push_str(key.of(text));
            let pseudo = self.paths.child(node, &self.tag);
            let (value, truncated) = cut(value.of(text));
            let range = self.doc.push_text(value);
            self.doc.values.push((pseudo, Some(Value { range, truncated })));
        }
        if let (Some(raw), true) = (raw, keep.iter().all(|&k| k)) {
            let tag = NewTag {
                parent: parent_node,
                tag: self.doc.push_raw(raw),
                found,
            };
            self.doc.raw_tags.push(tag);
        }
        self.keep = keep;
    }

    #[inline]
    fn push_open(&mut self, found: Found) {
        self.after = After::Opened(found.node);
        self.stack.push(OpenElement {
            found,
            has_child: false,
        });
        self.doc.nodes.push(node_id(found.node));
    }

    /// Counts the current document, well-formed.
    fn commit(&mut self) {
        self.documents += 1;
        let Self {
            doc,
            paths,
            census,
            raw_tags,
            ..
        } = self;
        for &(node, value) in &doc.values {
            let entry = paths.entry_of(node);
            entry.occurrences += 1;
            if let Some(value) = value {
                entry.values.add(doc.str(value.range), value.truncated);
            }
        }
        if let Some(census) = census {
            for &(slot, value) in &doc.census {
                census.record_slot(slot, doc.str(value));
            }
        }
        for tag in &doc.raw_tags {
            raw_tags.insert(tag.parent, doc.raw(tag.tag), tag.found);
        }
        self.skeletons.add(&doc.nodes, 1);
    }

    /// Adds the extraction of a later part of the corpus (the next inputs
    /// or documents).
    pub fn merge(&mut self, other: Extractor) {
        self.documents += other.documents;
        self.skipped.extend(other.skipped);
        let map = self.paths.merge(other.paths);
        self.skeletons.merge(other.skeletons, &map);
        if let (Some(mine), Some(theirs)) = (&mut self.census, other.census) {
            mine.merge(theirs);
        }
        if self.split_root.is_none() {
            self.split_root = other.split_root;
        }
    }

    fn begin(&mut self) {
        self.doc.clear();
        self.stack.clear();
        self.after = After::Opened(PathTable::ROOT);
    }
}

impl Sink for Extractor {
    fn begin(&mut self) {
        Extractor::begin(self);
    }

    #[inline]
    fn open(&mut self, tag: RawTag<'_>) -> Result<(), TagError> {
        let parent = self.enter();
        if let Some(found) = self.raw_tags.get(parent, tag.bytes, self.after) {
            self.push_open(found);
            return Ok(());
        }
        let mut text = std::mem::take(&mut self.attr_text);
        let mut ranges = std::mem::take(&mut self.attr_ranges);
        text.clear();
        ranges.clear();
        let result = tag
            .name()
            .and_then(|name| parse_attributes(name, tag.attrs(), &mut text, &mut ranges).map(|()| name));
        match result {
            Ok(name) => self.open_parsed(name, Some(tag.bytes), &text, &ranges),
            // The document is skipped; keep the element count for its close.
            Err(_) => self.push_open(Found {
                node: PathTable::ROOT,
                names: NamesTrie::<usize>::ROOT,
            }),
        }
        self.attr_text = text;
        self.attr_ranges = ranges;
        result.map(|_| ())
    }

    #[inline]
    fn text(&mut self, piece: &str) {
        let range = self.doc.push_text(piece);
        match &mut self.doc.pending {
            Some(pending) => pending.range.1 = range.1,
            None => {
                self.doc.pending = Some(Value {
                    range,
                    truncated: false,
                })
            }
        }
    }

    #[inline]
    fn end_text(&mut self, truncated: bool) {
        let Some(pending) = self.doc.pending.take() else { return };
        let (start, end) = trimmed(&self.doc.text, pending.range.0, pending.range.1);
        if start < end {
            self.doc.pending = Some(Value {
                range: (start, end),
                truncated,
            });
        } else {
            self.doc.text.truncate(pending.range.0);
        }
    }

    #[inline]
    fn close(&mut self) {
        let Some(top) = self.stack.pop() else { return };
        let pending = self.doc.pending.take();
        if !top.has_child {
            self.doc.values.push((top.found.node, pending));
        }
        self.doc.nodes.push(CLOSE);
        self.after = After::Closed(top.found.node);
    }
}

/// A value cut to [`MAX_VALUE_LEN`] at a character boundary, and whether it
/// was cut.
pub(crate) fn cut(value: &str) -> (&str, bool) {
    let mut end = value.len().min(MAX_VALUE_LEN);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    (value.get(..end).unwrap_or_default(), end < value.len())
}
