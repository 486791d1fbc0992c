//! Columns in memory: what a writer takes and a reader gives.

use std::fmt;
use std::ops::Range;

use crate::{ParquetError, Strings};

/// The type of a column's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    U32,
    U64,
    I64,
    F64,
    Str,
}

impl Kind {
    pub fn is_integer(self) -> bool {
        matches!(self, Kind::U32 | Kind::U64 | Kind::I64)
    }

    pub fn is_numeric(self) -> bool {
        self.is_integer() || self == Kind::F64
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Bool => "bool",
            Kind::U32 => "u32",
            Kind::U64 => "u64",
            Kind::I64 => "i64",
            Kind::F64 => "f64",
            Kind::Str => "str",
        })
    }
}

/// A column's name and kind: one entry of a file's schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub kind: Kind,
}

impl Field {
    pub fn new(name: impl Into<String>, kind: Kind) -> Field {
        Field {
            name: name.into(),
            kind,
        }
    }
}

/// The values of one column, `None` for null.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Bool(Vec<Option<bool>>),
    U32(Vec<Option<u32>>),
    U64(Vec<Option<u64>>),
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Str(Strings),
}

/// Calls `$body` with `$v` bound to the vector inside `$values`, whatever its kind.
macro_rules! each_kind {
    ($values:expr, $v:ident => $body:expr) => {
        match $values {
            Values::Bool($v) => $body,
            Values::U32($v) => $body,
            Values::U64($v) => $body,
            Values::I64($v) => $body,
            Values::F64($v) => $body,
            Values::Str($v) => $body,
        }
    };
}

impl Values {
    pub fn empty(kind: Kind) -> Values {
        match kind {
            Kind::Bool => Values::Bool(Vec::new()),
            Kind::U32 => Values::U32(Vec::new()),
            Kind::U64 => Values::U64(Vec::new()),
            Kind::I64 => Values::I64(Vec::new()),
            Kind::F64 => Values::F64(Vec::new()),
            Kind::Str => Values::Str(Strings::default()),
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Values::Bool(_) => Kind::Bool,
            Values::U32(_) => Kind::U32,
            Values::U64(_) => Kind::U64,
            Values::I64(_) => Kind::I64,
            Values::F64(_) => Kind::F64,
            Values::Str(_) => Kind::Str,
        }
    }

    pub fn len(&self) -> usize {
        each_kind!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn null_count(&self) -> usize {
        match self {
            Values::Str(v) => v.null_count(),
            Values::Bool(v) => v.iter().filter(|x| x.is_none()).count(),
            Values::U32(v) => v.iter().filter(|x| x.is_none()).count(),
            Values::U64(v) => v.iter().filter(|x| x.is_none()).count(),
            Values::I64(v) => v.iter().filter(|x| x.is_none()).count(),
            Values::F64(v) => v.iter().filter(|x| x.is_none()).count(),
        }
    }

    /// Removes every value, keeping the memory.
    pub fn clear(&mut self) {
        match self {
            Values::Str(v) => v.clear(),
            Values::Bool(v) => v.clear(),
            Values::U32(v) => v.clear(),
            Values::U64(v) => v.clear(),
            Values::I64(v) => v.clear(),
            Values::F64(v) => v.clear(),
        }
    }

    /// The values in `rows`, copied.
    pub fn slice(&self, rows: Range<usize>) -> Values {
        match self {
            Values::Bool(v) => Values::Bool(v[rows].to_vec()),
            Values::U32(v) => Values::U32(v[rows].to_vec()),
            Values::U64(v) => Values::U64(v[rows].to_vec()),
            Values::I64(v) => Values::I64(v[rows].to_vec()),
            Values::F64(v) => Values::F64(v[rows].to_vec()),
            Values::Str(v) => Values::Str(v.slice(rows)),
        }
    }

    /// Moves `other`'s values to the end of these; `other` must be of the same kind.
    fn append(&mut self, other: Values) -> Result<(), Values> {
        match (self, other) {
            (Values::Bool(a), Values::Bool(b)) => a.extend(b),
            (Values::U32(a), Values::U32(b)) => a.extend(b),
            (Values::U64(a), Values::U64(b)) => a.extend(b),
            (Values::I64(a), Values::I64(b)) => a.extend(b),
            (Values::F64(a), Values::F64(b)) => a.extend(b),
            (Values::Str(a), Values::Str(b)) => a.append(b),
            (_, other) => return Err(other),
        }
        Ok(())
    }
}

/// A named column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub values: Values,
}

impl Column {
    pub fn new(name: impl Into<String>, values: impl Into<Values>) -> Column {
        Column {
            name: name.into(),
            values: values.into(),
        }
    }

    pub fn field(&self) -> Field {
        Field::new(self.name.clone(), self.values.kind())
    }
}

/// Columns of one length: the rows of a table, a file or a part of one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frame {
    height: usize,
    columns: Vec<Column>,
}

impl Frame {
    /// A frame of `columns`, which must all have as many values as the first.
    pub fn new(columns: Vec<Column>) -> Result<Frame, ParquetError> {
        let height = columns.first().map_or(0, |c| c.values.len());
        if let Some(c) = columns.iter().find(|c| c.values.len() != height) {
            return Err(ParquetError::Ragged {
                column: c.name.as_str().into(),
                expected: height,
                got: c.values.len(),
            });
        }
        Ok(Frame { height, columns })
    }

    pub fn height(&self) -> usize {
        self.height
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    pub fn into_columns(self) -> Vec<Column> {
        self.columns
    }

    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    pub fn fields(&self) -> Vec<Field> {
        self.columns.iter().map(Column::field).collect()
    }

    /// The values of the column named `name`, if there is one.
    pub fn column(&self, name: &str) -> Option<&Values> {
        self.columns.iter().find(|c| c.name == name).map(|c| &c.values)
    }

    /// The rows in `rows`, copied.
    pub fn slice(&self, rows: Range<usize>) -> Frame {
        let height = rows.len();
        let columns = self
            .columns
            .iter()
            .map(|c| Column::new(c.name.clone(), c.values.slice(rows.clone())))
            .collect();
        Frame { height, columns }
    }

    /// Moves `other`'s rows below these; it must have the same columns
    /// (names and kinds, in order).
    pub fn append(&mut self, other: Frame) -> Result<(), ParquetError> {
        let mismatch = |a: &Frame, b: &Frame| ParquetError::Mismatch {
            expected: describe(&a.fields()).into(),
            got: describe(&b.fields()).into(),
        };
        if self.fields() != other.fields() {
            return Err(mismatch(self, &other));
        }
        self.height += other.height;
        for (mine, theirs) in self.columns.iter_mut().zip(other.columns) {
            // Kinds were compared above.
            let _ = mine.values.append(theirs.values);
        }
        Ok(())
    }
}

/// `name: kind, …` for error messages.
pub(crate) fn describe(fields: &[Field]) -> String {
    let parts: Vec<String> = fields.iter().map(|f| format!("{}: {}", f.name, f.kind)).collect();
    parts.join(", ")
}

/// `Values` from a vector of values (none null) or of options.
macro_rules! values_from {
    ($($variant:ident: $t:ty),*) => {$(
        impl From<Vec<$t>> for Values {
            fn from(v: Vec<$t>) -> Values {
                Values::$variant(v.into_iter().map(Some).collect())
            }
        }
        impl From<Vec<Option<$t>>> for Values {
            fn from(v: Vec<Option<$t>>) -> Values {
                Values::$variant(v)
            }
        }
    )*};
}

values_from!(Bool: bool, U32: u32, U64: u64, I64: i64, F64: f64);

/// `Values` from strings (none null) or options of them.
macro_rules! strings_from {
    ($($t:ty),*) => {$(
        impl From<Vec<$t>> for Values {
            fn from(v: Vec<$t>) -> Values {
                Values::Str(v.iter().map(Some).collect())
            }
        }
        impl From<Vec<Option<$t>>> for Values {
            fn from(v: Vec<Option<$t>>) -> Values {
                Values::Str(v.into_iter().collect())
            }
        }
    )*};
}

strings_from!(String, &str);

impl From<Strings> for Values {
    fn from(v: Strings) -> Values {
        Values::Str(v)
    }
}
