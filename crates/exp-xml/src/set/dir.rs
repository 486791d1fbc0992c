//! The set directory: `structures.parquet`, `paths.parquet`,
//! `categorical.parquet`, `numeric.parquet` and `set.json`.
//!
//! Hashes are 32-character lowercase hex strings. A fit's parameters are
//! the columns `param1..param3` (in [`Family`]'s documented order) with
//! their names in `param_names` (comma separated), so the numbers stay
//! exact `f64`s; the runner-up has the same columns prefixed `runner_up_`.

use std::fs;
use std::path::Path;

use exp_parquet::Column;
use exp_stats::fit::Family;

use super::columns::{write_table, Table};
use super::info::{FittingSummary, FrequencyStats, SET_VERSION};
use super::{FitRecord, NumericPath, SetInfo, SynthesisSet};
use crate::hash::FastSet;
use crate::{CategoricalCount, Md5Hash, NumberFormat, PathInfo, Structure, ValueKind, XmlError};

/// The files of a set directory.
pub const SET_FILES: [&str; 5] = [
    "structures.parquet",
    "paths.parquet",
    "categorical.parquet",
    "numeric.parquet",
    "set.json",
];

/// Parameters per fit in `numeric.parquet` (Student t has the most: 3).
const MAX_PARAMS: usize = 3;

fn hex(hashes: impl Iterator<Item = Md5Hash>) -> Vec<String> {
    hashes.map(|h| h.to_string()).collect()
}

/// Writes the set into `dir` (created if needed), replacing its set files.
pub fn write_set(set: &SynthesisSet, dir: &Path) -> Result<(), XmlError> {
    fs::create_dir_all(dir).map_err(|source| XmlError::Io {
        action: "create directory",
        path: dir.to_path_buf(),
        source,
    })?;
    let s = &set.structures;
    write_table(
        &dir.join(SET_FILES[0]),
        vec![
            Column::new("hash", hex(s.iter().map(|s| s.hash))),
            Column::new("count", s.iter().map(|s| s.count).collect::<Vec<_>>()),
            Column::new("skeleton", s.iter().map(|s| s.skeleton.as_str()).collect::<Vec<_>>()),
        ],
    )?;
    let p = &set.paths;
    write_table(
        &dir.join(SET_FILES[1]),
        vec![
            Column::new("hash", hex(p.iter().map(|p| p.hash))),
            Column::new("text", p.iter().map(|p| p.text.as_str()).collect::<Vec<_>>()),
            Column::new("kind", p.iter().map(|p| kind_name(p.kind)).collect::<Vec<_>>()),
            Column::new("occurrences", p.iter().map(|p| p.occurrences).collect::<Vec<_>>()),
        ],
    )?;
    let c = &set.categorical;
    write_table(
        &dir.join(SET_FILES[2]),
        vec![
            Column::new("path", hex(c.iter().map(|c| c.path))),
            Column::new("value", c.iter().map(|c| c.value.as_str()).collect::<Vec<_>>()),
            Column::new("count", c.iter().map(|c| c.count).collect::<Vec<_>>()),
            Column::new("truncated", c.iter().map(|c| c.truncated).collect::<Vec<_>>()),
        ],
    )?;
    write_table(&dir.join(SET_FILES[3]), numeric_columns(&set.numeric))?;
    let json_path = dir.join(SET_FILES[4]);
    let json = serde_json::to_vec_pretty(&set.info).map_err(|source| XmlError::Json {
        action: "write",
        path: json_path.clone(),
        source,
    })?;
    fs::write(&json_path, json).map_err(|source| XmlError::Io {
        action: "write",
        path: json_path,
        source,
    })
}

fn numeric_columns(n: &[NumericPath]) -> Vec<Column> {
    let format = |f: NumberFormat| match f {
        NumberFormat::Integer => ("integer", None),
        NumberFormat::Fixed { decimals } => ("fixed", Some(decimals)),
        NumberFormat::Exponent => ("exponent", None),
    };
    let mut columns = vec![
        Column::new("path", hex(n.iter().map(|p| p.path))),
        Column::new("n", n.iter().map(|p| p.n).collect::<Vec<_>>()),
        Column::new("min", n.iter().map(|p| p.min).collect::<Vec<_>>()),
        Column::new("max", n.iter().map(|p| p.max).collect::<Vec<_>>()),
        Column::new("is_integer", n.iter().map(|p| p.is_integer).collect::<Vec<_>>()),
        Column::new("decimals", n.iter().map(|p| p.decimals).collect::<Vec<_>>()),
        Column::new("format", n.iter().map(|p| format(p.format).0).collect::<Vec<_>>()),
        Column::new(
            "format_decimals",
            n.iter().map(|p| format(p.format).1).collect::<Vec<_>>(),
        ),
    ];
    for (prefix, pick) in [("", 0usize), ("runner_up_", 1)] {
        let fits: Vec<Option<&FitRecord>> = n
            .iter()
            .map(|p| {
                if pick == 0 {
                    p.fit.as_ref()
                } else {
                    p.runner_up.as_ref()
                }
            })
            .collect();
        let col = |name: &str| format!("{prefix}{name}");
        columns.push(Column::new(
            col("family"),
            fits.iter().map(|f| f.map(|f| f.family.name())).collect::<Vec<_>>(),
        ));
        columns.push(Column::new(
            col("param_names"),
            fits.iter()
                .map(|f| f.map(|f| f.params.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(",")))
                .collect::<Vec<_>>(),
        ));
        for i in 0..MAX_PARAMS {
            columns.push(Column::new(
                col(&format!("param{}", i + 1)),
                fits.iter()
                    .map(|f| f.and_then(|f| f.params.get(i)).map(|&(_, v)| v))
                    .collect::<Vec<_>>(),
            ));
        }
        columns.push(Column::new(
            col("log_likelihood"),
            fits.iter().map(|f| f.map(|f| f.log_likelihood)).collect::<Vec<_>>(),
        ));
        columns.push(Column::new(
            col("aic"),
            fits.iter().map(|f| f.map(|f| f.aic)).collect::<Vec<_>>(),
        ));
    }
    columns
}

fn kind_name(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Categorical => "categorical",
        ValueKind::Numeric => "numeric",
    }
}

/// Reads a set directory written by [`write_set`]. A missing file is
/// [`XmlError::Io`], an undecodable one [`XmlError::Parquet`] or
/// [`XmlError::Json`], and content that is not a valid set
/// [`XmlError::SetFormat`] — each naming the file. The frequency statistics
/// and family shares of `set.json` are recomputed from the tables (they are
/// derived figures for readers; JSON need not round-trip `f64`s exactly).
pub fn read_set(dir: &Path) -> Result<SynthesisSet, XmlError> {
    match fs::metadata(dir) {
        Ok(metadata) if !metadata.is_dir() => {
            return Err(XmlError::Config(format!(
                "the set `{}` is {}, not a set directory",
                dir.display(),
                exp_files::describe(&metadata.file_type())
            )))
        }
        _ => {}
    }
    let t = Table::open(&dir.join(SET_FILES[0]))?;
    let structures: Vec<Structure> = zip3(t.hashes("hash")?, t.u64("count")?, t.str("skeleton")?)
        .map(|(hash, count, skeleton)| Structure { hash, count, skeleton })
        .collect();

    let t = Table::open(&dir.join(SET_FILES[1]))?;
    let kinds = t
        .str("kind")?
        .into_iter()
        .map(|k| match k.as_str() {
            "categorical" => Ok(ValueKind::Categorical),
            "numeric" => Ok(ValueKind::Numeric),
            other => Err(t.invalid(format!("unknown path kind `{other}`"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let paths: Vec<PathInfo> = zip3(t.hashes("hash")?, t.str("text")?, kinds)
        .zip(t.u64("occurrences")?)
        .map(|((hash, text, kind), occurrences)| PathInfo {
            hash,
            text,
            kind,
            occurrences,
        })
        .collect();
    let known: FastSet<Md5Hash> = paths.iter().map(|p| p.hash).collect();

    let t = Table::open(&dir.join(SET_FILES[2]))?;
    let categorical: Vec<CategoricalCount> = zip3(t.hashes("path")?, t.str("value")?, t.u64("count")?)
        .zip(t.bool("truncated")?)
        .map(|((path, value, count), truncated)| CategoricalCount {
            path,
            value,
            count,
            truncated,
        })
        .collect();
    check_known(&t, categorical.iter().map(|c| c.path), &known)?;

    let t = Table::open(&dir.join(SET_FILES[3]))?;
    let numeric = read_numeric(&t)?;
    check_known(&t, numeric.iter().map(|n| n.path), &known)?;

    let json_path = dir.join(SET_FILES[4]);
    let text = exp_files::read_bytes(&json_path, crate::MAX_SET_FILE_BYTES).map_err(|e| XmlError::Io {
        action: "read",
        path: json_path.clone(),
        source: e.into(),
    })?;
    let mut info: SetInfo = serde_json::from_slice(&text).map_err(|source| XmlError::Json {
        action: "parse",
        path: json_path.clone(),
        source,
    })?;
    if info.version > SET_VERSION {
        return Err(XmlError::SetFormat {
            path: json_path,
            message: format!(
                "set version {} is newer than this program's {SET_VERSION}",
                info.version
            ),
        });
    }
    info.corpus.structure_frequency = FrequencyStats::of(structures.iter().map(|s| s.count));
    info.corpus.path_frequency = FrequencyStats::of(paths.iter().map(|p| p.occurrences));
    info.fitting.families = FittingSummary::of(&numeric).families;
    Ok(SynthesisSet {
        structures,
        paths,
        categorical,
        numeric,
        info,
    })
}

fn zip3<A, B, C>(a: Vec<A>, b: Vec<B>, c: Vec<C>) -> impl Iterator<Item = (A, B, C)> {
    a.into_iter().zip(b).zip(c).map(|((a, b), c)| (a, b, c))
}

fn check_known(t: &Table, refs: impl Iterator<Item = Md5Hash>, known: &FastSet<Md5Hash>) -> Result<(), XmlError> {
    for hash in refs {
        if !known.contains(&hash) {
            return Err(t.invalid(format!("path {hash} is not in paths.parquet")));
        }
    }
    Ok(())
}

fn read_numeric(t: &Table) -> Result<Vec<NumericPath>, XmlError> {
    let formats = t.str("format")?;
    let format_decimals = t.opt_u32("format_decimals")?;
    let fit = read_fits(t, "")?;
    let runner_up = read_fits(t, "runner_up_")?;
    let (path, n, min, max) = (t.hashes("path")?, t.u64("n")?, t.f64("min")?, t.f64("max")?);
    let (is_integer, decimals) = (t.bool("is_integer")?, t.u32("decimals")?);
    (0..t.height())
        .map(|i| {
            let format = match (formats[i].as_str(), format_decimals[i]) {
                ("integer", _) => NumberFormat::Integer,
                ("exponent", _) => NumberFormat::Exponent,
                ("fixed", Some(decimals)) => NumberFormat::Fixed { decimals },
                (other, _) => return Err(t.invalid(format!("bad number format `{other}` in row {i}"))),
            };
            // Every number is checked: a set is a file anyone can edit, and
            // `format_decimals = 70000` panicked the generator's formatter.
            let most = crate::MAX_VALUE_LEN as u32;
            if format_decimals[i].is_some_and(|d| d > most) || decimals[i] > most {
                return Err(t.invalid(format!(
                    "row {i}: more than {most} decimals (no value read from a corpus has more)"
                )));
            }
            if !(min[i].is_finite() && max[i].is_finite() && min[i] <= max[i]) {
                return Err(t.invalid(format!(
                    "row {i}: `min` {} and `max` {} are not a range",
                    min[i], max[i]
                )));
            }
            Ok(NumericPath {
                path: path[i],
                fit: fit[i].clone(),
                runner_up: runner_up[i].clone(),
                n: n[i],
                min: min[i],
                max: max[i],
                is_integer: is_integer[i],
                decimals: decimals[i],
                format,
            })
        })
        .collect()
}

fn read_fits(t: &Table, prefix: &str) -> Result<Vec<Option<FitRecord>>, XmlError> {
    let col = |name: &str| format!("{prefix}{name}");
    let families = t.opt_str(&col("family"))?;
    let names = t.opt_str(&col("param_names"))?;
    let params = (1..=MAX_PARAMS)
        .map(|i| t.opt_f64(&col(&format!("param{i}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let ll = t.opt_f64(&col("log_likelihood"))?;
    let aic = t.opt_f64(&col("aic"))?;
    (0..t.height())
        .map(|i| {
            let Some(family) = &families[i] else { return Ok(None) };
            let bad = |what: &str| t.invalid(format!("{what} in column `{}` row {i}", col("family")));
            let family = Family::from_name(family).ok_or_else(|| bad(&format!("unknown family `{family}`")))?;
            let names: Vec<&str> = match names[i].as_deref() {
                Some("") | None => Vec::new(),
                Some(list) => list.split(',').collect(),
            };
            if names.len() > MAX_PARAMS {
                return Err(bad("more than 3 parameters"));
            }
            let params = names
                .iter()
                .zip(&params)
                .map(|(&name, column)| {
                    let value = column[i].ok_or_else(|| bad("missing parameter"))?;
                    if !value.is_finite() {
                        return Err(bad(&format!("parameter `{name}` is {value}")));
                    }
                    Ok((name.to_owned(), value))
                })
                .collect::<Result<Vec<_>, XmlError>>()?;
            let (Some(log_likelihood), Some(aic)) = (ll[i], aic[i]) else {
                return Err(bad("missing log-likelihood or AIC"));
            };
            Ok(Some(FitRecord {
                family,
                params,
                log_likelihood,
                aic,
            }))
        })
        .collect()
}
