//! Batches in the writer: checking them against their schema and turning
//! them into frames of Parquet columns.

use std::collections::HashSet;

use exp_parquet::{Column, Field, Frame, Kind, ParquetError, Values};

use crate::table::{Batch, ColumnData, DType, Schema};
use crate::ResultsError;

/// The first column name used twice, if any: names must be unique (every
/// Parquet reader requires it).
pub(crate) fn duplicate_column(schema: &Schema) -> Option<&str> {
    let mut seen = HashSet::new();
    schema
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .find(|name| !seen.insert(*name))
}

/// The batch has the schema's columns, in order, with its types, all of one length.
pub(crate) fn check_batch(schema: &Schema, batch: &Batch) -> Result<(), ResultsError> {
    if batch.columns.len() != schema.columns.len() {
        return Err(ResultsError::BatchArity {
            table: schema.name.clone(),
            expected: schema.columns.len(),
            got: batch.columns.len(),
        });
    }
    let rows = batch.rows();
    for (spec, data) in schema.columns.iter().zip(&batch.columns) {
        if data.dtype() != spec.dtype.filled_as() {
            return Err(ResultsError::BatchType {
                table: schema.name.clone(),
                column: spec.name.clone(),
                expected: spec.dtype.filled_as(),
                got: data.dtype(),
            });
        }
        if data.len() != rows {
            return Err(ResultsError::RaggedBatch {
                table: schema.name.clone(),
                column: spec.name.clone(),
                expected: rows,
                got: data.len(),
            });
        }
    }
    Ok(())
}

/// How a column of `dtype` is stored.
pub(crate) fn stored_kind(dtype: DType) -> Kind {
    match dtype {
        DType::U64 => Kind::U64,
        DType::Ns | DType::I64 => Kind::I64,
        DType::F64 => Kind::F64,
        DType::Bool => Kind::Bool,
        DType::Str => Kind::Str,
    }
}

/// The stored columns of `schema`.
pub(crate) fn fields(schema: &Schema) -> Vec<Field> {
    (schema.columns.iter())
        .map(|c| Field::new(c.name.clone(), stored_kind(c.dtype)))
        .collect()
}

/// The rows of `batch` as stored columns (a checked batch: see [`check_batch`]).
pub(crate) fn to_frame(schema: &Schema, batch: Batch) -> Result<Frame, ParquetError> {
    let columns = schema
        .columns
        .iter()
        .zip(batch.columns)
        .map(|(spec, data)| {
            let values = match data {
                ColumnData::U64(v) if spec.dtype == DType::Ns => {
                    Values::I64(v.into_iter().map(|x| x.and_then(|x| i64::try_from(x).ok())).collect())
                }
                ColumnData::U64(v) => Values::U64(v),
                ColumnData::I64(v) => Values::I64(v),
                ColumnData::F64(v) => Values::F64(v),
                ColumnData::Bool(v) => Values::Bool(v),
                ColumnData::Str(v) => Values::Str(v.into_iter().collect()),
            };
            Column::new(spec.name.clone(), values)
        })
        .collect();
    Frame::new(columns)
}
