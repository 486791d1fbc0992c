//! String column chunks decoded page by page straight into [`Strings`]:
//! no value object per row (the `parquet` crate's typed reader makes a
//! reference-counted `ByteArray` for each), and a dictionary's entries
//! checked as UTF-8 once, not once per row that uses them.
//!
//! Handles what Parquet writers use for strings: PLAIN and dictionary
//! values, RLE definition levels, data pages v1 and v2. [`supports`] says
//! whether a chunk is in that set; the reader falls back to the typed
//! reader for any other.

use std::ops::Range;

use parquet::basic::Encoding;
use parquet::column::page::{Page, PageReader};

use crate::{ParquetError, Strings};

/// Whether every encoding of a chunk is one this decoder reads.
pub(crate) fn supports(encodings: impl Iterator<Item = Encoding>) -> bool {
    let mut encodings = encodings;
    encodings.all(|e| {
        matches!(
            e,
            Encoding::PLAIN | Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY | Encoding::RLE
        )
    })
}

/// One string column chunk being decoded.
pub(crate) struct StringChunk<'a> {
    pub name: &'a str,
    pub max_level: i16,
    pub rows: usize,
}

impl StringChunk<'_> {
    /// Appends a value (or null) per row of the chunk to `out`.
    pub fn read(&self, mut pages: Box<dyn PageReader>, out: &mut Strings) -> Result<(), ParquetError> {
        let mut dictionary: Option<Dictionary> = None;
        let (mut rows, mut levels, mut indices) = (0, Vec::new(), Vec::new());
        while let Some(page) = pages.get_next_page()? {
            let buf = page.buffer().clone();
            // Each kind of data page says where its levels and its values are.
            let (n, encoding, values) = match page {
                Page::DictionaryPage { num_values, .. } => {
                    dictionary = Some(Dictionary::new(&buf, num_values as usize, self)?);
                    continue;
                }
                Page::DataPage {
                    num_values,
                    encoding,
                    def_level_encoding,
                    ..
                } => {
                    let n = num_values as usize;
                    if self.max_level == 0 {
                        (n, encoding, 0)
                    } else {
                        if def_level_encoding != Encoding::RLE {
                            return Err(self.damaged("definition levels not RLE-encoded"));
                        }
                        let length = u32_at(&buf, 0).ok_or_else(|| self.damaged("a page ends in its levels"))?;
                        let start = 4 + length as usize;
                        self.levels(buf.get(4..start), n, &mut levels)?;
                        (n, encoding, start)
                    }
                }
                Page::DataPageV2 {
                    num_values,
                    encoding,
                    def_levels_byte_len,
                    rep_levels_byte_len,
                    ..
                } => {
                    let n = num_values as usize;
                    let start = rep_levels_byte_len as usize;
                    let end = start + def_levels_byte_len as usize;
                    if self.max_level > 0 {
                        self.levels(buf.get(start..end), n, &mut levels)?;
                    }
                    (n, encoding, end)
                }
            };
            let page = DataPage {
                buf: &buf,
                values,
                encoding,
                rows: n,
            };
            page.decode(self, &levels, dictionary.as_ref(), &mut indices, out)?;
            rows += n;
        }
        if rows != self.rows {
            return Err(ParquetError::Ragged {
                column: self.name.into(),
                expected: self.rows,
                got: rows,
            });
        }
        Ok(())
    }

    /// The page's `n` definition levels (bit width 1 for a flat optional
    /// column) from `data`, `None` when the page ends before them.
    fn levels(&self, data: Option<&[u8]>, n: usize, out: &mut Vec<u32>) -> Result<(), ParquetError> {
        let data = data.ok_or_else(|| self.damaged("a page ends in its levels"))?;
        let width = (16 - self.max_level.leading_zeros()) as u8;
        out.clear();
        hybrid(data, width, n, out).ok_or_else(|| self.damaged("definition levels cut short"))
    }

    fn damaged(&self, what: &'static str) -> ParquetError {
        ParquetError::Damaged {
            column: self.name.into(),
            what,
        }
    }
}

/// A dictionary page's values, checked as UTF-8 once, one after another.
struct Dictionary {
    text: String,
    entries: Vec<Range<usize>>,
}

impl Dictionary {
    fn new(buf: &[u8], n: usize, chunk: &StringChunk<'_>) -> Result<Dictionary, ParquetError> {
        let mut dictionary = Dictionary {
            text: String::with_capacity(buf.len()),
            entries: Vec::with_capacity(n),
        };
        let mut plain = Plain { buf, at: 0 };
        for _ in 0..n {
            let range = plain
                .next()
                .ok_or_else(|| chunk.damaged("a dictionary ends in a value"))?;
            let start = dictionary.text.len();
            dictionary.text.push_str(check_utf8(&buf[range], chunk)?);
            dictionary.entries.push(start..dictionary.text.len());
        }
        Ok(dictionary)
    }
}

/// One data page: its bytes, where its values start, their encoding.
struct DataPage<'a> {
    buf: &'a [u8],
    values: usize,
    encoding: Encoding,
    rows: usize,
}

impl DataPage<'_> {
    fn decode(
        &self,
        chunk: &StringChunk<'_>,
        levels: &[u32],
        dictionary: Option<&Dictionary>,
        indices: &mut Vec<u32>,
        out: &mut Strings,
    ) -> Result<(), ParquetError> {
        let data = self
            .buf
            .get(self.values..)
            .ok_or_else(|| chunk.damaged("a page ends before its values"))?;
        let max = chunk.max_level as u32;
        let present = |row: usize| chunk.max_level == 0 || levels[row] == max;
        match self.encoding {
            Encoding::PLAIN => {
                let mut plain = Plain { buf: data, at: 0 };
                for row in 0..self.rows {
                    if !present(row) {
                        out.push(None);
                        continue;
                    }
                    let range = plain.next().ok_or_else(|| chunk.damaged("a page ends in a value"))?;
                    out.push(Some(check_utf8(&data[range], chunk)?));
                }
            }
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
                let dictionary = dictionary.ok_or_else(|| chunk.damaged("dictionary values without a dictionary"))?;
                let width = *data.first().ok_or_else(|| chunk.damaged("a page without its values"))?;
                let count = (0..self.rows).filter(|&row| present(row)).count();
                indices.clear();
                hybrid(&data[1..], width, count, indices).ok_or_else(|| chunk.damaged("indices cut short"))?;
                let mut next = indices.iter();
                for row in 0..self.rows {
                    if !present(row) {
                        out.push(None);
                        continue;
                    }
                    let index = *next.next().ok_or_else(|| chunk.damaged("indices cut short"))? as usize;
                    let range = (dictionary.entries.get(index).cloned())
                        .ok_or_else(|| chunk.damaged("an index past the dictionary"))?;
                    out.push(dictionary.text.get(range));
                }
            }
            _ => return Err(chunk.damaged("an encoding this reader does not decode")),
        }
        Ok(())
    }
}

/// PLAIN byte arrays: a 4-byte little-endian length, then the bytes.
struct Plain<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Plain<'_> {
    fn next(&mut self) -> Option<Range<usize>> {
        let length = u32_at(self.buf, self.at)? as usize;
        let start = self.at + 4;
        let end = start.checked_add(length).filter(|&end| end <= self.buf.len())?;
        self.at = end;
        Some(start..end)
    }
}

fn u32_at(buf: &[u8], at: usize) -> Option<u32> {
    let bytes: [u8; 4] = buf.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

fn check_utf8<'a>(bytes: &'a [u8], chunk: &StringChunk<'_>) -> Result<&'a str, ParquetError> {
    std::str::from_utf8(bytes).map_err(|_| ParquetError::NotUtf8 {
        column: chunk.name.into(),
    })
}

/// Decodes `n` values of Parquet's RLE / bit-packed hybrid encoding of
/// `width`-bit values into `out`; `None` if the data ends first.
fn hybrid(data: &[u8], width: u8, n: usize, out: &mut Vec<u32>) -> Option<()> {
    if width > 32 {
        return None;
    }
    let mask = if width == 32 { u32::MAX } else { (1u32 << width) - 1 };
    let mut at = 0;
    while out.len() < n {
        let header = uleb128(data, &mut at)?;
        let left = n - out.len();
        if header & 1 == 0 {
            // A run: a count, then the value in ceil(width / 8) bytes.
            let count = usize::try_from(header >> 1).ok()?;
            let bytes = usize::from(width).div_ceil(8);
            let mut value = 0u32;
            for (i, b) in data.get(at..at + bytes)?.iter().enumerate() {
                value |= u32::from(*b) << (8 * i);
            }
            at += bytes;
            out.extend(std::iter::repeat_n(value, count.min(left)));
        } else {
            // Bit-packed groups of 8 values, least significant bit first.
            let groups = usize::try_from(header >> 1).ok()?;
            let bytes = groups.checked_mul(usize::from(width))?;
            let packed = data.get(at..at.checked_add(bytes)?)?;
            at += bytes;
            for i in 0..(groups * 8).min(left) {
                let bit = i * usize::from(width);
                let mut word = 0u64;
                for (k, b) in packed.iter().skip(bit / 8).take(5).enumerate() {
                    word |= u64::from(*b) << (8 * k);
                }
                out.push((word >> (bit % 8)) as u32 & mask);
            }
        }
    }
    Some(())
}

fn uleb128(data: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *data.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hybrid_decoder_reads_runs_and_bit_packed_groups() {
        // A run of 3 × 5 (width 3: one byte), then one bit-packed group of
        // 8 values 0..8 at width 3 (3 bytes), of which 6 are asked for.
        let mut data = vec![3 << 1, 5];
        data.push((1 << 1) | 1);
        let mut bits = 0u32;
        for v in 0..8u32 {
            bits |= v << (3 * v);
        }
        data.extend_from_slice(&bits.to_le_bytes()[..3]);
        let mut out = Vec::new();
        assert_eq!(hybrid(&data, 3, 9, &mut out), Some(()));
        assert_eq!(out, [5, 5, 5, 0, 1, 2, 3, 4, 5]);
        out.clear();
        assert_eq!(hybrid(&data[..4], 3, 9, &mut out), None, "cut short");
    }
}
