//! Parquet files of flat, nullable, typed columns: the one writer and
//! reader of every table expc stores (the result store's tables, XML sets).
//!
//! A table here is a [`Frame`]: named columns of one length, each of one
//! [`Kind`] (booleans, unsigned 32- and 64-bit integers, signed 64-bit
//! integers, 64-bit floats, UTF-8 strings), every value possibly null. That
//! is all expc writes, so it is all this crate needs: it sits on the
//! `parquet` crate's column API, without Arrow and without a query engine
//! (the build cost of both was most of expc's build; decision 0023).
//!
//! Files are written one row group per [`Writer::write`], zstd compressed,
//! every column optional (as pandas, polars and pyarrow write them), and
//! are read back by row group and projected column ([`Reader::read`]).
//! Files written by others are read as long as their columns are flat and
//! of a type with an obvious [`Kind`] (narrower integers and floats widen).

mod frame;
mod pages;
mod read;
mod strings;
mod view;
mod write;

pub use frame::{Column, Field, Frame, Kind, Values};
pub use read::Reader;
pub use strings::Strings;
pub use view::{Col, StrCol};
pub use write::Writer;

/// What can go wrong writing or reading a Parquet file. Small (strings
/// boxed), because it travels inside the errors of the crates that use it.
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    /// The file is not Parquet, is damaged or truncated, or could not be
    /// written (the I/O error is inside).
    #[error(transparent)]
    Format(Box<parquet::errors::ParquetError>),
    #[error("column `{column}` is {found}, which expc does not read")]
    Unsupported { column: Box<str>, found: Box<str> },
    #[error("column `{column}` holds a value that is not UTF-8")]
    NotUtf8 { column: Box<str> },
    /// A page that does not hold what its header says.
    #[error("column `{column}` is damaged: {what}")]
    Damaged { column: Box<str>, what: &'static str },
    #[error("no column `{0}`")]
    MissingColumn(Box<str>),
    #[error("column `{column}` has {got} values where the table has {expected} rows")]
    Ragged {
        column: Box<str>,
        expected: usize,
        got: usize,
    },
    #[error("the columns do not match the file's: expected {expected}, got {got}")]
    Mismatch { expected: Box<str>, got: Box<str> },
}

impl From<parquet::errors::ParquetError> for ParquetError {
    fn from(e: parquet::errors::ParquetError) -> ParquetError {
        // Boxed: the library's error is large, and this one travels inside others.
        ParquetError::Format(Box::new(e))
    }
}
