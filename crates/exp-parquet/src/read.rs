//! Reading: the footer first, then projected columns of a range of row groups.

use std::fs::File;
use std::ops::Range;

use parquet::basic::{ConvertedType, LogicalType, Type as Physical};
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::ColumnDescriptor;

use crate::pages::{self, StringChunk};
use crate::{Column, Field, Frame, Kind, ParquetError, Values};

/// An open Parquet file whose footer has been read.
pub struct Reader {
    inner: SerializedFileReader<File>,
    fields: Vec<Field>,
}

impl Reader {
    /// Reads the footer of `file`; fails if it is not Parquet or has a
    /// column of no [`Kind`].
    pub fn new(file: File) -> Result<Reader, ParquetError> {
        let inner = SerializedFileReader::new(file)?;
        let schema = inner.metadata().file_metadata().schema_descr();
        if let Some(nested) = schema.root_schema().get_fields().iter().find(|f| !f.is_primitive()) {
            return Err(ParquetError::Unsupported {
                column: nested.name().into(),
                found: "a nested column".into(),
            });
        }
        let fields = schema.columns().iter().map(|c| field(c)).collect::<Result<_, _>>()?;
        Ok(Reader { inner, fields })
    }

    /// The file's columns, in order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    pub fn num_rows(&self) -> u64 {
        u64::try_from(self.inner.metadata().file_metadata().num_rows()).unwrap_or(0)
    }

    /// The rows of each row group, in order.
    pub fn row_group_rows(&self) -> Vec<usize> {
        (self.inner.metadata().row_groups().iter())
            .map(|g| usize::try_from(g.num_rows()).unwrap_or(0))
            .collect()
    }

    /// The compression of every column chunk, as the footer names it
    /// (`ZSTD(ZstdLevel(1))`), each name once.
    pub fn codecs(&self) -> Vec<String> {
        let mut codecs: Vec<String> = (self.inner.metadata().row_groups().iter())
            .flat_map(|g| g.columns().iter().map(|c| c.compression().to_string()))
            .collect();
        codecs.sort();
        codecs.dedup();
        codecs
    }

    /// Every row of every column.
    pub fn read_all(&self) -> Result<Frame, ParquetError> {
        self.read(None, 0..self.inner.num_row_groups())
    }

    /// Every row of the columns `columns`.
    pub fn read_columns(&self, columns: &[&str]) -> Result<Frame, ParquetError> {
        self.read(Some(columns), 0..self.inner.num_row_groups())
    }

    /// The rows of the row groups `groups` of the columns `columns` (in
    /// that order; all of them, in the file's order, for `None`).
    pub fn read(&self, columns: Option<&[&str]>, groups: Range<usize>) -> Result<Frame, ParquetError> {
        let mut frame = Frame::default();
        self.read_into(columns, groups, &mut frame)?;
        Ok(frame)
    }

    /// As [`Reader::read`], into `frame`, whose columns' memory is reused
    /// when they are the ones asked for: a pass over a large file in chunks
    /// then allocates (and faults in) its buffers once, not per chunk.
    pub fn read_into(
        &self,
        columns: Option<&[&str]>,
        groups: Range<usize>,
        frame: &mut Frame,
    ) -> Result<(), ParquetError> {
        let indices: Vec<usize> = match columns {
            None => (0..self.fields.len()).collect(),
            Some(names) => names
                .iter()
                .map(|name| {
                    (self.fields.iter().position(|f| f.name == *name))
                        .ok_or_else(|| ParquetError::MissingColumn((*name).into()))
                })
                .collect::<Result<_, _>>()?,
        };
        let fields: Vec<Field> = indices.iter().map(|&i| self.fields[i].clone()).collect();
        let mut columns = std::mem::take(frame).into_columns();
        if columns.iter().map(Column::field).ne(fields.iter().cloned()) {
            columns = fields
                .iter()
                .map(|f| Column::new(f.name.clone(), Values::empty(f.kind)))
                .collect();
        }
        columns.iter_mut().for_each(|c| c.values.clear());
        let mut height = 0;
        for g in groups {
            let group = self.inner.get_row_group(g)?;
            let rows = usize::try_from(group.metadata().num_rows()).unwrap_or(0);
            for (column, &i) in columns.iter_mut().zip(&indices) {
                let max_level = self
                    .inner
                    .metadata()
                    .file_metadata()
                    .schema_descr()
                    .column(i)
                    .max_def_level();
                let encodings = group.metadata().column(i).encodings();
                if let (Values::Str(out), true) = (&mut column.values, pages::supports(encodings)) {
                    let chunk = StringChunk {
                        name: &column.name,
                        max_level,
                        rows,
                    };
                    chunk.read(group.get_column_page_reader(i)?, out)?;
                    continue;
                }
                let chunk = Chunk {
                    rows,
                    max_level,
                    name: &column.name,
                };
                chunk.append_to(group.get_column_reader(i)?, &mut column.values)?;
            }
            height += rows;
        }
        let read = Frame::new(columns)?;
        if read.height() != height && !read.columns().is_empty() {
            return Err(ParquetError::Ragged {
                column: read.columns()[0].name.as_str().into(),
                expected: height,
                got: read.height(),
            });
        }
        *frame = read;
        Ok(())
    }
}

/// One column of one row group, about to be decoded.
struct Chunk<'a> {
    rows: usize,
    max_level: i16,
    name: &'a str,
}

impl Chunk<'_> {
    fn append_to(&self, reader: ColumnReader, values: &mut Values) -> Result<(), ParquetError> {
        use ColumnReader as R;
        match (reader, values) {
            (R::BoolColumnReader(r), Values::Bool(out)) => self.rows_of(r, out, |x| x),
            (R::Int32ColumnReader(r), Values::U32(out)) => self.rows_of(r, out, |x| x as u32),
            (R::Int32ColumnReader(r), Values::I64(out)) => self.rows_of(r, out, i64::from),
            (R::Int64ColumnReader(r), Values::U64(out)) => self.rows_of(r, out, |x| x as u64),
            (R::Int64ColumnReader(r), Values::I64(out)) => self.rows_of(r, out, |x| x),
            (R::FloatColumnReader(r), Values::F64(out)) => self.rows_of(r, out, f64::from),
            (R::DoubleColumnReader(r), Values::F64(out)) => self.rows_of(r, out, |x| x),
            (R::ByteArrayColumnReader(r), Values::Str(out)) => {
                let (levels, present) = self.decode(r)?;
                self.each_row(&levels, present, |value| {
                    let text = match &value {
                        None => None,
                        Some(bytes) => Some(std::str::from_utf8(bytes.data()).map_err(|_| ParquetError::NotUtf8 {
                            column: self.name.into(),
                        })?),
                    };
                    out.push(text);
                    Ok(())
                })
            }
            (_, values) => Err(ParquetError::Unsupported {
                column: self.name.into(),
                found: format!("stored other than as {} in this row group", values.kind()).into(),
            }),
        }
    }

    /// Decodes the chunk and appends a value (or null) per row, converted by `convert`.
    fn rows_of<T: DataType, V>(
        &self,
        reader: ColumnReaderImpl<T>,
        out: &mut Vec<Option<V>>,
        convert: impl Fn(T::T) -> V,
    ) -> Result<(), ParquetError> {
        let (levels, present) = self.decode(reader)?;
        out.reserve(self.rows);
        self.each_row(&levels, present, |value| {
            out.push(value.map(&convert));
            Ok(())
        })
    }

    /// The chunk's definition levels (none for a required column) and its
    /// values that are not null.
    fn decode<T: DataType>(&self, mut reader: ColumnReaderImpl<T>) -> Result<(Vec<i16>, Vec<T::T>), ParquetError> {
        let mut levels = Vec::with_capacity(if self.max_level == 0 { 0 } else { self.rows });
        let mut present = Vec::with_capacity(self.rows);
        let mut records = 0;
        while records < self.rows {
            let (read, _, _) = reader.read_records(self.rows - records, Some(&mut levels), None, &mut present)?;
            if read == 0 {
                break;
            }
            records += read;
        }
        if records != self.rows {
            return Err(self.ragged(records));
        }
        Ok((levels, present))
    }

    /// Calls `each` with every row's value, `None` where the row is null.
    fn each_row<T>(
        &self,
        levels: &[i16],
        present: Vec<T>,
        mut each: impl FnMut(Option<T>) -> Result<(), ParquetError>,
    ) -> Result<(), ParquetError> {
        let found = present.len();
        let mut present = present.into_iter();
        if self.max_level == 0 {
            if found != self.rows {
                return Err(self.ragged(found));
            }
            return present.try_for_each(|v| each(Some(v)));
        }
        for &level in levels {
            if level == self.max_level {
                let value = present.next().ok_or_else(|| self.ragged(found))?;
                each(Some(value))?;
            } else {
                each(None)?;
            }
        }
        Ok(())
    }

    fn ragged(&self, got: usize) -> ParquetError {
        ParquetError::Ragged {
            column: self.name.into(),
            expected: self.rows,
            got,
        }
    }
}

/// The field of a leaf column: its kind from its physical and logical types.
fn field(column: &ColumnDescriptor) -> Result<Field, ParquetError> {
    let name = column.name().to_string();
    let unsigned = matches!(
        column.logical_type_ref(),
        Some(LogicalType::Integer { is_signed: false, .. })
    ) || matches!(
        column.converted_type(),
        ConvertedType::UINT_8 | ConvertedType::UINT_16 | ConvertedType::UINT_32 | ConvertedType::UINT_64
    );
    let kind = match column.physical_type() {
        Physical::BOOLEAN => Some(Kind::Bool),
        Physical::INT32 if unsigned => Some(Kind::U32),
        Physical::INT32 => Some(Kind::I64),
        Physical::INT64 if unsigned => Some(Kind::U64),
        Physical::INT64 => Some(Kind::I64),
        Physical::FLOAT | Physical::DOUBLE => Some(Kind::F64),
        Physical::BYTE_ARRAY => match (column.logical_type_ref(), column.converted_type()) {
            (Some(LogicalType::String | LogicalType::Enum | LogicalType::Json), _) => Some(Kind::Str),
            (None, ConvertedType::UTF8 | ConvertedType::ENUM | ConvertedType::JSON | ConvertedType::NONE) => {
                Some(Kind::Str)
            }
            _ => None,
        },
        _ => None,
    };
    let found = || {
        let logical = column.logical_type_ref().map_or(String::new(), |l| format!(" ({l:?})"));
        format!("{}{logical}", column.physical_type())
    };
    kind.map(|kind| Field {
        name: name.clone(),
        kind,
    })
    .ok_or_else(|| ParquetError::Unsupported {
        column: name.into(),
        found: found().into(),
    })
}
