//! `Auto`'s final step: the single pass kept an attribute's values in the
//! path while it had seen at most K distinct values; now that the census
//! covers the whole corpus, attributes with more than K lose their values
//! from the path.
//!
//! Every tag is rewritten under the final census and the path table is
//! rebuilt from the rewritten tags: paths that differed only in a dropped
//! value become one path (their counts and values are added), and each
//! dropped value becomes a value of the pseudo path `<...>@name`, once per
//! element opened with it — exactly what the extraction records for such an
//! attribute when it knows the decision from the start. Skeletons follow
//! the same node mapping.

use std::borrow::Cow;

use super::{cut, Skeletons};
use crate::paths::PathTable;
use crate::policy::{attribute_key, AttributeCensus};
use crate::skeleton::{push_tag, tag_parts, unescaped};

pub(super) fn collapse(mut paths: PathTable, skeletons: Skeletons, census: &AttributeCensus) -> (PathTable, Skeletons) {
    let old_opens = skeletons.opens(paths.len());
    let mut out = PathTable::default();
    let mut map = vec![PathTable::ROOT; paths.len()];
    // Names path of each element node (`<event><device>`), for the census
    // keys.
    let mut names_paths = vec![String::new(); paths.len()];
    let (mut tag, mut key) = (String::new(), String::new());
    for id in 1..paths.len() {
        let (old_tag, parent) = paths.tag_of(id);
        let new_parent = map.get(parent).copied().unwrap_or(PathTable::ROOT);
        if old_tag.starts_with('@') {
            map[id] = out.child(new_parent, old_tag);
            continue;
        }
        let (name, attrs) = tag_parts(old_tag);
        let mut names_path = names_paths.get(parent).cloned().unwrap_or_default();
        push_tag(&mut names_path, name, std::iter::empty());
        // (name, value, whether the value leaves the path)
        let attrs: Vec<(&str, Option<Cow<'_, str>>, bool)> = attrs
            .into_iter()
            .map(|(attr, value)| {
                let dropped = value.is_some() && !census.keeps(attribute_key(&mut key, &names_path, attr));
                (attr, value.map(unescaped), dropped)
            })
            .collect();
        tag.clear();
        push_tag(
            &mut tag,
            name,
            attrs
                .iter()
                .map(|(attr, value, dropped)| (*attr, value.as_deref().filter(|_| !dropped))),
        );
        let node = out.child(new_parent, &tag);
        map[id] = node;
        let opens = old_opens.get(id).copied().unwrap_or(0);
        for (attr, value, _) in attrs.iter().filter(|a| a.2 && opens > 0) {
            tag.clear();
            tag.push('@');
            tag.push_str(attr);
            let pseudo = out.child(node, &tag);
            let (value, truncated) = cut(value.as_deref().unwrap_or_default());
            let entry = out.entry_of(pseudo);
            entry.occurrences += opens;
            entry.values.add_repeated(value, truncated, opens);
        }
        names_paths[id] = names_path;
    }
    for (node, entry) in paths.take_entries() {
        // The path's text changes with its tags: built anew.
        let target = out.entry_of(map.get(node).copied().unwrap_or(PathTable::ROOT));
        target.occurrences += entry.occurrences;
        target.values.merge(entry.values);
    }
    (out, skeletons.remapped(&map))
}
