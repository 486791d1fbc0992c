//! Frames written and read back: values, nulls and kinds as they were,
//! row groups as written, projections, and clear errors for what is not a
//! table expc can read.

#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::path::Path;

use exp_parquet::{Column, Field, Frame, Kind, ParquetError, Reader, Values, Writer};

fn frame(rows: std::ops::Range<u64>) -> Frame {
    let n = |i: u64| i.is_multiple_of(3).then_some(());
    Frame::new(vec![
        Column::new(
            "flag",
            rows.clone().map(|i| n(i).map(|_| i % 2 == 0)).collect::<Vec<_>>(),
        ),
        Column::new(
            "small",
            rows.clone()
                .map(|i| n(i).map(|_| u32::MAX - i as u32))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "big",
            rows.clone().map(|i| n(i).map(|_| u64::MAX - i)).collect::<Vec<_>>(),
        ),
        Column::new(
            "signed",
            rows.clone()
                .map(|i| n(i).map(|_| i64::MIN + i as i64))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "float",
            rows.clone().map(|i| n(i).map(|_| i as f64 / 7.0)).collect::<Vec<_>>(),
        ),
        Column::new(
            "text",
            rows.map(|i| n(i).map(|_| format!("név {}", i % 5))).collect::<Vec<_>>(),
        ),
    ])
    .unwrap()
}

fn write(path: &Path, frames: &[Frame]) {
    let mut writer = Writer::new(File::create(path).unwrap(), &frames[0].fields()).unwrap();
    for f in frames {
        writer.write(f).unwrap();
    }
    writer.finish().unwrap();
}

fn open(path: &Path) -> Reader {
    Reader::new(File::open(path).unwrap()).unwrap()
}

#[test]
fn every_kind_and_null_reads_back_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let (a, b) = (frame(0..1000), frame(1000..1500));
    write(&path, &[a.clone(), b.clone()]);
    let reader = open(&path);
    assert_eq!(reader.num_rows(), 1500);
    assert_eq!(reader.row_group_rows(), [1000, 500], "a row group per frame");
    let kinds: Vec<Kind> = reader.fields().iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [Kind::Bool, Kind::U32, Kind::U64, Kind::I64, Kind::F64, Kind::Str]
    );
    let mut whole = a;
    whole.append(b).unwrap();
    assert_eq!(reader.read_all().unwrap(), whole);
    assert_eq!(whole.column("big").unwrap().null_count(), 1000);
    assert_eq!(reader.codecs().len(), 1);
    assert!(reader.codecs()[0].starts_with("ZSTD"), "{:?}", reader.codecs());
}

#[test]
fn projections_and_row_group_ranges_read_only_what_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    write(&path, &[frame(0..10), frame(10..20), frame(20..25)]);
    let reader = open(&path);
    let part = reader.read(Some(&["text", "big"]), 1..3).unwrap();
    assert_eq!(part.column_names(), ["text", "big"], "in the order asked");
    assert_eq!(part.height(), 15);
    assert_eq!(part.column("big"), frame(10..25).column("big"));
    let missing = reader.read(Some(&["nope"]), 0..1);
    assert!(matches!(missing, Err(ParquetError::MissingColumn(c)) if &*c == "nope"));
}

#[test]
fn a_frame_of_other_columns_is_refused_and_the_file_stays_writable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let fields = [Field::new("a", Kind::U64)];
    let mut writer = Writer::new(File::create(&path).unwrap(), &fields).unwrap();
    let wrong = Frame::new(vec![Column::new("a", vec![1i64])]).unwrap();
    assert!(matches!(writer.write(&wrong), Err(ParquetError::Mismatch { .. })));
    writer
        .write(&Frame::new(vec![Column::new("a", vec![7u64])]).unwrap())
        .unwrap();
    writer.finish().unwrap();
    assert_eq!(
        open(&path).read_all().unwrap().column("a"),
        Some(&Values::U64(vec![Some(7)]))
    );
}

#[test]
fn ragged_columns_and_mismatched_appends_are_errors() {
    let ragged = Frame::new(vec![Column::new("a", vec![1u64, 2]), Column::new("b", vec![1u64])]);
    assert!(matches!(ragged, Err(ParquetError::Ragged { column, .. }) if &*column == "b"));
    let mut a = Frame::new(vec![Column::new("a", vec![1u64])]).unwrap();
    let b = Frame::new(vec![Column::new("a", vec![1.0])]).unwrap();
    assert!(matches!(a.append(b), Err(ParquetError::Mismatch { .. })));
    assert_eq!(a.height(), 1, "unchanged");
}

#[test]
fn a_truncated_or_foreign_file_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    write(&path, &[frame(0..100)]);
    let bytes = std::fs::read(&path).unwrap();
    for cut in [0, 4, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let opened = Reader::new(File::open(&path).unwrap());
        assert!(matches!(opened, Err(ParquetError::Format(_))), "cut at {cut}");
    }
    // A damaged page (the footer intact): an error when the page is read.
    let mut damaged = bytes.clone();
    for b in &mut damaged[8..bytes.len() / 2] {
        *b = !*b;
    }
    std::fs::write(&path, &damaged).unwrap();
    if let Ok(reader) = Reader::new(File::open(&path).unwrap()) {
        assert!(reader.read_all().is_err());
    }
}
