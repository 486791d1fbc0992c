//! Diagnostics shared by every stage of the exp compiler.
//!
//! A [`Diagnostic`] has a stable [`Code`], a message, labelled [`Span`]s that may
//! point into several files (a stdlib definition and the user's use of it), notes
//! and a help line. Stages collect diagnostics instead of stopping at the first
//! error; only the CLI decides how to show them ([`render`]).

mod clip;
mod codes;
mod diagnostic;
mod escape;
pub mod limits;
mod render;
mod source;

pub use clip::MAX_LINE_BYTES;
pub use codes::Code;
pub use diagnostic::{Diagnostic, Label, Severity};
pub use escape::{bidi_name, escape_bidi};
pub use render::{render, render_all, RenderStyle};
pub use source::{FileId, SourceFile, SourceMap, Span};

/// Did-you-mean: the candidate closest to `name`, if it is close enough to be a
/// plausible typo rather than a different word.
pub fn closest<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let distance = edit_distance(name, candidate);
        let limit = (name.chars().count().max(candidate.chars().count()) / 3).max(1);
        if distance <= limit && best.is_none_or(|(d, c)| (distance, candidate) < (d, c)) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal-string-alignment distance over chars: insertions, deletions,
/// substitutions and transpositions of adjacent chars each count as one edit,
/// so `mena` is one edit from `mean`.
fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(closest("devces", ["devices", "gap", "qos"]), Some("devices"));
        assert_eq!(closest("utilisation", ["utilization", "cores"]), Some("utilization"));
        assert_eq!(closest("zzz", ["devices", "gap"]), None);
        assert_eq!(closest("mss", ["ms", "s", "us"]), Some("ms"));
    }

    #[test]
    fn a_transposition_is_one_edit() {
        assert_eq!(edit_distance("mena", "mean"), 1);
        assert_eq!(closest("mena", ["mean", "sd"]), Some("mean"));
        assert_eq!(closest("flet", ["fleet", "anomaly"]), Some("fleet"));
        assert_eq!(closest("anomly", ["fleet", "anomaly"]), Some("anomaly"));
        assert_eq!(closest("uitlization", ["utilization", "cores"]), Some("utilization"));
    }

    #[test]
    fn edit_distance_counts_operations() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
