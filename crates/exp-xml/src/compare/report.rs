//! The side-by-side text report (`Display` of [`Comparison`]).

use std::fmt::{self, Display, Formatter};

use super::{Comparison, CorpusCounts, Histogram, OneSidedPath, PathScore};

/// One-sided paths listed in the text report (the JSON has them all).
const LISTED_PATHS: usize = 10;

impl Display for Comparison {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (o, s, shared) = (&self.counts.original, &self.counts.synthetic, &self.counts.shared);
        let set = &self.settings;
        let split = set
            .split_at
            .as_deref()
            .map_or("whole inputs".to_owned(), |e| format!("<{e}>"));
        writeln!(
            f,
            "XML corpus comparison (documents: {split}; attributes: {}; categorical up to {} distinct values)\n",
            set.policy, set.categorical_threshold
        )?;
        writeln!(f, "{:<24} {:>14} {:>14} {:>14}", "", "original", "synthetic", "shared")?;
        let row = |f: &mut Formatter<'_>, label: &str, get: fn(&CorpusCounts) -> u64, both: Option<usize>| {
            let both = both.map(|n| n.to_string()).unwrap_or_default();
            writeln!(f, "{label:<24} {:>14} {:>14} {both:>14}", get(o), get(s))
        };
        row(f, "documents", |c| c.documents, None)?;
        row(f, "skipped (malformed)", |c| c.skipped, None)?;
        row(f, "elements", |c| c.elements, None)?;
        row(f, "distinct tags", |c| c.tags as u64, Some(shared.tags))?;
        row(f, "attribute names", |c| c.attributes as u64, Some(shared.attributes))?;
        row(f, "paths", |c| c.paths as u64, Some(shared.paths))?;
        row(f, "skeletons", |c| c.skeletons as u64, Some(shared.skeletons))?;

        let d = &self.divergence;
        writeln!(f, "\nJensen–Shannon divergence (base 2; 0 = same, 1 = disjoint)")?;
        writeln!(f, "  skeletons   {:.6}", d.skeleton)?;
        writeln!(f, "  paths       {:.6}", d.path)?;
        writeln!(f, "  tags        {:.6}", d.tag)?;
        writeln!(f, "  attributes  {:.6}", d.attribute)?;

        let p = &self.path_summary;
        writeln!(f, "\nPaths in both corpora")?;
        writeln!(
            f,
            "  {} categorical: total variation max {:.6}, mean {:.6}",
            p.categorical_paths, p.max_total_variation, p.mean_total_variation
        )?;
        writeln!(
            f,
            "  {} numeric: KS statistic max {:.6}, mean {:.6}",
            p.numeric_paths, p.max_ks, p.mean_ks
        )?;
        scores(f, "worst categorical (TV)", &p.worst_categorical)?;
        scores(f, "worst numeric (KS)", &p.worst_numeric)?;
        one_sided(f, "Paths only in the original", &self.only_in_original)?;
        one_sided(f, "Paths only in the synthetic corpus", &self.only_in_synthetic)?;

        let h = &self.histograms;
        histogram(f, "Element depth (root = 1)", &h.depth)?;
        histogram(f, "Fan-out (child elements per element)", &h.fan_out)?;
        histogram(f, "Document size (bytes, canonical form)", &h.document_size)?;

        let dup = &self.duplicates;
        writeln!(f, "\nExact duplicates (canonical form)")?;
        writeln!(
            f,
            "  {} of {} synthetic documents copy an original ({:.4}%), {} distinct originals copied",
            dup.copies,
            dup.synthetic_documents,
            100.0 * dup.rate,
            dup.originals_copied
        )?;
        writeln!(
            f,
            "  repeats within the original: {:.4}%",
            100.0 * dup.original_repeat_rate
        )?;

        if let Some(probe) = &self.probe {
            let q = &probe.query;
            let value = q.value.as_ref().map(|v| format!("=\"{v}\"")).unwrap_or_default();
            writeln!(f, "\nProbe <{} {}{value}>", q.tag, q.attribute)?;
            for (label, run) in [("original", &probe.original), ("synthetic", &probe.synthetic)] {
                writeln!(
                    f,
                    "  {label:<10} {:>12} matches in {:>10} documents, {:.3} s",
                    run.matches, run.documents, run.seconds
                )?;
            }
        }
        for (label, list) in [
            ("original", &self.skipped.original),
            ("synthetic", &self.skipped.synthetic),
        ] {
            if !list.is_empty() {
                writeln!(f, "\nSkipped documents ({label}, first {})", list.len())?;
                for line in list {
                    writeln!(f, "  {line}")?;
                }
            }
        }
        Ok(())
    }
}

fn scores(f: &mut Formatter<'_>, title: &str, list: &[PathScore]) -> fmt::Result {
    if list.is_empty() {
        return Ok(());
    }
    writeln!(f, "  {title}:")?;
    for s in list {
        writeln!(f, "    {:.6}  {}", s.value, s.path)?;
    }
    Ok(())
}

fn one_sided(f: &mut Formatter<'_>, title: &str, list: &[OneSidedPath]) -> fmt::Result {
    writeln!(f, "\n{title}: {}", list.len())?;
    for p in list.iter().take(LISTED_PATHS) {
        writeln!(f, "  {:>10}  {}", p.occurrences, p.path)?;
    }
    if list.len() > LISTED_PATHS {
        writeln!(f, "  … and {} more", list.len() - LISTED_PATHS)?;
    }
    Ok(())
}

/// Bins empty on both sides are left out.
fn histogram(f: &mut Formatter<'_>, title: &str, h: &Histogram) -> fmt::Result {
    writeln!(f, "\n{title} (total variation {:.6})", h.total_variation)?;
    let total = |v: &[u64]| v.iter().sum::<u64>().max(1) as f64;
    let (to, ts) = (total(&h.original), total(&h.synthetic));
    writeln!(f, "  {:<16} {:>20} {:>20}", "bin", "original", "synthetic")?;
    for ((label, &a), &b) in h.bins.iter().zip(&h.original).zip(&h.synthetic) {
        if a == 0 && b == 0 {
            continue;
        }
        writeln!(
            f,
            "  {label:<16} {a:>11} {:>7.2}% {b:>11} {:>7.2}%",
            100.0 * a as f64 / to,
            100.0 * b as f64 / ts
        )?;
    }
    Ok(())
}
