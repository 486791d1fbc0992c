//! Table schemas and row batches: what workload executors hand to the store.
//!
//! Executors never see Parquet; they fill column vectors and the store turns
//! them into Parquet row groups. Every column is nullable so a row can leave
//! a value out (a planned end that does not exist, a metric not measured).

use serde::{Deserialize, Serialize};

/// Column types. Names carry units (`t_ns`, `rss_bytes`, `cpu_pct`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DType {
    U64,
    /// A time or a duration in ns (`*_ns` columns): filled with `u64`
    /// cells like `U64`, stored as Int64, so that a difference of two
    /// columns computes in polars and DuckDB (UInt64 would wrap or raise).
    /// A value above `i64::MAX` (after the year 2262: only a saturated
    /// one) is stored as null.
    Ns,
    I64,
    F64,
    Bool,
    Str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnSpec {
    pub name: String,
    pub dtype: DType,
}

/// The name and columns of one table. The trial is not a column: it is the
/// hive partition (`tables/<name>/trial=<n>/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    pub name: String,
    pub columns: Vec<ColumnSpec>,
}

impl Schema {
    pub fn new(name: impl Into<String>) -> Self {
        Schema {
            name: name.into(),
            columns: Vec::new(),
        }
    }

    pub fn column(mut self, name: impl Into<String>, dtype: DType) -> Self {
        self.columns.push(ColumnSpec {
            name: name.into(),
            dtype,
        });
        self
    }

    /// An empty batch with one column per schema column.
    pub fn batch(&self) -> Batch {
        Batch {
            columns: self.columns.iter().map(|c| ColumnData::empty(c.dtype)).collect(),
        }
    }

    /// A row given by column name, in any order, as the cells of
    /// [`Batch::push_row`] in schema order. Every column must be named
    /// exactly once, with a cell of its type or [`Cell::Null`]; a missing,
    /// unknown, repeated or mistyped column is a [`RowError`].
    ///
    /// ```
    /// # use exp_results::{Cell, DType, Schema};
    /// let schema = Schema::new("t").column("t_ns", DType::Ns).column("name", DType::Str);
    /// let row = schema.row([("name", "a".into()), ("t_ns", 5u64.into())]).unwrap();
    /// assert_eq!(row, vec![Cell::U64(5), Cell::Str("a".into())]);
    /// ```
    pub fn row<'n>(&self, cells: impl IntoIterator<Item = (&'n str, Cell)>) -> Result<Vec<Cell>, RowError> {
        let mut row: Vec<Option<Cell>> = vec![None; self.columns.len()];
        for (name, cell) in cells {
            let found = self.columns.iter().zip(row.iter_mut()).find(|(c, _)| c.name == name);
            let Some((column, slot)) = found else {
                return Err(RowError::Unknown {
                    table: self.name.clone(),
                    column: name.to_string(),
                });
            };
            if !cell.fits(column.dtype) {
                return Err(RowError::ColumnType {
                    table: self.name.clone(),
                    column: column.name.clone(),
                    expected: column.dtype,
                });
            }
            if slot.replace(cell).is_some() {
                return Err(RowError::Repeated {
                    table: self.name.clone(),
                    column: column.name.clone(),
                });
            }
        }
        let missing = |column: &ColumnSpec| RowError::Missing {
            table: self.name.clone(),
            column: column.name.clone(),
        };
        row.into_iter()
            .zip(&self.columns)
            .map(|(cell, column)| cell.ok_or_else(|| missing(column)))
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    U64(Vec<Option<u64>>),
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Str(Vec<Option<String>>),
}

impl ColumnData {
    pub fn empty(dtype: DType) -> Self {
        match dtype {
            DType::U64 | DType::Ns => ColumnData::U64(Vec::new()),
            DType::I64 => ColumnData::I64(Vec::new()),
            DType::F64 => ColumnData::F64(Vec::new()),
            DType::Bool => ColumnData::Bool(Vec::new()),
            DType::Str => ColumnData::Str(Vec::new()),
        }
    }

    pub fn dtype(&self) -> DType {
        match self {
            ColumnData::U64(_) => DType::U64,
            ColumnData::I64(_) => DType::I64,
            ColumnData::F64(_) => DType::F64,
            ColumnData::Bool(_) => DType::Bool,
            ColumnData::Str(_) => DType::Str,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            ColumnData::U64(v) => v.len(),
            ColumnData::I64(v) => v.len(),
            ColumnData::F64(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
            ColumnData::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn push(&mut self, cell: Cell) -> Result<(), DType> {
        match (self, cell) {
            (ColumnData::U64(v), Cell::U64(x)) => v.push(Some(x)),
            (ColumnData::I64(v), Cell::I64(x)) => v.push(Some(x)),
            (ColumnData::F64(v), Cell::F64(x)) => v.push(Some(x)),
            (ColumnData::Bool(v), Cell::Bool(x)) => v.push(Some(x)),
            (ColumnData::Str(v), Cell::Str(x)) => v.push(Some(x)),
            (column, Cell::Null) => column.push_null(),
            (column, _) => return Err(column.dtype()),
        }
        Ok(())
    }

    fn push_null(&mut self) {
        match self {
            ColumnData::U64(v) => v.push(None),
            ColumnData::I64(v) => v.push(None),
            ColumnData::F64(v) => v.push(None),
            ColumnData::Bool(v) => v.push(None),
            ColumnData::Str(v) => v.push(None),
        }
    }
}

/// One value of a row, for [`Batch::push_row`].
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    Str(String),
    Null,
}

impl Cell {
    /// Whether a column of `dtype` can hold this cell (any can hold a null).
    fn fits(&self, dtype: DType) -> bool {
        matches!(
            (self, dtype),
            (Cell::Null, _)
                | (Cell::U64(_), DType::U64 | DType::Ns)
                | (Cell::I64(_), DType::I64)
                | (Cell::F64(_), DType::F64)
                | (Cell::Bool(_), DType::Bool)
                | (Cell::Str(_), DType::Str)
        )
    }
}

impl DType {
    /// The type of the column data that fills a column of this type.
    pub fn filled_as(self) -> DType {
        match self {
            DType::Ns => DType::U64,
            other => other,
        }
    }
}

impl From<u64> for Cell {
    fn from(v: u64) -> Self {
        Cell::U64(v)
    }
}
impl From<i64> for Cell {
    fn from(v: i64) -> Self {
        Cell::I64(v)
    }
}
impl From<f64> for Cell {
    fn from(v: f64) -> Self {
        Cell::F64(v)
    }
}
impl From<bool> for Cell {
    fn from(v: bool) -> Self {
        Cell::Bool(v)
    }
}
impl From<String> for Cell {
    fn from(v: String) -> Self {
        Cell::Str(v)
    }
}
impl From<&str> for Cell {
    fn from(v: &str) -> Self {
        Cell::Str(v.to_string())
    }
}
impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Self {
        v.map_or(Cell::Null, Into::into)
    }
}

/// Rows of one table, stored by column. Hot paths fill `columns` directly;
/// everything else uses [`Batch::push_row`].
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub columns: Vec<ColumnData>,
}

/// A row that does not fit its schema: a programming error in an executor,
/// reported rather than panicking.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    #[error("row has {got} values, the table has {expected} columns")]
    Arity { expected: usize, got: usize },
    #[error("column {index} holds {expected:?} values")]
    Type { index: usize, expected: DType },
    /// A row given by name ([`Schema::row`]) leaves a column out.
    #[error("table `{table}`: no value for column `{column}`")]
    Missing { table: String, column: String },
    /// A row given by name names a column the table does not have.
    #[error("table `{table}` has no column `{column}`")]
    Unknown { table: String, column: String },
    /// A row given by name gives a column twice.
    #[error("table `{table}`: column `{column}` given twice")]
    Repeated { table: String, column: String },
    /// A row given by name gives a column a cell of another type.
    #[error("table `{table}`: column `{column}` holds {expected:?} values")]
    ColumnType {
        table: String,
        column: String,
        expected: DType,
    },
}

impl Batch {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, ColumnData::len)
    }

    pub fn is_empty(&self) -> bool {
        self.rows() == 0
    }

    /// Appends one row; on error the batch is left unchanged.
    pub fn push_row(&mut self, row: Vec<Cell>) -> Result<(), RowError> {
        if row.len() != self.columns.len() {
            return Err(RowError::Arity {
                expected: self.columns.len(),
                got: row.len(),
            });
        }
        for (index, (column, cell)) in self.columns.iter().zip(&row).enumerate() {
            if !cell.fits(column.dtype()) {
                return Err(RowError::Type {
                    index,
                    expected: column.dtype(),
                });
            }
        }
        for (column, cell) in self.columns.iter_mut().zip(row) {
            // Checked above, so this cannot fail.
            let _ = column.push(cell);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_checked_against_the_schema() {
        let schema = Schema::new("t").column("t_ns", DType::Ns).column("name", DType::Str);
        let mut batch = schema.batch();
        batch.push_row(vec![5u64.into(), "a".into()]).unwrap();
        batch.push_row(vec![Cell::Null, Cell::Null]).unwrap();
        assert_eq!(batch.rows(), 2);
        assert_eq!(
            batch.push_row(vec!["x".into(), "a".into()]),
            Err(RowError::Type {
                index: 0,
                expected: DType::U64
            })
        );
        assert_eq!(
            batch.push_row(vec![1u64.into()]),
            Err(RowError::Arity { expected: 2, got: 1 })
        );
        assert_eq!(batch.rows(), 2, "a rejected row leaves the batch unchanged");
    }

    #[test]
    fn rows_by_name_follow_the_schema_order() {
        let schema = Schema::new("t").column("t_ns", DType::Ns).column("name", DType::Str);
        let row = schema.row([("name", "a".into()), ("t_ns", 5u64.into())]).unwrap();
        assert_eq!(row, vec![Cell::U64(5), Cell::Str("a".into())]);
        assert_eq!(
            schema.row([("name", Cell::Null), ("t_ns", Cell::Null)]),
            Ok(vec![Cell::Null, Cell::Null])
        );
        let (table, column) = ("t".to_string(), |name: &str| name.to_string());
        assert_eq!(
            schema.row([("t_ns", 5u64.into())]),
            Err(RowError::Missing {
                table: table.clone(),
                column: column("name")
            })
        );
        assert_eq!(
            schema.row([("t_ns", 5u64.into()), ("name", "a".into()), ("size", 1u64.into())]),
            Err(RowError::Unknown {
                table: table.clone(),
                column: column("size")
            })
        );
        assert_eq!(
            schema.row([("t_ns", 5u64.into()), ("t_ns", 6u64.into()), ("name", "a".into())]),
            Err(RowError::Repeated {
                table: table.clone(),
                column: column("t_ns")
            })
        );
        assert_eq!(
            schema.row([("t_ns", "5".into()), ("name", "a".into())]),
            Err(RowError::ColumnType {
                table,
                column: column("t_ns"),
                expected: DType::Ns
            })
        );
        let error = schema.row([("name", 1.5.into()), ("t_ns", 5u64.into())]).unwrap_err();
        assert_eq!(error.to_string(), "table `t`: column `name` holds Str values");
    }
}
