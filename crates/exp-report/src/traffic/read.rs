//! Reading the traffic tables' part files. Traffic tables are small (one
//! row per connection or exchange, thousands to a few hundred thousand per
//! trial), so each file is read whole, with only the columns needed.

use std::path::Path;

use exp_results::{part_chunks, Columns, ResultsError};

/// The requested columns of one file, as vectors (rows are indexed across
/// several columns at once).
pub(crate) struct Frame<'a> {
    columns: Columns<'a>,
}

impl<'a> Frame<'a> {
    pub fn read(path: &'a Path, columns: &[&str]) -> Result<Frame<'a>, ResultsError> {
        let fail = |source| ResultsError::Parquet {
            action: "read",
            path: path.to_path_buf(),
            source,
        };
        let reader = part_chunks::open(path)?;
        if let Some(missing) = columns.iter().find(|c| reader.field(c).is_none()) {
            return Err(ResultsError::MissingColumn {
                path: path.to_path_buf(),
                column: missing.to_string(),
            });
        }
        let frame = reader.read_columns(columns).map_err(fail)?;
        Ok(Frame {
            columns: Columns::new(frame, path),
        })
    }

    pub fn height(&self) -> usize {
        self.columns.height()
    }

    pub fn u64(&self, column: &str) -> Result<Vec<Option<u64>>, ResultsError> {
        Ok(self.columns.u64(column)?.iter().collect())
    }

    pub fn str(&self, column: &str) -> Result<Vec<Option<String>>, ResultsError> {
        Ok(self
            .columns
            .str(column)?
            .iter()
            .map(|s| s.map(str::to_string))
            .collect())
    }

    pub fn bool(&self, column: &str) -> Result<Vec<Option<bool>>, ResultsError> {
        Ok(self.columns.bool(column)?.iter().collect())
    }
}
