//! Typed views of a column: a value or null per row, by position or in order.

use std::borrow::Cow;

use crate::{Strings, Values};

/// A column of `T` (booleans, integers or floats).
#[derive(Debug, Clone)]
pub struct Col<'a, T: Clone>(pub Cow<'a, [Option<T>]>);

impl<T: Copy> Col<'_, T> {
    /// The value at `row`; `None` if it is null or past the end.
    pub fn get(&self, row: usize) -> Option<T> {
        self.0.get(row).copied().flatten()
    }

    pub fn iter(&self) -> impl Iterator<Item = Option<T>> + '_ {
        self.0.iter().copied()
    }
}

impl<T: Clone> Col<'_, T> {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn null_count(&self) -> usize {
        self.0.iter().filter(|v| v.is_none()).count()
    }
}

/// A column of strings.
#[derive(Debug, Clone)]
pub struct StrCol<'a>(pub Cow<'a, Strings>);

impl StrCol<'_> {
    /// The value at `row`; `None` if it is null or past the end.
    pub fn get(&self, row: usize) -> Option<&str> {
        self.0.get(row)
    }

    pub fn iter(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn null_count(&self) -> usize {
        self.0.null_count()
    }
}

/// Views of a column as it is stored: `None` if it is of another kind.
impl Values {
    pub fn bool(&self) -> Option<Col<'_, bool>> {
        match self {
            Values::Bool(v) => Some(Col(Cow::Borrowed(v))),
            _ => None,
        }
    }

    pub fn u64(&self) -> Option<Col<'_, u64>> {
        match self {
            Values::U64(v) => Some(Col(Cow::Borrowed(v))),
            _ => None,
        }
    }

    pub fn i64(&self) -> Option<Col<'_, i64>> {
        match self {
            Values::I64(v) => Some(Col(Cow::Borrowed(v))),
            _ => None,
        }
    }

    pub fn f64(&self) -> Option<Col<'_, f64>> {
        match self {
            Values::F64(v) => Some(Col(Cow::Borrowed(v))),
            _ => None,
        }
    }

    pub fn str(&self) -> Option<StrCol<'_>> {
        match self {
            Values::Str(v) => Some(StrCol(Cow::Borrowed(v))),
            _ => None,
        }
    }

    /// An integer column as unsigned integers (a negative value becomes
    /// null); `None` for a column of another kind.
    pub fn to_u64s(&self) -> Option<Col<'_, u64>> {
        Some(Col(match self {
            Values::U32(v) => Cow::Owned(v.iter().map(|x| x.map(u64::from)).collect()),
            Values::U64(v) => Cow::Borrowed(v.as_slice()),
            Values::I64(v) => Cow::Owned(v.iter().map(|x| x.and_then(|x| u64::try_from(x).ok())).collect()),
            _ => return None,
        }))
    }

    /// An integer column as signed integers (a value above `i64::MAX`
    /// becomes null); `None` for a column of another kind.
    pub fn to_i64s(&self) -> Option<Col<'_, i64>> {
        Some(Col(match self {
            Values::U32(v) => Cow::Owned(v.iter().map(|x| x.map(i64::from)).collect()),
            Values::U64(v) => Cow::Owned(v.iter().map(|x| x.and_then(|x| i64::try_from(x).ok())).collect()),
            Values::I64(v) => Cow::Borrowed(v.as_slice()),
            _ => return None,
        }))
    }

    /// A numeric column as floats; `None` for a column of another kind.
    pub fn to_f64s(&self) -> Option<Col<'_, f64>> {
        Some(Col(match self {
            Values::U32(v) => Cow::Owned(v.iter().map(|x| x.map(f64::from)).collect()),
            Values::U64(v) => Cow::Owned(v.iter().map(|x| x.map(|x| x as f64)).collect()),
            Values::I64(v) => Cow::Owned(v.iter().map(|x| x.map(|x| x as f64)).collect()),
            Values::F64(v) => Cow::Borrowed(v.as_slice()),
            _ => return None,
        }))
    }
}
