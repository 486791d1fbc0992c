//! Figures of runs compared: each figure every run has (same id), each
//! run's series drawn over the baseline's, named after their run.

use std::collections::BTreeMap;

use crate::figures::chart::Series;
use crate::figures::Figure;

/// The figures every run has (same id), each run's series drawn over the
/// first's, named after their run; `runs` pairs each run's name with its
/// figures, baseline first.
pub fn overlay(runs: Vec<(String, Vec<Figure>)>) -> Vec<Figure> {
    let mut runs = runs.into_iter();
    let Some((first, baseline)) = runs.next() else {
        return Vec::new();
    };
    let rename = |series: Vec<Series>, run: &str| -> Vec<Series> {
        let renamed = |s: Series| Series {
            name: format!("{run}: {}", s.name),
            ..s
        };
        series.into_iter().map(renamed).collect()
    };
    let mut merged: Vec<Figure> = baseline
        .into_iter()
        .map(|mut f| {
            f.chart.series = rename(std::mem::take(&mut f.chart.series), &first);
            f
        })
        .collect();
    let mut names = vec![first];
    for (name, figures) in runs {
        let mut theirs: BTreeMap<String, Figure> = figures.into_iter().map(|f| (f.id.clone(), f)).collect();
        merged.retain_mut(|f| match theirs.remove(&f.id) {
            Some(other) => {
                f.chart.series.extend(rename(other.chart.series, &name));
                true
            }
            None => false,
        });
        names.push(name);
    }
    for f in &mut merged {
        f.caption = format!("{} Runs overlaid: {}.", f.caption, names.join(", "));
    }
    merged
}
