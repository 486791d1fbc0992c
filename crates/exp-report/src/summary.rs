//! Per-trial summaries of every table, for `expc report`.
//!
//! Exact, not sketched: percentiles come from the values, by selection
//! rather than sorting. Only a column whose distribution means something
//! gets a mean and percentiles; identifiers and points in time
//! (`column_kinds.rs`) get their extent (count, min, max), all such columns of a
//! file in one chunked pass. Memory is bounded by one column of one trial:
//! the others are read in chunks, one column per pass (Parquet is
//! columnar, so that reads only that column's pages).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use exp_results::{PartFile, ResultsError, RunStatus, RunView, Warning};

use crate::column_kinds::extent_only;
use crate::part_chunks::{for_each_chunk, open};

/// The time column every table carries; its statistics mean nothing.
pub const TIME_COLUMN: &str = "t_ns";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub dir: PathBuf,
    pub experiment: String,
    pub run_id: String,
    pub status: RunStatus,
    pub tables: Vec<TableSummary>,
    /// Files left out (unreadable, truncated, unfinished) and stray entries.
    pub warnings: Vec<Warning>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableSummary {
    pub table: String,
    pub trials: Vec<TrialSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialSummary {
    pub trial: u32,
    /// Files read (unreadable ones are in the warnings instead).
    pub files: u64,
    pub rows: u64,
    /// Every numeric column except [`TIME_COLUMN`], in file order.
    pub columns: Vec<ColumnSummary>,
}

/// Statistics of one numeric column over one trial. Integers are converted
/// to `f64` (exact up to 2⁵³). NaN values are counted in `nan` and left out
/// of everything else. Percentiles interpolate linearly between ranks
/// ([`exp_stats::percentile`]); all are `None` when `count` is 0, and the
/// mean and percentiles are `None` for identifiers and points in time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnSummary {
    pub column: String,
    /// Non-null values, NaNs included.
    pub count: u64,
    pub nan: u64,
    pub mean: Option<f64>,
    pub min: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

/// Summarises every table of the run, trial by trial. A file that cannot be
/// read is left out of its trial and reported in [`RunSummary::warnings`].
pub fn summarize(run: &RunView) -> RunSummary {
    let mut warnings = run.warnings.clone();
    let tables = run
        .tables
        .iter()
        .map(|(table, files)| TableSummary {
            table: table.clone(),
            trials: files
                .trials
                .iter()
                .map(|(&trial, parts)| summarize_trial(trial, parts, &mut warnings))
                .collect(),
        })
        .collect();
    RunSummary {
        dir: run.dir.clone(),
        experiment: run.manifest.experiment.clone(),
        run_id: run.manifest.run_id.clone(),
        status: run.manifest.status,
        tables,
        warnings,
    }
}

fn summarize_trial(trial: u32, parts: &[PartFile], warnings: &mut Vec<Warning>) -> TrialSummary {
    let mut files: Vec<&Path> = parts.iter().map(|p| p.path.as_path()).collect();
    // A file can fail at any column (a truncated page); then the trial is
    // summarised again without it, so every number covers the same files.
    loop {
        match try_trial(&files) {
            Ok((rows, columns)) => {
                return TrialSummary {
                    trial,
                    files: files.len() as u64,
                    rows,
                    columns,
                }
            }
            Err((index, error)) => {
                warnings.push(Warning {
                    path: files.remove(index).to_path_buf(),
                    message: error.to_string(),
                });
            }
        }
    }
}

type Failure = (usize, ResultsError);

fn try_trial(files: &[&Path]) -> Result<(u64, Vec<ColumnSummary>), Failure> {
    let mut rows = 0u64;
    // Numeric columns in first-seen order, with the files that have them.
    let mut columns: Vec<(String, Vec<usize>)> = Vec::new();
    let mut file_rows = Vec::with_capacity(files.len());
    for (index, path) in files.iter().enumerate() {
        let reader = open(path).map_err(|e| (index, e))?;
        let n = reader.num_rows();
        rows += n;
        file_rows.push(usize::try_from(n).unwrap_or(usize::MAX));
        for field in reader.fields() {
            if field.name == TIME_COLUMN || !field.kind.is_numeric() {
                continue;
            }
            match columns.iter_mut().find(|(n, _)| *n == field.name) {
                Some((_, holders)) => holders.push(index),
                None => columns.push((field.name.clone(), vec![index])),
            }
        }
    }
    let mut extents = extents(files, &columns)?.into_iter();
    let mut summaries = Vec::with_capacity(columns.len());
    for (column, holders) in columns {
        if extent_only(&column) {
            let extent = extents.next().unwrap_or_default();
            summaries.push(ColumnSummary {
                column,
                count: extent.count,
                nan: extent.nan,
                mean: None,
                min: extent.min,
                p50: None,
                p95: None,
                p99: None,
                max: extent.max,
            });
            continue;
        }
        let mut values = Vec::with_capacity(holders.iter().map(|&i| file_rows[i]).sum());
        for index in holders {
            for_each_chunk(files[index], &[&column], &[], |chunk| {
                values.extend(chunk.f64(&column)?.iter().flatten());
                Ok(())
            })
            .map_err(|e| (index, e))?;
        }
        let count = values.len() as u64;
        summaries.push(column_summary(column, count, values));
    }
    Ok((rows, summaries))
}

/// Count, NaNs and extent of a column.
#[derive(Debug, Default)]
struct Extent {
    count: u64,
    nan: u64,
    min: Option<f64>,
    max: Option<f64>,
}

/// The extents of the extent-only `columns`, in their order; the columns a
/// file holds are read in one pass over it.
fn extents(files: &[&Path], columns: &[(String, Vec<usize>)]) -> Result<Vec<Extent>, Failure> {
    let mut extents: Vec<(&str, &[usize], Extent)> = columns
        .iter()
        .filter(|(c, _)| extent_only(c))
        .map(|(c, holders)| (c.as_str(), holders.as_slice(), Extent::default()))
        .collect();
    for (index, path) in files.iter().enumerate() {
        let held: Vec<&str> = extents
            .iter()
            .filter(|(_, holders, _)| holders.contains(&index))
            .map(|(c, _, _)| *c)
            .collect();
        if held.is_empty() {
            continue;
        }
        for_each_chunk(path, &held, &[], |chunk| {
            for (column, holders, extent) in &mut extents {
                if holders.contains(&index) {
                    extent.add(chunk.f64(column)?.iter().flatten());
                }
            }
            Ok(())
        })
        .map_err(|e| (index, e))?;
    }
    Ok(extents.into_iter().map(|(_, _, extent)| extent).collect())
}

impl Extent {
    fn add(&mut self, values: impl Iterator<Item = f64>) {
        for v in values {
            self.count += 1;
            if v.is_nan() {
                self.nan += 1;
                continue;
            }
            self.min = Some(self.min.map_or(v, |m| m.min(v)));
            self.max = Some(self.max.map_or(v, |m| m.max(v)));
        }
    }
}

fn column_summary(column: String, count: u64, mut values: Vec<f64>) -> ColumnSummary {
    values.retain(|v| !v.is_nan());
    let nan = count - values.len() as u64;
    let mean = (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
    let min = values.iter().copied().min_by(f64::total_cmp);
    let max = values.iter().copied().max_by(f64::total_cmp);
    let [p50, p95, p99] = percentiles_by_selection(&mut values, [0.5, 0.95, 0.99]);
    ColumnSummary {
        column,
        count,
        nan,
        mean,
        min,
        p50,
        p95,
        p99,
        max,
    }
}

/// [`exp_stats::percentile`] of `values` at each of `qs` (ascending)
/// without sorting them (27 million values take seconds to sort): the two
/// ranks each reads are found by selection, which reorders `values` but
/// gives the same numbers. Each selection after the first searches only
/// the values above the last one's rank.
fn percentiles_by_selection<const N: usize>(values: &mut [f64], qs: [f64; N]) -> [Option<f64>; N] {
    let mut out = [None; N];
    let Some(last) = values.len().checked_sub(1) else {
        return out;
    };
    // Everything below `from` is at or below the value at rank `from`.
    let mut from = 0;
    for (q, out) in qs.into_iter().zip(&mut out) {
        if !(0.0..=1.0).contains(&q) {
            continue;
        }
        let h = last as f64 * q;
        let k = h.floor();
        let rank = (k as usize).max(from);
        let (_, &mut lower, above) = values[from..].select_nth_unstable_by(rank - from, f64::total_cmp);
        from = rank;
        let fraction = h - k;
        *out = Some(if fraction == 0.0 {
            lower
        } else {
            let upper = above.iter().copied().min_by(f64::total_cmp).unwrap_or(lower);
            lower + fraction * (upper - lower)
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_statistics() {
        let values: Vec<f64> = (1..=100).rev().map(f64::from).chain([f64::NAN]).collect();
        let s = column_summary("x".into(), 101, values);
        assert_eq!((s.count, s.nan), (101, 1));
        assert_eq!((s.min, s.max, s.mean), (Some(1.0), Some(100.0), Some(50.5)));
        // Linear interpolation: h = 99 · q.
        assert_eq!(s.p50, Some(50.5));
        assert!((s.p95.unwrap() - 95.05).abs() < 1e-9);
        assert!((s.p99.unwrap() - 99.01).abs() < 1e-9);
        let empty = column_summary("y".into(), 0, Vec::new());
        // Selection gives what sorting gives, at every rank.
        let mut rng = exp_stats::Rng::new(7);
        let mut shuffled: Vec<f64> = (0..1001).map(|_| rng.next_f64() * 1e6).collect();
        let mut sorted = shuffled.clone();
        sorted.sort_unstable_by(f64::total_cmp);
        let qs = [0.0, 0.001, 0.5, 0.95, 0.99, 0.999, 1.0];
        let expected = qs.map(|q| exp_stats::percentile(&sorted, q));
        assert_eq!(percentiles_by_selection(&mut shuffled, qs), expected);
        for q in qs {
            let [one] = percentiles_by_selection(&mut shuffled, [q]);
            assert_eq!(one, exp_stats::percentile(&sorted, q), "q {q}");
        }
        assert_eq!((empty.mean, empty.p50, empty.min), (None, None, None));
    }
}
