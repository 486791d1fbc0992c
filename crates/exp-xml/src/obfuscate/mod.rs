//! Obfuscated synthesis sets (`expc xml extract --obfuscate --map DIR`) and
//! `expc xml reveal`.
//!
//! Every distinct string of a set — element and attribute names, attribute
//! values in skeletons and paths, categorical values, the split element and
//! root names, and the input names of skipped documents — maps to one
//! seeded random string of the same length (see [`draw`] for the shape
//! rules). The mapping is global: a tag name used in several skeletons, or
//! an attribute value that is also a categorical value, maps to the same
//! replacement everywhere, so relationships between strings survive. It is
//! injective, so [`reveal`] can map generated documents back.
//!
//! Guarantee: no original string of at least 4 characters occurs as a
//! substring of any string of the obfuscated set (every replacement and
//! every rewritten skeleton and path text is checked; a leak is redrawn).
//! Not covered, because they are not corpus strings: the set format's own
//! vocabulary (column names, `set.json` keys, family names), MD5 hashes
//! (digests of the *obfuscated* texts) and numbers (counts, fitted
//! parameters). The parser messages of skipped documents are dropped, as
//! they may quote tag names.

mod draw;
mod map_file;
mod reveal;
mod reveal_files;
mod tag_text;

use serde::{Deserialize, Serialize};

pub use draw::MIN_HIDDEN_CHARS;
pub use map_file::{read_map, write_map, MAP_FILE};
pub use reveal::Revealer;
pub use reveal_files::{reveal, reveal_path};

use crate::hash::FastMap;
use crate::set::SynthesisSet;
use crate::{md5_of, Md5Hash, XmlError};
use draw::{Class, Drawer};
use tag_text::Role;

/// Where a string occurs in the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StringKind {
    Tag,
    Attribute,
    AttributeValue,
    CategoricalValue,
    /// Input name of a skipped document.
    Input,
}

/// One original string and its replacement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapEntry {
    pub original: String,
    pub replacement: String,
    /// Every kind the string occurs as, sorted.
    pub kinds: Vec<StringKind>,
}

/// The private map of an obfuscated set (`map.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObfuscationMap {
    pub version: u32,
    pub seed: u64,
    /// In order of first occurrence in the set.
    pub entries: Vec<MapEntry>,
}

/// Distinct strings of a set in first-occurrence order, with their kinds.
#[derive(Default)]
struct Strings {
    index: FastMap<String, usize>,
    entries: Vec<(String, Vec<StringKind>)>,
}

impl Strings {
    fn add(&mut self, s: &str, kind: StringKind) {
        // The empty string (an empty element) has nothing to hide.
        if s.is_empty() {
            return;
        }
        let i = match self.index.get(s) {
            Some(&i) => i,
            None => {
                self.index.insert(s.to_owned(), self.entries.len());
                self.entries.push((s.to_owned(), Vec::new()));
                self.entries.len() - 1
            }
        };
        if let Some((_, kinds)) = self.entries.get_mut(i) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
                kinds.sort();
            }
        }
    }
}

fn role_kind(role: Role) -> StringKind {
    match role {
        Role::Tag => StringKind::Tag,
        Role::Attribute => StringKind::Attribute,
        Role::AttributeValue => StringKind::AttributeValue,
    }
}

fn collect(set: &SynthesisSet) -> Result<Strings, XmlError> {
    let mut strings = Strings::default();
    let texts = set.structures.iter().map(|s| &s.skeleton);
    for text in texts.chain(set.paths.iter().map(|p| &p.text)) {
        tag_text::visit(text, &mut |role, s| strings.add(s, role_kind(role)))?;
    }
    for c in &set.categorical {
        strings.add(&c.value, StringKind::CategoricalValue);
    }
    for name in set.info.split_at.iter().chain(&set.info.split_root) {
        strings.add(name, StringKind::Tag);
    }
    for s in &set.info.skipped {
        strings.add(&s.input, StringKind::Input);
    }
    Ok(strings)
}

fn class_of(original: &str, kinds: &[StringKind]) -> Class {
    if kinds
        .iter()
        .any(|k| matches!(k, StringKind::Tag | StringKind::Attribute))
    {
        Class::Name
    } else {
        Class::Value {
            numeric: crate::values::parse_number(original).is_some(),
        }
    }
}

/// Rounds of redrawing strings whose rewritten texts still leak.
const REDRAW_ROUNDS: usize = 8;

/// Obfuscates `set` (see the module documentation); the same seed gives the
/// same set and map. Errors when a rewritten text cannot be made free of
/// originals (only an original made of tag syntax, such as `"></`, can
/// cause that) or a skeleton/path text is malformed.
pub fn obfuscate(set: &SynthesisSet, seed: u64) -> Result<(SynthesisSet, ObfuscationMap), XmlError> {
    let strings = collect(set)?;
    let hidden: Vec<&str> = strings
        .entries
        .iter()
        .map(|(s, _)| s.as_str())
        .filter(|s| s.chars().count() >= MIN_HIDDEN_CHARS)
        .collect();
    let mut drawer = Drawer::new(seed, &hidden)?;
    let mut replacement: FastMap<String, String> =
        FastMap::with_capacity_and_hasher(strings.entries.len(), Default::default());
    for (original, kinds) in &strings.entries {
        let r = drawer.draw(original, class_of(original, kinds), true)?;
        replacement.insert(original.clone(), r);
    }
    for _ in 0..REDRAW_ROUNDS {
        let (out, leaking) = apply(set, &replacement, &drawer)?;
        if leaking.is_empty() {
            let entries = strings
                .entries
                .into_iter()
                .map(|(original, kinds)| MapEntry {
                    replacement: replacement.get(&original).cloned().unwrap_or_default(),
                    original,
                    kinds,
                })
                .collect();
            let map = ObfuscationMap {
                version: map_file::MAP_VERSION,
                seed,
                entries,
            };
            return Ok((out, map));
        }
        for original in leaking {
            let kinds = strings.index.get(&original).and_then(|&i| strings.entries.get(i));
            let class = class_of(&original, kinds.map_or(&[][..], |(_, k)| k));
            let r = drawer.draw(&original, class, false)?;
            replacement.insert(original, r);
        }
    }
    Err(XmlError::Obfuscation(
        "an original string of at least 4 characters stays visible in the tag syntax of a skeleton or path".into(),
    ))
}

/// Rewrites the set with `replacement`; also returns the originals that
/// occur in rewritten texts which still contain an original (to redraw).
fn apply(
    set: &SynthesisSet,
    replacement: &FastMap<String, String>,
    drawer: &Drawer,
) -> Result<(SynthesisSet, Vec<String>), XmlError> {
    let map = |s: &str| replacement.get(s).cloned().unwrap_or_else(|| s.to_owned());
    let mut leaking = Vec::new();
    let mut text = |original: &str| -> Result<String, XmlError> {
        let out = tag_text::rewrite(original, &mut |_, s| map(s))?;
        if drawer.leaks(&out) {
            tag_text::visit(original, &mut |_, s| leaking.push(s.to_owned()))?;
        }
        Ok(out)
    };
    let mut hashes: FastMap<Md5Hash, Md5Hash> = FastMap::default();
    let mut out = set.clone();
    for s in &mut out.structures {
        s.skeleton = text(&s.skeleton)?;
        s.hash = md5_of(&s.skeleton);
    }
    for p in &mut out.paths {
        p.text = text(&p.text)?;
        let new = md5_of(&p.text);
        hashes.insert(p.hash, new);
        p.hash = new;
    }
    let remap = |h: Md5Hash| hashes.get(&h).copied().unwrap_or(h);
    for c in &mut out.categorical {
        c.path = remap(c.path);
        c.value = map(&c.value);
    }
    for n in &mut out.numeric {
        n.path = remap(n.path);
    }
    let info = &mut out.info;
    info.obfuscated = true;
    info.split_at = info.split_at.as_deref().map(map);
    info.split_root = info.split_root.as_deref().map(map);
    for s in &mut info.skipped {
        s.input = map(&s.input);
        s.detail = None;
    }
    // Orders that fell back to comparing strings or hashes would otherwise
    // still follow the originals.
    out.structures
        .sort_by(|a, b| b.count.cmp(&a.count).then(a.hash.cmp(&b.hash)));
    let position: FastMap<Md5Hash, usize> = out.paths.iter().enumerate().map(|(i, p)| (p.hash, i)).collect();
    out.categorical.sort_by(|a, b| {
        let group = |h: &Md5Hash| position.get(h).copied().unwrap_or(usize::MAX);
        group(&a.path)
            .cmp(&group(&b.path))
            .then(b.count.cmp(&a.count))
            .then(a.value.cmp(&b.value))
    });
    Ok((out, leaking))
}

impl ObfuscationMap {
    /// Replacement → original for strings of the given kinds.
    pub fn reverse(&self, kinds: &[StringKind]) -> FastMap<&str, &str> {
        self.entries
            .iter()
            .filter(|e| e.kinds.iter().any(|k| kinds.contains(k)))
            .map(|e| (e.replacement.as_str(), e.original.as_str()))
            .collect()
    }

    /// The replacement of `original`, if it is in the map.
    pub fn replacement(&self, original: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.original == original)
            .map(|e| e.replacement.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::set::SetInfo;
    use crate::{CategoricalCount, PathInfo, Structure, ValueKind};

    fn set(value: &str) -> SynthesisSet {
        let skeleton = "<event><leaf k=\"v\"></leaf></event>".to_owned();
        let text = "<event><leaf k=\"v\">".to_owned();
        SynthesisSet {
            structures: vec![Structure {
                hash: md5_of(&skeleton),
                count: 1,
                skeleton,
            }],
            paths: vec![PathInfo {
                hash: md5_of(&text),
                text: text.clone(),
                kind: ValueKind::Categorical,
                occurrences: 1,
            }],
            categorical: vec![CategoricalCount {
                path: md5_of(&text),
                value: value.to_owned(),
                count: 1,
                truncated: false,
            }],
            numeric: Vec::new(),
            info: SetInfo::default(),
        }
    }

    #[test]
    fn an_original_made_of_tag_syntax_cannot_be_hidden() {
        // `"></` occurs in every skeleton with an attribute value before an
        // end tag, whatever the names become.
        assert!(matches!(obfuscate(&set("\"></"), 1), Err(XmlError::Obfuscation(_))));
        let (out, map) = obfuscate(&set("level"), 1).expect("ordinary value");
        assert_eq!(map.entries.len(), 5, "event, leaf, k, v, level");
        assert!(!out.structures[0].skeleton.contains("event"));
    }
}
