//! Distinct values of a path and how often each occurred.

use hashbrown::HashTable;

use super::number::{parse_number, NumberFormat};

/// Distinct values with their counts and parsed numbers, so a repeated
/// value is hashed once and never parsed again. Unordered: the output sorts
/// rows by count and value.
///
/// The values live in one text per path and the table holds row numbers,
/// so a lookup touches a few adjacent places instead of a separately
/// allocated string per value.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    table: HashTable<usize>,
    rows: Vec<Row>,
    text: String,
    /// The row of the last value counted: runs of one value (a unit, a
    /// status) cost a comparison each, not a lookup.
    last: Option<usize>,
}

/// One distinct value: its place in the text, its count, and the value as
/// a number once parsed.
#[derive(Debug, Clone, Copy)]
struct Row {
    start: usize,
    end: usize,
    count: u64,
    number: Option<(f64, NumberFormat)>,
}

fn hash_of(value: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(value)
}

/// The value of row `i`.
fn value_at<'t>(rows: &[Row], text: &'t str, i: usize) -> &'t str {
    rows.get(i).and_then(|r| text.get(r.start..r.end)).unwrap_or_default()
}

impl Counts {
    fn value(&self, i: usize) -> &str {
        value_at(&self.rows, &self.text, i)
    }

    /// Counts `n` occurrences of `value`; with `parse`, returns it as a
    /// number (parsed the first time only).
    #[inline]
    pub fn bump(&mut self, value: &str, n: u64, parse: bool) -> Option<(f64, NumberFormat)> {
        let i = match self.last {
            Some(i) if self.value(i) == value => i,
            _ => {
                let i = self.row_of(value);
                self.last = Some(i);
                i
            }
        };
        let row = self.rows.get_mut(i)?;
        row.count += n;
        if parse && row.number.is_none() {
            row.number = parse_number(value);
        }
        row.number
    }

    fn row_of(&mut self, value: &str) -> usize {
        let hash = hash_of(value);
        let Self { table, rows, text, .. } = self;
        if let Some(&i) = table.find(hash, |&i| value_at(rows, text, i) == value) {
            return i;
        }
        let i = rows.len();
        let start = text.len();
        text.push_str(value);
        rows.push(Row {
            start,
            end: text.len(),
            count: 0,
            number: None,
        });
        table.insert_unique(hash, i, |&i| hash_of(value_at(rows, text, i)));
        i
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Every distinct value with its count, by reference.
    pub fn rows(&self) -> impl Iterator<Item = (&str, u64)> {
        self.rows
            .iter()
            .map(|r| (self.text.get(r.start..r.end).unwrap_or_default(), r.count))
    }

    /// Every distinct value with its count.
    pub fn into_rows(self) -> impl Iterator<Item = (Box<str>, u64)> {
        let text = self.text;
        self.rows
            .into_iter()
            .map(move |r| (text.get(r.start..r.end).unwrap_or_default().into(), r.count))
    }

    #[cfg(test)]
    pub fn count_of(&self, value: &str) -> Option<u64> {
        let i = (0..self.rows.len()).find(|&i| self.value(i) == value)?;
        self.rows.get(i).map(|r| r.count)
    }

    /// Adds the counts of `other`.
    pub fn merge(&mut self, other: Counts) {
        for (i, theirs) in other.rows.iter().enumerate() {
            let mine = self.row_of(other.value(i));
            if let Some(row) = self.rows.get_mut(mine) {
                row.count += theirs.count;
                row.number = row.number.or(theirs.number);
            }
        }
    }
}
