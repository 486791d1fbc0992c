//! A column of strings in one buffer: what a reader fills without an
//! allocation per value (a report reads tens of millions of them).

use std::ops::Range;

/// Strings or nulls; row `i` is `text[ends[i - 1]..ends[i]]` if `valid[i]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Strings {
    text: String,
    ends: Vec<usize>,
    valid: Vec<bool>,
}

impl Strings {
    pub fn with_capacity(rows: usize) -> Strings {
        Strings {
            text: String::new(),
            ends: Vec::with_capacity(rows),
            valid: Vec::with_capacity(rows),
        }
    }

    /// `rows` nulls.
    pub fn nulls(rows: usize) -> Strings {
        Strings {
            text: String::new(),
            ends: vec![0; rows],
            valid: vec![false; rows],
        }
    }

    pub fn push(&mut self, value: Option<&str>) {
        self.text.push_str(value.unwrap_or_default());
        self.ends.push(self.text.len());
        self.valid.push(value.is_some());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Removes every value, keeping the memory.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
        self.valid.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The value at `row`; `None` if it is null or past the end.
    pub fn get(&self, row: usize) -> Option<&str> {
        if !*self.valid.get(row)? {
            return None;
        }
        let start = if row == 0 { 0 } else { self.ends[row - 1] };
        self.text.get(start..self.ends[row])
    }

    pub fn iter(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        (0..self.len()).map(|row| self.get(row))
    }

    pub fn null_count(&self) -> usize {
        self.valid.iter().filter(|v| !**v).count()
    }

    /// All the values' bytes, one after another, and where each ends.
    pub(crate) fn parts(&self) -> (&str, &[usize], &[bool]) {
        (&self.text, &self.ends, &self.valid)
    }

    pub(crate) fn slice(&self, rows: Range<usize>) -> Strings {
        let mut out = Strings::with_capacity(rows.len());
        for row in rows {
            out.push(self.get(row));
        }
        out
    }

    pub(crate) fn append(&mut self, other: Strings) {
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|e| e + base));
        self.valid.extend(other.valid);
    }
}

impl<S: AsRef<str>> FromIterator<Option<S>> for Strings {
    fn from_iter<I: IntoIterator<Item = Option<S>>>(values: I) -> Strings {
        let values = values.into_iter();
        let mut out = Strings::with_capacity(values.size_hint().0);
        for v in values {
            out.push(v.as_ref().map(AsRef::as_ref));
        }
        out
    }
}
