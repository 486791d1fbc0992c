//! Typed reading of the columns of a decoded part file, shared by the
//! reports (MQTT reads slices of row groups, traffic whole files) and the
//! claims (exp-claims).

use std::borrow::Cow;
use std::path::Path;

use exp_parquet::{Col, Frame, Kind, StrCol, Strings, Values};

use crate::ResultsError;

/// Rows of a part file (a slice of it or all of it) with typed access to
/// their columns; errors name the file and the column.
pub struct Columns<'a> {
    frame: Frame,
    path: &'a Path,
}

impl<'a> Columns<'a> {
    pub fn new(frame: Frame, path: &'a Path) -> Self {
        Columns { frame, path }
    }

    pub fn height(&self) -> usize {
        self.frame.height()
    }

    /// The rows, for reading the next chunk into the same memory.
    pub fn into_frame(self) -> Frame {
        self.frame
    }

    pub fn has(&self, column: &str) -> bool {
        self.frame.column(column).is_some()
    }

    fn column(&self, column: &str) -> Result<&Values, ResultsError> {
        self.frame.column(column).ok_or_else(|| ResultsError::MissingColumn {
            path: self.path.to_path_buf(),
            column: column.to_string(),
        })
    }

    /// An unsigned column; other integer types are converted (negative values become null).
    pub fn u64(&self, column: &str) -> Result<Col<'_, u64>, ResultsError> {
        let values = self.column(column)?;
        values
            .to_u64s()
            .ok_or_else(|| self.wrong_type(column, "integers", values.kind()))
    }

    /// An integer column the file may lack (all null then).
    pub fn u64_or_null(&self, column: &str) -> Result<Col<'_, u64>, ResultsError> {
        if self.has(column) {
            self.u64(column)
        } else {
            Ok(Col(Cow::Owned(vec![None; self.frame.height()])))
        }
    }

    /// A numeric column as floats.
    pub fn f64(&self, column: &str) -> Result<Col<'_, f64>, ResultsError> {
        let values = self.column(column)?;
        values
            .to_f64s()
            .ok_or_else(|| self.wrong_type(column, "numbers", values.kind()))
    }

    pub fn str(&self, column: &str) -> Result<StrCol<'_>, ResultsError> {
        let values = self.column(column)?;
        values
            .str()
            .ok_or_else(|| self.wrong_type(column, "strings", values.kind()))
    }

    /// A string column the file may lack (all null then).
    pub fn str_or_null(&self, column: &str) -> Result<StrCol<'_>, ResultsError> {
        if self.has(column) {
            self.str(column)
        } else {
            Ok(StrCol(Cow::Owned(Strings::nulls(self.frame.height()))))
        }
    }

    pub fn bool(&self, column: &str) -> Result<Col<'_, bool>, ResultsError> {
        let values = self.column(column)?;
        values
            .bool()
            .ok_or_else(|| self.wrong_type(column, "booleans", values.kind()))
    }

    /// A boolean column the file may lack (`default` everywhere then;
    /// nulls read as `default` too).
    pub fn bool_or(&self, column: &str, default: bool) -> Result<Vec<bool>, ResultsError> {
        if !self.has(column) {
            return Ok(vec![default; self.frame.height()]);
        }
        Ok(self.bool(column)?.iter().map(|v| v.unwrap_or(default)).collect())
    }

    fn wrong_type(&self, column: &str, expected: &'static str, found: Kind) -> ResultsError {
        ResultsError::ColumnType {
            path: self.path.to_path_buf(),
            column: column.to_string(),
            expected,
            found: found.to_string(),
        }
    }
}
