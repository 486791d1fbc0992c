//! Part files in chunks: the few columns a pass needs from a part file, a
//! bounded number of rows at a time.
//!
//! A fleet trial can hold tens of millions of messages, so no pass loads a
//! whole file: the footer gives the row groups, and the reader decodes a
//! slice of whole row groups (up to [`CHUNK_ROWS`] rows) of the projected
//! columns only. There is no query engine (decisions 0011 and 0023):
//! everything a lazy plan would do here is a fold over chunks.

use std::fs::File;
use std::path::{Path, PathBuf};

use exp_parquet::Reader;

pub use crate::columns::Columns as Chunk;

use crate::ResultsError;

/// Rows decoded at once (whole row groups, so at least one group). 2²⁰ rows
/// of six columns are ~50 MB.
const CHUNK_ROWS: usize = 1 << 20;

/// Calls `each` with consecutive chunks of `path` holding the `required`
/// columns and those of `optional` the file has. A missing required column
/// is [`ResultsError::MissingColumn`]; every other failure (truncated file,
/// bad page) is [`ResultsError::Parquet`] or what `each` returns.
pub fn for_each_chunk(
    path: &Path,
    required: &[&str],
    optional: &[&str],
    each: impl FnMut(&Chunk) -> Result<(), ResultsError>,
) -> Result<(), ResultsError> {
    chunked(path, required, optional, CHUNK_ROWS, each)
}

fn chunked(
    path: &Path,
    required: &[&str],
    optional: &[&str],
    chunk_rows: usize,
    mut each: impl FnMut(&Chunk) -> Result<(), ResultsError>,
) -> Result<(), ResultsError> {
    let reader = open(path)?;
    let fail = |source| ResultsError::Parquet {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let mut columns = Vec::with_capacity(required.len() + optional.len());
    for &name in required {
        if reader.field(name).is_none() {
            return Err(ResultsError::MissingColumn {
                path: path.to_path_buf(),
                column: name.to_string(),
            });
        }
        columns.push(name);
    }
    columns.extend(optional.iter().filter(|name| reader.field(name).is_some()));
    let groups = reader.row_group_rows();
    let mut frame = exp_parquet::Frame::default();
    let mut first = 0;
    while first < groups.len() {
        // Whole row groups up to `chunk_rows`, so no group is decoded twice.
        let (mut end, mut rows) = (first, 0);
        while let Some(&next) = groups.get(end) {
            if rows > 0 && rows + next > chunk_rows {
                break;
            }
            rows += next;
            end += 1;
        }
        reader.read_into(Some(&columns), first..end, &mut frame).map_err(fail)?;
        if frame.height() > 0 {
            let chunk = Chunk::new(frame, path);
            each(&chunk)?;
            frame = chunk.into_frame();
        }
        first = end;
    }
    Ok(())
}

/// Opens `path` and reads its footer.
pub fn open(path: &Path) -> Result<Reader, ResultsError> {
    let file = File::open(path).map_err(|source| ResultsError::Io {
        action: "open",
        path: PathBuf::from(path),
        source,
    })?;
    Reader::new(file).map_err(|source| ResultsError::Parquet {
        action: "read the footer of",
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{DType, Schema, Store, StoreOptions};

    #[test]
    fn chunks_are_whole_row_groups_and_cover_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(
            dir.path().to_path_buf(),
            StoreOptions {
                row_group_rows: 4,
                ..StoreOptions::default()
            },
        )
        .unwrap();
        let schema = Schema::new("t")
            .column("x", DType::U64)
            .column("name", DType::Str)
            .column("flag", DType::Bool);
        let mut batch = schema.batch();
        for i in 0..10u64 {
            batch.push_row(vec![i.into(), "n".into(), (i % 2 == 0).into()]).unwrap();
        }
        store.sink(&schema, 0, 0).write(batch).unwrap();
        store.close().unwrap();
        let path = dir.path().join("t/trial=0/part-0.parquet");
        for (chunk_rows, expected) in [(1, vec![4, 4, 2]), (8, vec![8, 2]), (100, vec![10])] {
            let (mut sizes, mut values) = (Vec::new(), Vec::new());
            chunked(&path, &["x"], &["flag", "absent"], chunk_rows, |chunk| {
                assert!(chunk.has("flag") && !chunk.has("absent") && !chunk.has("name"));
                assert_eq!(chunk.str_or_null("absent")?.null_count(), chunk.height());
                sizes.push(chunk.height());
                values.extend(chunk.u64("x")?.iter().flatten());
                Ok(())
            })
            .unwrap();
            assert_eq!(sizes, expected, "chunks of at most {chunk_rows} rows");
            assert_eq!(values, (0..10).collect::<Vec<u64>>());
        }
        let missing = for_each_chunk(&path, &["nope"], &[], |_| Ok(()));
        assert!(matches!(missing, Err(ResultsError::MissingColumn { column, .. }) if column == "nope"));
        let wrong = for_each_chunk(&path, &["name"], &[], |chunk| chunk.u64("name").map(drop));
        assert!(matches!(wrong, Err(ResultsError::ColumnType { .. })), "{wrong:?}");
    }
}
