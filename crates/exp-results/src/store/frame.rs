//! Batches in the writer: checking them against their schema and turning
//! them into polars `DataFrame`s.

use std::collections::HashSet;

use polars_core::prelude as pl;
use polars_core::prelude::NamedFrom;

use crate::table::{Batch, ColumnData, DType, Schema};
use crate::ResultsError;

/// The first column name used twice, if any: names must be unique (polars
/// and every Parquet reader require it).
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

pub(crate) fn polars_dtype(dtype: DType) -> pl::DataType {
    match dtype {
        DType::U64 => pl::DataType::UInt64,
        DType::Ns | DType::I64 => pl::DataType::Int64,
        DType::F64 => pl::DataType::Float64,
        DType::Bool => pl::DataType::Boolean,
        DType::Str => pl::DataType::String,
    }
}

pub(crate) fn polars_schema(schema: &Schema) -> pl::Schema {
    schema
        .columns
        .iter()
        .map(|c| pl::Field::new(c.name.as_str().into(), polars_dtype(c.dtype)))
        .collect()
}

/// One row group: every column becomes a single-chunk series, which the
/// batched Parquet writer turns into exactly one row group.
pub(crate) fn to_frame(schema: &Schema, batch: Batch) -> pl::PolarsResult<pl::DataFrame> {
    let height = batch.rows();
    let columns = schema
        .columns
        .iter()
        .zip(batch.columns)
        .map(|(spec, data)| {
            let name = spec.name.as_str().into();
            let series = match data {
                ColumnData::U64(v) if spec.dtype == DType::Ns => {
                    let signed: Vec<Option<i64>> =
                        v.into_iter().map(|x| x.and_then(|x| i64::try_from(x).ok())).collect();
                    pl::Series::new(name, signed)
                }
                ColumnData::U64(v) => pl::Series::new(name, v),
                ColumnData::I64(v) => pl::Series::new(name, v),
                ColumnData::F64(v) => pl::Series::new(name, v),
                ColumnData::Bool(v) => pl::Series::new(name, v),
                ColumnData::Str(v) => pl::Series::new(name, v),
            };
            pl::Column::from(series)
        })
        .collect();
    pl::DataFrame::new(height, columns)
}
