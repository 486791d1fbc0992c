//! Per-trial summaries of every table, for `expc report`.
//!
//! Exact, not sketched: percentiles come from the values, by selection
//! rather than sorting. Memory is bounded by one column of one trial —
//! files are read one column at a time (Parquet is columnar, so that reads
//! only that column's pages).

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::{ArrowDataType, DataType, ParquetReader, SerReader};
use serde::{Deserialize, Serialize};

use exp_results::{PartFile, ResultsError, RunStatus, RunView, Warning};

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
/// ([`exp_stats::percentile`]); all are `None` when `count` is 0.
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
pub fn summarize(run: &RunView) -> Result<RunSummary, ResultsError> {
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
    Ok(RunSummary {
        dir: run.dir.clone(),
        experiment: run.manifest.experiment.clone(),
        run_id: run.manifest.run_id.clone(),
        status: run.manifest.status,
        tables,
        warnings,
    })
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
    for (index, path) in files.iter().enumerate() {
        let mut reader = open(path).map_err(|e| (index, e))?;
        let fail = |source| {
            (
                index,
                ResultsError::Parquet {
                    action: "read",
                    path: path.to_path_buf(),
                    source,
                },
            )
        };
        rows += reader.num_rows().map_err(fail)? as u64;
        let schema = reader.schema().map_err(fail)?;
        for (name, field) in schema.iter() {
            if name.as_str() == TIME_COLUMN || !is_numeric(field.dtype()) {
                continue;
            }
            match columns.iter_mut().find(|(n, _)| n == name.as_str()) {
                Some((_, holders)) => holders.push(index),
                None => columns.push((name.to_string(), vec![index])),
            }
        }
    }
    let mut summaries = Vec::with_capacity(columns.len());
    for (column, holders) in columns {
        let mut values = Vec::new();
        let mut count = 0u64;
        for index in holders {
            count += read_column(files[index], &column, &mut values).map_err(|e| (index, e))?;
        }
        summaries.push(column_summary(column, count, values));
    }
    Ok((rows, summaries))
}

fn open(path: &Path) -> Result<ParquetReader<File>, ResultsError> {
    let file = File::open(path).map_err(|source| ResultsError::Io {
        action: "open",
        path: path.to_path_buf(),
        source,
    })?;
    Ok(ParquetReader::new(file))
}

fn is_numeric(dtype: &ArrowDataType) -> bool {
    use ArrowDataType as A;
    matches!(
        dtype,
        A::Int8
            | A::Int16
            | A::Int32
            | A::Int64
            | A::UInt8
            | A::UInt16
            | A::UInt32
            | A::UInt64
            | A::Float32
            | A::Float64
    )
}

/// Appends the column's non-null values to `out`; returns how many there were.
fn read_column(path: &Path, column: &str, out: &mut Vec<f64>) -> Result<u64, ResultsError> {
    let read = |source| ResultsError::Parquet {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let frame = open(path)?
        .with_columns(Some(vec![column.to_string()]))
        .finish()
        .map_err(read)?;
    let series = frame
        .column(column)
        .map_err(read)?
        .cast(&DataType::Float64)
        .map_err(read)?;
    let values = series.as_materialized_series().f64().map_err(read)?;
    let before = out.len();
    out.extend(values.iter().flatten());
    Ok((out.len() - before) as u64)
}

fn column_summary(column: String, count: u64, mut values: Vec<f64>) -> ColumnSummary {
    values.retain(|v| !v.is_nan());
    let nan = count - values.len() as u64;
    let mean = (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
    let min = values.iter().copied().min_by(f64::total_cmp);
    let max = values.iter().copied().max_by(f64::total_cmp);
    let p50 = percentile_by_selection(&mut values, 0.5);
    let p95 = percentile_by_selection(&mut values, 0.95);
    let p99 = percentile_by_selection(&mut values, 0.99);
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

/// [`exp_stats::percentile`] of `values` without sorting them (27 million
/// values take seconds to sort): the two ranks it reads are found by
/// selection, which reorders `values` but gives the same number.
fn percentile_by_selection(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (values.len() - 1) as f64 * q;
    let k = h.floor();
    let (_, &mut lower, above) = values.select_nth_unstable_by(k as usize, f64::total_cmp);
    let fraction = h - k;
    if fraction == 0.0 {
        return Some(lower);
    }
    let upper = above.iter().copied().min_by(f64::total_cmp).unwrap_or(lower);
    Some(lower + fraction * (upper - lower))
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
        for q in [0.0, 0.001, 0.5, 0.95, 0.99, 0.999, 1.0] {
            assert_eq!(
                percentile_by_selection(&mut shuffled, q),
                exp_stats::percentile(&sorted, q),
                "q {q}"
            );
        }
        assert_eq!((empty.mean, empty.p50, empty.min), (None, None, None));
    }
}
