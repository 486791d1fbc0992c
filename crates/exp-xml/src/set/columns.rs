//! Parquet tables of a set directory: writing a list of columns, and reading
//! columns back by name with errors that name the file and column.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use polars_core::prelude as pl;
use polars_io::prelude::{ParquetCompression, ParquetReader, ParquetWriter, SerReader};

use crate::{Md5Hash, XmlError};

/// Rows per Parquet row group, at most.
const ROW_GROUP_MAX: usize = 1 << 20;

/// Writes `columns` (all of one length) as one Parquet file, zstd
/// compressed like the result store's tables.
pub(super) fn write_table(path: &Path, columns: Vec<pl::Series>) -> Result<(), XmlError> {
    let height = columns.first().map_or(0, |s| s.len());
    let parquet = |action| {
        let path = path.to_path_buf();
        move |source| XmlError::Parquet { action, path, source }
    };
    let mut frame =
        pl::DataFrame::new(height, columns.into_iter().map(pl::Column::from).collect()).map_err(parquet("build"))?;
    let file = File::create(path).map_err(|source| XmlError::Io {
        action: "create",
        path: path.to_path_buf(),
        source,
    })?;
    ParquetWriter::new(BufWriter::new(file))
        .with_compression(ParquetCompression::Zstd(None))
        // One chunk at least a row group long is written as it is; shorter
        // ones go through polars' regrouping, whose first use zeroes an
        // 8 MiB buffer (2,048 page faults, 5 % of extracting a 7.5 MB
        // corpus). Set tables hold a row per path or value: one group.
        .with_row_group_size(Some(height.clamp(1, ROW_GROUP_MAX)))
        .finish(&mut frame)
        .map_err(parquet("write"))?;
    Ok(())
}

/// A decoded table and the file it came from, for error messages.
pub(super) struct Table {
    frame: pl::DataFrame,
    path: PathBuf,
}

impl Table {
    pub fn open(path: &Path) -> Result<Table, XmlError> {
        let file = exp_files::open_regular(path).map_err(|e| XmlError::Io {
            action: "open",
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let frame = ParquetReader::new(file.file)
            .finish()
            .map_err(|source| XmlError::Parquet {
                action: "read",
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Table {
            frame,
            path: path.to_path_buf(),
        })
    }

    pub fn height(&self) -> usize {
        self.frame.height()
    }

    /// A format error about this file.
    pub fn invalid(&self, message: impl Into<String>) -> XmlError {
        XmlError::SetFormat {
            path: self.path.clone(),
            message: message.into(),
        }
    }

    fn column(&self, name: &str) -> Result<&pl::Column, XmlError> {
        self.frame
            .column(name)
            .map_err(|_| self.invalid(format!("missing column `{name}`")))
    }

    fn typed<'a, T: 'a>(
        &'a self,
        name: &str,
        expected: &str,
        get: impl FnOnce(&'a pl::Column) -> pl::PolarsResult<T>,
    ) -> Result<T, XmlError> {
        let column = self.column(name)?;
        get(column).map_err(|_| self.invalid(format!("column `{name}` holds {}, expected {expected}", column.dtype())))
    }

    pub fn opt_str(&self, name: &str) -> Result<Vec<Option<String>>, XmlError> {
        let c = self.typed(name, "strings", pl::Column::str)?;
        Ok(c.iter().map(|v| v.map(str::to_owned)).collect())
    }

    pub fn str(&self, name: &str) -> Result<Vec<String>, XmlError> {
        self.required(name, self.opt_str(name)?)
    }

    pub fn u64(&self, name: &str) -> Result<Vec<u64>, XmlError> {
        let c = self.typed(name, "u64", pl::Column::u64)?;
        self.required(name, c.iter().collect())
    }

    pub fn opt_u32(&self, name: &str) -> Result<Vec<Option<u32>>, XmlError> {
        let c = self.typed(name, "u32", pl::Column::u32)?;
        Ok(c.iter().collect())
    }

    pub fn u32(&self, name: &str) -> Result<Vec<u32>, XmlError> {
        self.required(name, self.opt_u32(name)?)
    }

    pub fn opt_f64(&self, name: &str) -> Result<Vec<Option<f64>>, XmlError> {
        let c = self.typed(name, "f64", pl::Column::f64)?;
        Ok(c.iter().collect())
    }

    pub fn f64(&self, name: &str) -> Result<Vec<f64>, XmlError> {
        self.required(name, self.opt_f64(name)?)
    }

    pub fn bool(&self, name: &str) -> Result<Vec<bool>, XmlError> {
        let c = self.typed(name, "booleans", pl::Column::bool)?;
        self.required(name, c.iter().collect())
    }

    pub fn hashes(&self, name: &str) -> Result<Vec<Md5Hash>, XmlError> {
        self.str(name)?
            .iter()
            .map(|h| parse_hash(h).ok_or_else(|| self.invalid(format!("`{h}` in column `{name}` is not an MD5 hash"))))
            .collect()
    }

    fn required<T>(&self, name: &str, values: Vec<Option<T>>) -> Result<Vec<T>, XmlError> {
        values
            .into_iter()
            .collect::<Option<Vec<T>>>()
            .ok_or_else(|| self.invalid(format!("null in column `{name}`")))
    }
}

/// Parses 32 lowercase hex digits.
pub(crate) fn parse_hash(text: &str) -> Option<Md5Hash> {
    let bytes = text.as_bytes();
    if bytes.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        let digit = |b: u8| match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            _ => None,
        };
        *o = digit(*pair.first()?)? << 4 | digit(*pair.get(1)?)?;
    }
    Some(Md5Hash(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_round_trip_through_hex() {
        let h = crate::md5_of("<a></a>");
        assert_eq!(parse_hash(&h.to_string()), Some(h));
        assert_eq!(parse_hash(&h.to_string().to_uppercase()), None);
        assert_eq!(parse_hash("abc"), None);
    }
}
