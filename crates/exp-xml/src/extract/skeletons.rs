//! Document skeletons as sequences of path nodes, counted.
//!
//! A skeleton is written down as the path node of each opening tag and
//! [`CLOSE`] for each closing one: two documents have the same skeleton
//! exactly when these sequences are equal (a node stands for one canonical
//! tag under one parent). The text form — canonical tags and closing tags —
//! is written once per distinct skeleton, at the end.

use crate::hash::FastMap;
use crate::paths::{md5_of, PathTable};
use crate::skeleton::tag_parts;
use crate::Structure;

/// A closing tag in a node sequence (the root node is never opened).
pub(crate) const CLOSE: u32 = 0;

#[derive(Debug, Default)]
pub(crate) struct Skeletons {
    index: FastMap<Box<[u32]>, usize>,
    /// `(count, nodes)` in first-seen order.
    list: Vec<(u64, Box<[u32]>)>,
}

impl Skeletons {
    pub fn add(&mut self, nodes: &[u32], count: u64) {
        match self.index.get(nodes) {
            Some(&i) => {
                if let Some(s) = self.list.get_mut(i) {
                    s.0 += count;
                }
            }
            None => {
                self.index.insert(nodes.into(), self.list.len());
                self.list.push((count, nodes.into()));
            }
        }
    }

    /// Elements opened per path node (of a table with `nodes` nodes).
    pub fn opens(&self, nodes: usize) -> Vec<u64> {
        let mut opens = vec![0u64; nodes];
        for (count, list) in &self.list {
            for &n in list.iter().filter(|&&n| n != CLOSE) {
                if let Some(o) = opens.get_mut(n as usize) {
                    *o += count;
                }
            }
        }
        opens
    }

    /// The same skeletons with every node replaced by `map[node]` (skeletons
    /// that become equal are counted together).
    pub fn remapped(self, map: &[usize]) -> Skeletons {
        let mut out = Skeletons::default();
        let mut nodes = Vec::new();
        for (count, old) in self.list {
            nodes.clear();
            nodes.extend(old.iter().map(|&n| match n {
                CLOSE => CLOSE,
                n => map.get(n as usize).map_or(CLOSE, |&m| node_id(m)),
            }));
            out.add(&nodes, count);
        }
        out
    }

    /// Adds the skeletons of another table whose nodes are now `map[node]`.
    pub fn merge(&mut self, other: Skeletons, map: &[usize]) {
        for (count, nodes) in other.remapped(map).list {
            self.add(&nodes, count);
        }
    }

    /// The skeletons as text, ordered by frequency (then hash).
    pub fn into_structures(self, paths: &PathTable) -> Vec<Structure> {
        let mut names: Vec<&str> = Vec::new();
        let mut structures: Vec<Structure> = self
            .list
            .into_iter()
            .map(|(count, nodes)| {
                let mut text = String::new();
                names.clear();
                for &n in nodes.iter() {
                    if n == CLOSE {
                        text.push_str("</");
                        text.push_str(names.pop().unwrap_or_default());
                        text.push('>');
                    } else {
                        let (tag, _) = paths.tag_of(n as usize);
                        text.push_str(tag);
                        names.push(tag_parts(tag).0);
                    }
                }
                Structure {
                    hash: md5_of(&text),
                    count,
                    skeleton: text,
                }
            })
            .collect();
        structures.sort_by(|a, b| b.count.cmp(&a.count).then(a.hash.cmp(&b.hash)));
        structures
    }
}

/// A path node as a skeleton entry.
pub(crate) fn node_id(node: usize) -> u32 {
    u32::try_from(node).unwrap_or(u32::MAX)
}
