//! Reading both Tmix file formats into [`Connection`]s.
//!
//! A file is a sequence of connections, each a header line (`SEQ`/`CONC` in
//! the original format, `S`/`C` in the alternate one), then optional `m`,
//! `w`, `r`, `l` lines in any order (at most one of each, all before the
//! body), then the body (see [`parse`] for how each body maps onto data
//! units). Blank lines and lines starting with `#` are skipped.
//! Connections are returned in file order, not sorted by start time.
//!
//! Tolerated: wrong epoch or ADU counts in the header (read, never checked),
//! `t 0` (1 µs), any amount of whitespace, CRLF line ends, connections with
//! no body. Refused, with the file, line and what was expected: unknown
//! lines, missing or extra fields, non-integers, negative numbers, loss
//! rates outside [0, 1], option lines after the body or repeated, a body
//! line of the other mode or format, two `t` lines in a row, a zero-byte
//! original-format unit, alternate data after that side's FIN, and (with an
//! explicit format or after the first header) a header of the other
//! format. With `lenient`, a connection with any such line is skipped whole
//! and recorded in [`Parsed::skipped`] instead.

use std::path::Path;

use super::body::{Bad, Body, Line};
use super::{Connection, CvecError, Mode, PerSide};

/// Which file format to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `SEQ`/`CONC` headers, `>`/`<`/`t` and `c>`/`c<`/`t>`/`t<` bodies.
    Original,
    /// `S`/`C` headers, `I|A SEND_WAIT RECV_WAIT BYTES` bodies.
    Alternate,
    /// Decided by the file's first header.
    Auto,
}

impl Format {
    /// `"original"`, `"alternate"` or `"auto"`, as in a spec's `format`.
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "original" => Some(Format::Original),
            "alternate" => Some(Format::Alternate),
            "auto" => Some(Format::Auto),
            _ => None,
        }
    }
}

/// A connection left out by a lenient parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedConnection {
    /// 1-based line of the first bad line.
    pub line: usize,
    /// The error that line would have given in a strict parse.
    pub reason: String,
}

/// The result of reading a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// In file order.
    pub connections: Vec<Connection>,
    /// Empty unless the parse was lenient.
    pub skipped: Vec<SkippedConnection>,
    /// The format actually read (`None` when the file had no header).
    pub format: Option<Format>,
}

/// Largest connection-vector file read (1 GiB).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Reads a connection-vector file from disk (see [`parse`]).
pub fn read_file(path: &Path, format: Format, lenient: bool) -> Result<Parsed, CvecError> {
    let text = read_text(path)?;
    parse(&text, &path.display().to_string(), format, lenient)
}

/// The text of a connection-vector file, through the bounded reader: only a
/// regular file of at most [`MAX_FILE_BYTES`], opened without blocking
/// (`/dev/zero` was read for 2.1 GB, a FIFO blocked).
pub fn read_text(path: &Path) -> Result<String, CvecError> {
    exp_files::read_text(path, exp_files::Cap::new(MAX_FILE_BYTES, "a trace")).map_err(|e| CvecError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    })
}

/// Parses `text`; `name` is the file name used in errors.
///
/// Original-format bodies map onto data units by the published converter's
/// rules (`cvec-orig2alt`), so an original file and its alternate
/// conversion parse to equal connections:
///
/// * SEQ: a `t` applies to the next `>`/`<`. If that unit's side also sent
///   the unit before it, the `t` is its `send_wait`; otherwise (server time
///   between `>` and `<`, think time between `<` and `>`, or a `t` before
///   the first unit) its `recv_wait`. A unit with no `t` before it has both
///   waits 0. A trailing `t` is a FIN (0 bytes) of the side of the last
///   unit, with `send_wait` = the `t`.
/// * CONC: `t>`/`t<` is the `send_wait` of that side's next `c>`/`c<`;
///   `recv_wait` is always 0. A trailing `t>`/`t<` is that side's FIN; FINs
///   follow all data units, the initiator's first.
/// * `t 0` (and `t> 0`, `t< 0`) is 1 µs. Without a trailing `t` a
///   connection has no FIN unit.
///
/// Alternate-format lines are data units as written.
pub fn parse(text: &str, name: &str, format: Format, lenient: bool) -> Result<Parsed, CvecError> {
    let mut parser = Parser {
        name,
        format,
        lenient,
        current: None,
        skipping: false,
        out: Parsed {
            connections: Vec::new(),
            skipped: Vec::new(),
            format: None,
        },
    };
    for (index, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let line = Line {
            number: index + 1,
            text: trimmed,
            tokens: trimmed.split_whitespace().collect(),
        };
        parser.line(&line)?;
    }
    parser.finish_current()?;
    Ok(parser.out)
}

/// What a connection's totals must fit, if they do not: one side's bytes,
/// or its start plus all its waits, past 2^64 − 1 (no conversion or replay
/// could add them up; they used to saturate silently).
fn overflow(conn: &Connection) -> Option<String> {
    for side in [super::Side::Initiator, super::Side::Acceptor] {
        let bytes = conn
            .adus
            .iter()
            .filter(|a| a.side == side)
            .try_fold(0u64, |sum, a| sum.checked_add(a.bytes));
        if bytes.is_none() {
            return Some(format!(
                "a connection whose {side:?} bytes add up to at most 2^64 − 1 (the sizes overflow)"
            ));
        }
    }
    let time = conn.adus.iter().try_fold(conn.start_us, |t, a| {
        t.checked_add(a.send_wait_us)?.checked_add(a.recv_wait_us)
    });
    time.is_none()
        .then(|| "a connection whose start and waits add up to at most 2^64 − 1 µs".to_string())
}

/// A connection being read.
struct Builder {
    /// The header line, for errors about the whole connection.
    header: (usize, String),
    conn: Connection,
    body: Body,
    body_started: bool,
    /// `m`, `w`, `r`, `l` seen.
    seen: [bool; 4],
}

struct Parser<'a> {
    name: &'a str,
    format: Format,
    lenient: bool,
    current: Option<Builder>,
    /// After a bad line in lenient mode: ignore lines until the next header.
    skipping: bool,
    out: Parsed,
}

const HEADER_ANY: &str = "a connection header (`SEQ`, `CONC`, `S` or `C`)";

impl Parser<'_> {
    fn line(&mut self, line: &Line<'_>) -> Result<(), CvecError> {
        let keyword = line.tokens.first().copied().unwrap_or_default();
        if matches!(keyword, "SEQ" | "CONC" | "S" | "C") {
            self.finish_current()?;
            self.skipping = false;
            return match self.header(line) {
                Ok(builder) => {
                    self.current = Some(builder);
                    Ok(())
                }
                Err(bad) => self.fail(bad),
            };
        }
        if self.skipping {
            return Ok(());
        }
        let result = match &mut self.current {
            None => Err(line.bad(HEADER_ANY)),
            Some(builder) => builder.line(line),
        };
        match result {
            Ok(()) => Ok(()),
            Err(bad) => self.fail(bad),
        }
    }

    /// Strict: the error. Lenient: record it, drop the connection and skip
    /// to the next header.
    fn fail(&mut self, bad: Bad) -> Result<(), CvecError> {
        let error = CvecError::Syntax {
            file: self.name.to_string(),
            line: bad.line,
            text: bad.text,
            expected: bad.expected,
        };
        if !self.lenient {
            return Err(error);
        }
        self.out.skipped.push(SkippedConnection {
            line: bad.line,
            reason: error.to_string(),
        });
        self.current = None;
        self.skipping = true;
        Ok(())
    }

    fn finish_current(&mut self) -> Result<(), CvecError> {
        let Some(mut builder) = self.current.take() else {
            return Ok(());
        };
        let finished = builder.body.finish(&mut builder.conn.adus);
        let (line, text) = builder.header;
        match finished.map(|()| overflow(&builder.conn)) {
            Ok(None) => {
                self.out.connections.push(builder.conn);
                Ok(())
            }
            Ok(Some(expected)) => self.fail(Bad { line, text, expected }),
            Err(bad) => self.fail(bad),
        }
    }

    fn header(&mut self, line: &Line<'_>) -> Result<Builder, Bad> {
        let keyword = line.tokens.first().copied().unwrap_or_default();
        let (format, mode) = match keyword {
            "SEQ" => (Format::Original, Mode::Sequential),
            "CONC" => (Format::Original, Mode::Concurrent),
            "S" => (Format::Alternate, Mode::Sequential),
            _ => (Format::Alternate, Mode::Concurrent),
        };
        let wanted = match (self.format, self.out.format) {
            (Format::Auto, detected) => detected,
            (explicit, _) => Some(explicit),
        };
        match wanted {
            Some(Format::Original) if format != Format::Original => {
                return Err(line.bad(
                    "an original-format header (`SEQ START NEPOCHS ID1 ID2` or \
                     `CONC START NA NB ID1 ID2`)",
                ))
            }
            Some(Format::Alternate) if format != Format::Alternate => {
                return Err(line.bad(
                    "an alternate-format header (`S START NEPOCHS ID1 ID2` or \
                     `C START NA NB ID1 ID2`)",
                ))
            }
            _ => {}
        }
        // The counts are read so that shifted fields are caught, but never
        // checked: real traces often get them wrong.
        let (expected, counts) = match mode {
            Mode::Sequential => (format!("`{keyword} START NEPOCHS ID1 ID2`"), 1),
            Mode::Concurrent => (format!("`{keyword} START NA NB ID1 ID2`"), 2),
        };
        if line.tokens.len() != 4 + counts {
            return Err(line.bad(expected));
        }
        let numbers_ok = line.tokens[2..2 + counts].iter().all(|t| t.parse::<u64>().is_ok());
        let start_us = match line.tokens[1].parse::<u64>() {
            Ok(start) if numbers_ok => start,
            _ => return Err(line.bad(format!("{expected} (START and counts are integers)"))),
        };
        let ids = (line.tokens[2 + counts].to_string(), line.tokens[3 + counts].to_string());
        self.out.format.get_or_insert(format);
        let body = match (format, mode) {
            (Format::Alternate, _) => Body::alternate(),
            (_, Mode::Sequential) => Body::seq(),
            (_, Mode::Concurrent) => Body::conc(),
        };
        Ok(Builder {
            header: (line.number, line.text.to_string()),
            conn: Connection {
                ids,
                ..Connection::new(start_us, mode, Vec::new())
            },
            body,
            body_started: false,
            seen: [false; 4],
        })
    }
}

impl Builder {
    fn line(&mut self, line: &Line<'_>) -> Result<(), Bad> {
        let keyword = line.tokens.first().copied().unwrap_or_default();
        let option = ["m", "w", "r", "l"].iter().position(|k| *k == keyword);
        let Some(index) = option else {
            if !self.body.is_body_keyword(keyword) {
                return Err(line.bad(self.body.expected()));
            }
            self.body_started = true;
            return self.body.line(line, &mut self.conn.adus);
        };
        if self.body_started {
            return Err(line.bad(format!(
                "{} (`{keyword}` lines belong before the body)",
                self.body.expected()
            )));
        }
        if self.seen[index] {
            return Err(line.bad(format!("at most one `{keyword}` line per connection")));
        }
        self.seen[index] = true;
        let conn = &mut self.conn;
        match keyword {
            "m" => conn.mss = Some(per_side_u32(line, "`m MSS_I MSS_A` (two integers, bytes)")?),
            "w" => conn.window = Some(per_side_u32(line, "`w WIN_I WIN_A` (two integers, bytes)")?),
            "r" => conn.min_rtt_us = Some(line.one_uint("`r MIN_RTT_US` (one integer, microseconds)")?),
            _ => conn.loss = Some(loss(line)?),
        }
        Ok(())
    }
}

fn per_side_u32(line: &Line<'_>, expected: &str) -> Result<PerSide<u32>, Bad> {
    match line.tokens.as_slice() {
        [_, i, a] => match (i.parse(), a.parse()) {
            (Ok(initiator), Ok(acceptor)) => Ok(PerSide { initiator, acceptor }),
            _ => Err(line.bad(expected)),
        },
        _ => Err(line.bad(expected)),
    }
}

fn loss(line: &Line<'_>) -> Result<PerSide<f64>, Bad> {
    const EXPECTED: &str = "`l LOSS_I2A LOSS_A2I` (two probabilities in [0, 1])";
    let rate = |t: &str| t.parse::<f64>().ok().filter(|p| (0.0..=1.0).contains(p));
    match line.tokens.as_slice() {
        [_, i, a] => match (rate(i), rate(a)) {
            (Some(initiator), Some(acceptor)) => Ok(PerSide { initiator, acceptor }),
            _ => Err(line.bad(EXPECTED)),
        },
        _ => Err(line.bad(EXPECTED)),
    }
}
