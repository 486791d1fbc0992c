//! Parquet tables of a set directory: writing a list of columns, and reading
//! columns back by name with errors that name the file and column.

use std::fs::File;
use std::path::{Path, PathBuf};

use exp_parquet::{Column, Frame, Reader, Values};

use crate::{Md5Hash, XmlError};

/// Writes `columns` (all of one length) as one Parquet file of one row
/// group (set tables hold a row per path or value), zstd compressed like
/// the result store's tables.
pub(super) fn write_table(path: &Path, columns: Vec<Column>) -> Result<(), XmlError> {
    let parquet = |action| {
        let path = path.to_path_buf();
        move |source| XmlError::Parquet { action, path, source }
    };
    let frame = Frame::new(columns).map_err(parquet("build"))?;
    let file = File::create(path).map_err(|source| XmlError::Io {
        action: "create",
        path: path.to_path_buf(),
        source,
    })?;
    let mut writer = exp_parquet::Writer::new(file, &frame.fields()).map_err(parquet("write"))?;
    writer.write(&frame).map_err(parquet("write"))?;
    writer.finish().map_err(parquet("write"))?;
    Ok(())
}

/// A decoded table and the file it came from, for error messages.
pub(super) struct Table {
    frame: Frame,
    path: PathBuf,
}

impl Table {
    pub fn open(path: &Path) -> Result<Table, XmlError> {
        let file = exp_files::open_regular(path).map_err(|e| XmlError::Io {
            action: "open",
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let frame = (Reader::new(file.file).and_then(|r| r.read_all())).map_err(|source| XmlError::Parquet {
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

    fn column(&self, name: &str) -> Result<&Values, XmlError> {
        self.frame
            .column(name)
            .ok_or_else(|| self.invalid(format!("missing column `{name}`")))
    }

    fn wrong_type(&self, name: &str, found: &Values, expected: &str) -> XmlError {
        self.invalid(format!("column `{name}` holds {}, expected {expected}", found.kind()))
    }

    pub fn opt_str(&self, name: &str) -> Result<Vec<Option<String>>, XmlError> {
        match self.column(name)? {
            Values::Str(v) => Ok(v.iter().map(|s| s.map(str::to_owned)).collect()),
            other => Err(self.wrong_type(name, other, "strings")),
        }
    }

    pub fn str(&self, name: &str) -> Result<Vec<String>, XmlError> {
        self.required(name, self.opt_str(name)?)
    }

    pub fn u64(&self, name: &str) -> Result<Vec<u64>, XmlError> {
        match self.column(name)? {
            Values::U64(v) => self.required(name, v.clone()),
            other => Err(self.wrong_type(name, other, "u64")),
        }
    }

    pub fn opt_u32(&self, name: &str) -> Result<Vec<Option<u32>>, XmlError> {
        match self.column(name)? {
            Values::U32(v) => Ok(v.clone()),
            other => Err(self.wrong_type(name, other, "u32")),
        }
    }

    pub fn u32(&self, name: &str) -> Result<Vec<u32>, XmlError> {
        self.required(name, self.opt_u32(name)?)
    }

    pub fn opt_f64(&self, name: &str) -> Result<Vec<Option<f64>>, XmlError> {
        match self.column(name)? {
            Values::F64(v) => Ok(v.clone()),
            other => Err(self.wrong_type(name, other, "f64")),
        }
    }

    pub fn f64(&self, name: &str) -> Result<Vec<f64>, XmlError> {
        self.required(name, self.opt_f64(name)?)
    }

    pub fn bool(&self, name: &str) -> Result<Vec<bool>, XmlError> {
        match self.column(name)? {
            Values::Bool(v) => self.required(name, v.clone()),
            other => Err(self.wrong_type(name, other, "booleans")),
        }
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
