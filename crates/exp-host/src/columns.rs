//! Columns and cells of the metric tables, without depending on
//! exp-results (which depends on this crate).
//!
//! Each sampler describes its row once, as a sequence of calls on a
//! [`RowSink`]: one sink collects the column names and types (the schema),
//! another the values (a row). Schema and rows therefore cannot drift apart.
//! Names are passed as `fmt::Arguments`, which are only formatted by the
//! schema sink, so taking a row allocates no names.

use std::fmt;

/// The type of a metric column; maps one-to-one onto `exp_results::DType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    U64,
    F64,
    Str,
}

/// One column of a metric table. Names carry units (`rss_bytes`, `cpu_pct`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
}

/// What a sampler can put a value into: any cell type convertible from the
/// three value kinds, `None` meaning "not measured". `exp_results::Cell` is
/// one (`let row: Vec<Cell> = sampler.sample(t_ns)?`).
pub trait MetricCell: From<Option<u64>> + From<Option<f64>> + From<String> {}

impl<T: From<Option<u64>> + From<Option<f64>> + From<String>> MetricCell for T {}

pub(crate) trait RowSink {
    fn u64(&mut self, name: fmt::Arguments<'_>, value: Option<u64>);
    fn f64(&mut self, name: fmt::Arguments<'_>, value: Option<f64>);
    fn str(&mut self, name: fmt::Arguments<'_>, value: &str);
}

/// Collects the schema.
#[derive(Default)]
pub(crate) struct Columns(pub(crate) Vec<Column>);

impl Columns {
    fn push(&mut self, name: fmt::Arguments<'_>, ty: ColumnType) {
        self.0.push(Column {
            name: name.to_string(),
            ty,
        });
    }
}

impl RowSink for Columns {
    fn u64(&mut self, name: fmt::Arguments<'_>, _: Option<u64>) {
        self.push(name, ColumnType::U64);
    }
    fn f64(&mut self, name: fmt::Arguments<'_>, _: Option<f64>) {
        self.push(name, ColumnType::F64);
    }
    fn str(&mut self, name: fmt::Arguments<'_>, _: &str) {
        self.push(name, ColumnType::Str);
    }
}

/// Collects one row.
pub(crate) struct Cells<C>(pub(crate) Vec<C>);

impl<C: MetricCell> RowSink for Cells<C> {
    fn u64(&mut self, _: fmt::Arguments<'_>, value: Option<u64>) {
        self.0.push(value.into());
    }
    fn f64(&mut self, _: fmt::Arguments<'_>, value: Option<f64>) {
        self.0.push(value.into());
    }
    fn str(&mut self, _: fmt::Arguments<'_>, value: &str) {
        self.0.push(value.to_string().into());
    }
}
