//! Per-path value sources: what fills one slot of a template.
//!
//! A categorical path becomes an alias table over its values, already
//! escaped for where they go (element text or attribute value), plus one
//! empty entry weighted by the leaves that had no text. A numeric path
//! becomes its fitted family's draw (`draw.rs`; uniform on `[min, max]`
//! without a fit), a presence threshold, the clamp and a compiled number
//! format.

use exp_stats::{AliasIndex, FittedSampler, Rng};

use super::cursor::{self, Cursor};
use super::draw::FamilyDraw;
use super::number;
use crate::set::NumericPath;
use crate::{CategoricalCount, PathInfo, XmlError};

/// Where a value goes, which decides its escaping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Context {
    /// Element text: `&`, `<`, `>` escaped.
    Text,
    /// Attribute value in double quotes: `&`, `<`, `"` escaped.
    Attribute,
}

#[derive(Debug, Clone)]
pub(super) enum Source {
    Categorical(Categorical),
    Numeric(Numeric),
}

#[derive(Debug, Clone)]
pub(super) struct Categorical {
    /// `None` when there is a single entry: no draw needed.
    table: Option<AliasIndex>,
    /// The table's columns with the spans of both their outcomes: a draw
    /// reads one column, then the bytes (not the table, then a span, then
    /// the bytes: three dependent loads at random places, each a likely
    /// cache miss on a path with many values). Empty without a table.
    columns: Vec<Column>,
    /// (start, length) of each entry in `bytes`.
    spans: Vec<(usize, usize)>,
    /// The entries, then [`cursor::PAD`] bytes of padding.
    bytes: Vec<u8>,
}

/// One alias column laid out for drawing: kept below `threshold` (see
/// [`AliasIndex::columns`]), its own entry's span, its alias's span.
#[derive(Debug, Clone, Copy)]
struct Column {
    threshold: u64,
    own: Span,
    alias: Span,
}

/// (start, length) in `Categorical::bytes`, compact: a column fits in 24
/// bytes.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    len: u32,
}

#[derive(Debug, Clone)]
pub(super) struct Numeric {
    /// Present when `rng.next_u64() < threshold`; `None`: always present.
    presence: Option<u64>,
    draw: Draw,
    min: f64,
    max: f64,
    format: number::Writer,
}

#[derive(Debug, Clone)]
enum Draw {
    Fitted(FamilyDraw),
    Uniform { min: f64, width: f64 },
}

impl Source {
    /// Appends one value drawn from `rng`.
    #[inline]
    pub fn write(&self, rng: &mut Rng, out: &mut Cursor) {
        match self {
            Source::Categorical(c) => c.write(rng, out),
            Source::Numeric(n) => n.write(rng, out),
        }
    }

    /// Expected bytes per value, to size work batches.
    pub fn expected_len(&self) -> f64 {
        match self {
            Source::Categorical(c) => {
                let p = c.probabilities();
                c.spans.iter().zip(p).map(|(&(_, len), p)| len as f64 * p).sum()
            }
            Source::Numeric(n) => {
                let mut scratch = Vec::new();
                let mut cursor = Cursor::append(&mut scratch);
                n.format.write(&mut cursor, (n.min + n.max) / 2.0, n.min, n.max);
                cursor.finish();
                scratch.len() as f64
            }
        }
    }
}

impl Categorical {
    /// Draws as [`AliasIndex::sample`] does (the same entry for the same
    /// `rng`), from the merged columns.
    #[inline]
    fn write(&self, rng: &mut Rng, out: &mut Cursor) {
        let span = if self.columns.is_empty() {
            match self.spans.first() {
                Some(&(start, len)) => Span {
                    start: start as u32,
                    len: len as u32,
                },
                None => return,
            }
        } else {
            let product = u128::from(rng.next_u64()) * self.columns.len() as u128;
            let Some(column) = self.columns.get((product >> 64) as usize) else {
                return;
            };
            if (product as u64) < column.threshold {
                column.own
            } else {
                column.alias
            }
        };
        out.padded(&self.bytes, span.start as usize, span.len as usize);
    }

    fn probabilities(&self) -> Vec<f64> {
        match &self.table {
            Some(t) => t.probabilities(),
            None => vec![1.0; self.spans.len()],
        }
    }
}

impl Numeric {
    #[inline]
    fn write(&self, rng: &mut Rng, out: &mut Cursor) {
        if let Some(threshold) = self.presence {
            if rng.next_u64() >= threshold {
                return;
            }
        }
        let x = match &self.draw {
            Draw::Fitted(sampler) => sampler.sample(rng),
            Draw::Uniform { min, width } => min + width * rng.next_f64(),
        };
        // `clamp` passes NaN through; a NaN draw becomes the minimum.
        let x = if x.is_nan() {
            self.min
        } else {
            x.clamp(self.min, self.max)
        };
        self.format.write(out, x, self.min, self.max);
    }
}

fn escape_into(out: &mut Vec<u8>, value: &str, context: Context) {
    for &b in value.as_bytes() {
        match (b, context) {
            (b'&', _) => out.extend_from_slice(b"&amp;"),
            (b'<', _) => out.extend_from_slice(b"&lt;"),
            (b'>', Context::Text) => out.extend_from_slice(b"&gt;"),
            (b'"', Context::Attribute) => out.extend_from_slice(b"&quot;"),
            (b, _) => out.push(b),
        }
    }
}

/// P(text present) = values / occurrences as a 64-bit threshold; `None`
/// when every occurrence had a value.
fn presence(values: u64, occurrences: u64) -> Option<u64> {
    if values >= occurrences {
        return None;
    }
    // values < occurrences, so the quotient is < 2⁶⁴.
    Some(((u128::from(values) << 64) / u128::from(occurrences)) as u64)
}

/// The source of a categorical path from its value rows.
pub(super) fn categorical(path: &PathInfo, rows: &[&CategoricalCount], context: Context) -> Result<Source, XmlError> {
    let mut bytes = Vec::new();
    let mut spans = Vec::with_capacity(rows.len() + 1);
    let mut weights = Vec::with_capacity(rows.len() + 1);
    let mut total = 0u64;
    for row in rows.iter().filter(|r| r.count > 0) {
        let start = bytes.len();
        escape_into(&mut bytes, &row.value, context);
        spans.push((start, bytes.len() - start));
        weights.push(row.count as f64);
        total = total.saturating_add(row.count);
    }
    // Leaves without text: the empty entry.
    let absent = path.occurrences.saturating_sub(total);
    if absent > 0 || spans.is_empty() {
        spans.push((bytes.len(), 0));
        weights.push(absent.max(1) as f64);
    }
    let bad = |what: String| XmlError::Config(format!("path {}: {what}", path.hash));
    if u32::try_from(bytes.len()).is_err() {
        return Err(bad(format!("{} bytes of values (at most 4 GiB)", bytes.len())));
    }
    let bytes = cursor::pad(bytes);
    let table = if spans.len() > 1 {
        Some(AliasIndex::new(&weights).map_err(|e| bad(e.to_string()))?)
    } else {
        None
    };
    // Starts and lengths are below the 4 GiB checked above.
    let span = |entry: usize| {
        spans
            .get(entry)
            .map_or(Span { start: 0, len: 0 }, |&(start, len)| Span {
                start: start as u32,
                len: len as u32,
            })
    };
    let columns = table.as_ref().map_or_else(Vec::new, |t| {
        t.columns()
            .iter()
            .enumerate()
            .map(|(own, &(threshold, alias))| Column {
                threshold,
                own: span(own),
                alias: span(alias as usize),
            })
            .collect()
    });
    Ok(Source::Categorical(Categorical {
        table,
        columns,
        spans,
        bytes,
    }))
}

/// The source of a numeric path.
pub(super) fn numeric(path: &PathInfo, numeric: &NumericPath) -> Result<Source, XmlError> {
    let bad = |what: String| XmlError::Config(format!("numeric path {}: {what}", path.hash));
    let (min, max) = (numeric.min, numeric.max);
    if !(min.is_finite() && max.is_finite() && min <= max) {
        return Err(bad(format!("invalid range [{min}, {max}]")));
    }
    let draw = match &numeric.fit {
        Some(fit) => {
            // exp-stats validates the parameters (and keeps its messages).
            let sampler = FittedSampler::from_named(fit.family, &fit.params).map_err(|e| bad(e.to_string()))?;
            Draw::Fitted(FamilyDraw::new(sampler, &fit.params))
        }
        None => Draw::Uniform { min, width: max - min },
    };
    let format = if numeric.is_integer {
        number::Writer::new(crate::NumberFormat::Integer)
    } else {
        number::Writer::new(numeric.format)
    };
    Ok(Source::Numeric(Numeric {
        presence: presence(numeric.n, path.occurrences),
        draw,
        min,
        max,
        format,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_depends_on_context() {
        let mut out = Vec::new();
        escape_into(&mut out, "a<b>&\"c\"", Context::Text);
        assert_eq!(out, b"a&lt;b&gt;&amp;\"c\"");
        out.clear();
        escape_into(&mut out, "a<b>&\"c\"", Context::Attribute);
        assert_eq!(out, b"a&lt;b>&amp;&quot;c&quot;");
    }

    /// The merged columns draw what the alias table draws: the same entry
    /// for the same generator state, so generated bytes do not change.
    #[test]
    fn categorical_draws_as_its_alias_table() {
        let path = PathInfo {
            hash: crate::md5_of("<a>"),
            text: "<a>".into(),
            kind: crate::ValueKind::Categorical,
            occurrences: 40,
        };
        let rows: Vec<CategoricalCount> = ["x", "yy", "zzz", "a<b"]
            .iter()
            .zip([9, 3, 1, 20])
            .map(|(v, count)| CategoricalCount {
                path: path.hash,
                value: (*v).into(),
                count,
                truncated: false,
            })
            .collect();
        let refs: Vec<&CategoricalCount> = rows.iter().collect();
        let Ok(Source::Categorical(c)) = categorical(&path, &refs, Context::Text) else {
            panic!("a categorical source");
        };
        let table = c.table.as_ref().expect("five entries (one empty) need a table");
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let mut out = Vec::new();
        for _ in 0..2_000 {
            let entry = table.sample(&mut a);
            let (start, len) = c.spans[entry];
            let expected = c.bytes[start..start + len].to_vec();
            out.clear();
            let mut cursor = Cursor::append(&mut out);
            c.write(&mut b, &mut cursor);
            cursor.finish();
            assert_eq!(out, expected);
        }
    }

    #[test]
    fn presence_thresholds() {
        assert_eq!(presence(5, 5), None);
        assert_eq!(presence(0, 4), Some(0));
        assert_eq!(presence(1, 2), Some(1 << 63));
    }
}
