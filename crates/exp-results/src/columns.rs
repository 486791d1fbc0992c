//! Typed reading of the columns of a decoded part file, shared by the
//! reports (MQTT reads slices of row groups, traffic whole files) and the
//! claims (exp-claims).

use std::path::Path;

use polars_core::prelude::{
    BooleanChunked, ChunkFullNull, DataFrame, DataType, Float64Chunked, StringChunked, UInt64Chunked,
};

use crate::ResultsError;

/// Rows of a part file (a slice of it or all of it) with typed access to
/// their columns; errors name the file and the column.
pub struct Columns<'a> {
    frame: DataFrame,
    path: &'a Path,
}

impl<'a> Columns<'a> {
    pub fn new(frame: DataFrame, path: &'a Path) -> Self {
        Columns { frame, path }
    }

    pub fn height(&self) -> usize {
        self.frame.height()
    }

    pub fn has(&self, column: &str) -> bool {
        self.frame.column(column).is_ok()
    }

    /// An unsigned column; other integer types are converted (negative values become null).
    pub fn u64(&self, column: &str) -> Result<UInt64Chunked, ResultsError> {
        let c = self.frame.column(column).map_err(self.read())?;
        if !c.dtype().is_integer() {
            return Err(self.wrong_type(column, "integers", c.dtype()));
        }
        let cast = c.cast(&DataType::UInt64).map_err(self.read())?;
        Ok(cast.u64().map_err(self.read())?.clone())
    }

    /// An integer column the file may lack (all null then).
    pub fn u64_or_null(&self, column: &str) -> Result<UInt64Chunked, ResultsError> {
        if self.has(column) {
            self.u64(column)
        } else {
            Ok(UInt64Chunked::full_null(column.into(), self.frame.height()))
        }
    }

    /// A numeric column as floats.
    pub fn f64(&self, column: &str) -> Result<Float64Chunked, ResultsError> {
        let c = self.frame.column(column).map_err(self.read())?;
        if !c.dtype().is_primitive_numeric() {
            return Err(self.wrong_type(column, "numbers", c.dtype()));
        }
        let cast = c.cast(&DataType::Float64).map_err(self.read())?;
        Ok(cast.f64().map_err(self.read())?.clone())
    }

    pub fn str(&self, column: &str) -> Result<StringChunked, ResultsError> {
        let c = self.frame.column(column).map_err(self.read())?;
        match c.dtype() {
            DataType::String => Ok(c.str().map_err(self.read())?.clone()),
            other => Err(self.wrong_type(column, "strings", other)),
        }
    }

    /// A string column the file may lack (all null then).
    pub fn str_or_null(&self, column: &str) -> Result<StringChunked, ResultsError> {
        if self.has(column) {
            self.str(column)
        } else {
            Ok(StringChunked::full_null(column.into(), self.frame.height()))
        }
    }

    pub fn bool(&self, column: &str) -> Result<BooleanChunked, ResultsError> {
        let c = self.frame.column(column).map_err(self.read())?;
        match c.dtype() {
            DataType::Boolean => Ok(c.bool().map_err(self.read())?.clone()),
            other => Err(self.wrong_type(column, "booleans", other)),
        }
    }

    /// A boolean column the file may lack (`default` everywhere then;
    /// nulls read as `default` too).
    pub fn bool_or(&self, column: &str, default: bool) -> Result<Vec<bool>, ResultsError> {
        if !self.has(column) {
            return Ok(vec![default; self.frame.height()]);
        }
        Ok(self.bool(column)?.iter().map(|v| v.unwrap_or(default)).collect())
    }

    fn read(&self) -> impl Fn(polars_core::error::PolarsError) -> ResultsError + '_ {
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
