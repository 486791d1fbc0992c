//! Writing: one row group per frame.

use std::io::Write;
use std::sync::Arc;

use bytes::Bytes;

use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical, ZstdLevel};
use parquet::column::writer::ColumnWriterImpl;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::frame::describe;
use crate::{Field, Frame, Kind, ParquetError, Strings, Values};

/// A Parquet file being written; [`Writer::finish`] writes its footer.
pub struct Writer<W: Write + Send> {
    inner: SerializedFileWriter<W>,
    fields: Vec<Field>,
}

impl<W: Write + Send> Writer<W> {
    /// Starts a file of the columns `fields` on `out` (which the writer
    /// buffers itself).
    pub fn new(out: W, fields: &[Field]) -> Result<Writer<W>, ParquetError> {
        let columns = fields.iter().map(|f| Arc::new(column_type(f))).collect();
        let schema = Type::group_type_builder("schema").with_fields(columns).build()?;
        let properties = WriterProperties::builder()
            // zstd, read by every current reader, at level 3 (zstd's own
            // default, and what polars wrote): 17 % smaller than level 1 on
            // `mqtt_messages` for no more CPU, since fewer bytes reach the
            // kernel (decision 0023).
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?))
            // Dictionaries pay for repeated strings (device names, labels),
            // not for measurements, which are rarely repeated.
            .set_dictionary_enabled(false)
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_created_by(format!("expc {}", env!("CARGO_PKG_VERSION")))
            .build();
        let mut properties = properties.into_builder();
        for f in fields.iter().filter(|f| f.kind == Kind::Str) {
            properties = properties.set_column_dictionary_enabled(f.name.as_str().into(), true);
        }
        let inner = SerializedFileWriter::new(out, Arc::new(schema), Arc::new(properties.build()))?;
        Ok(Writer {
            inner,
            fields: fields.to_vec(),
        })
    }

    /// Writes `frame` as one row group; its columns must be the file's.
    pub fn write(&mut self, frame: &Frame) -> Result<(), ParquetError> {
        if frame.fields() != self.fields {
            return Err(ParquetError::Mismatch {
                expected: describe(&self.fields).into(),
                got: describe(&frame.fields()).into(),
            });
        }
        let mut group = self.inner.next_row_group()?;
        for column in frame.columns() {
            let Some(mut writer) = group.next_column()? else {
                unreachable!("the schema has a column per field, and the fields were compared");
            };
            match &column.values {
                Values::Bool(v) => put::<BoolType, _>(writer.typed(), v, |&x| x)?,
                Values::U32(v) => put::<Int32Type, _>(writer.typed(), v, |&x| x as i32)?,
                Values::U64(v) => put::<Int64Type, _>(writer.typed(), v, |&x| x as i64)?,
                Values::I64(v) => put::<Int64Type, _>(writer.typed(), v, |&x| x)?,
                Values::F64(v) => put::<DoubleType, _>(writer.typed(), v, |&x| x)?,
                Values::Str(v) => put_strings(writer.typed(), v)?,
            }
            writer.close()?;
        }
        group.close()?;
        Ok(())
    }

    /// Writes the footer and gives back the output, flushed.
    pub fn finish(self) -> Result<W, ParquetError> {
        Ok(self.inner.into_inner()?)
    }
}

/// Writes the non-null values of `values`, converted by `convert`, with a
/// definition level per row (1 present, 0 null).
fn put<T: DataType, V>(
    writer: &mut ColumnWriterImpl<'_, T>,
    values: &[Option<V>],
    convert: impl Fn(&V) -> T::T,
) -> Result<(), ParquetError> {
    let levels: Vec<i16> = values.iter().map(|v| i16::from(v.is_some())).collect();
    let present: Vec<T::T> = values.iter().flatten().map(convert).collect();
    writer.write_batch(&present, Some(&levels), None)?;
    Ok(())
}

/// Writes strings as slices of one shared copy of their bytes (no
/// allocation per value).
fn put_strings(writer: &mut ColumnWriterImpl<'_, ByteArrayType>, values: &Strings) -> Result<(), ParquetError> {
    let (text, ends, valid) = values.parts();
    let bytes = Bytes::copy_from_slice(text.as_bytes());
    let levels: Vec<i16> = valid.iter().map(|&v| i16::from(v)).collect();
    let mut start = 0;
    let mut present = Vec::with_capacity(values.len());
    for (&end, &valid) in ends.iter().zip(valid) {
        if valid {
            present.push(ByteArray::from(bytes.slice(start..end)));
        }
        start = end;
    }
    writer.write_batch(&present, Some(&levels), None)?;
    Ok(())
}

/// The Parquet type of a column: the physical type and, where it says
/// more, the logical one (unsigned integers, UTF-8 strings), so other
/// readers see the column as expc does.
fn column_type(field: &Field) -> Type {
    let (physical, logical) = match field.kind {
        Kind::Bool => (Physical::BOOLEAN, None),
        Kind::U32 => (Physical::INT32, Some(unsigned(32))),
        Kind::U64 => (Physical::INT64, Some(unsigned(64))),
        Kind::I64 => (Physical::INT64, None),
        Kind::F64 => (Physical::DOUBLE, None),
        Kind::Str => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
    };
    Type::primitive_type_builder(&field.name, physical)
        .with_repetition(Repetition::OPTIONAL)
        .with_logical_type(logical)
        .build()
        .unwrap_or_else(|e| unreachable!("a flat primitive column is always valid: {e}"))
}

fn unsigned(bits: i8) -> LogicalType {
    LogicalType::Integer {
        bit_width: bits,
        is_signed: false,
    }
}
