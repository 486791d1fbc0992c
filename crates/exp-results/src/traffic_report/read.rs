//! Reading the traffic tables' part files. Traffic tables are small (one
//! row per connection or exchange, thousands to a few hundred thousand per
//! trial), so each file is read whole, with only the columns needed.

use std::fs::File;
use std::path::Path;

use polars::prelude::{DataFrame, DataType, ParquetReader, SerReader};

use crate::ResultsError;

/// The requested columns of one file.
pub(crate) struct Frame<'a> {
    frame: DataFrame,
    path: &'a Path,
}

impl<'a> Frame<'a> {
    pub fn read(path: &'a Path, columns: &[&str]) -> Result<Frame<'a>, ResultsError> {
        let fail = |source| ResultsError::Parquet {
            action: "read",
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(|source| ResultsError::Io {
            action: "open",
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = ParquetReader::new(file);
        let schema = reader.schema().map_err(fail)?;
        if let Some(missing) = columns.iter().find(|c| schema.get(c).is_none()) {
            return Err(ResultsError::MissingColumn {
                path: path.to_path_buf(),
                column: missing.to_string(),
            });
        }
        let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
        let frame = reader.with_columns(Some(names)).finish().map_err(fail)?;
        Ok(Frame { frame, path })
    }

    pub fn height(&self) -> usize {
        self.frame.height()
    }

    pub fn u64(&self, column: &str) -> Result<Vec<Option<u64>>, ResultsError> {
        let c = self.frame.column(column).map_err(self.fail())?;
        if !c.dtype().is_integer() {
            return Err(self.wrong_type(column, "integers", c.dtype()));
        }
        let cast = c.cast(&DataType::UInt64).map_err(self.fail())?;
        Ok(cast.u64().map_err(self.fail())?.iter().collect())
    }

    pub fn str(&self, column: &str) -> Result<Vec<Option<String>>, ResultsError> {
        let c = self.frame.column(column).map_err(self.fail())?;
        match c.dtype() {
            DataType::String => Ok(c
                .str()
                .map_err(self.fail())?
                .iter()
                .map(|s| s.map(str::to_string))
                .collect()),
            other => Err(self.wrong_type(column, "strings", other)),
        }
    }

    pub fn bool(&self, column: &str) -> Result<Vec<Option<bool>>, ResultsError> {
        let c = self.frame.column(column).map_err(self.fail())?;
        match c.dtype() {
            DataType::Boolean => Ok(c.bool().map_err(self.fail())?.iter().collect()),
            other => Err(self.wrong_type(column, "booleans", other)),
        }
    }

    fn fail(&self) -> impl Fn(polars::error::PolarsError) -> ResultsError + '_ {
        |source| ResultsError::Parquet {
            action: "read",
            path: self.path.to_path_buf(),
            source,
        }
    }

    fn wrong_type(&self, column: &str, expected: &'static str, found: &DataType) -> ResultsError {
        ResultsError::ColumnType {
            path: self.path.to_path_buf(),
            column: column.to_string(),
            expected,
            found: found.to_string(),
        }
    }
}
