//! Writing connections in both formats, and original → alternate conversion.
//!
//! Both writers emit the header, then `m`, `w`, `r`, `l` (those present, in
//! that order), then the body, and are exact inverses of [`parse`]:
//! `parse(write(x)) == x` for every connection the format can express. The
//! alternate format expresses every [`Connection`]. The original format
//! cannot express everything the model can (see [`original_body`]); such a
//! connection is a [`CvecError::NotExpressible`], never silently changed.
//! Each connection is formatted completely before it is written, so an
//! error leaves the connections before it written and nothing of it.
//!
//! Header counts are computed, not stored: NEPOCHS is
//! [`Connection::epochs`]'s length, NA/NB the data units per side.

use std::fmt::Write as _;
use std::io::Write;

use super::parse::{parse, Format, Parsed};
use super::{Adu, Connection, CvecError, Inexpressible, Mode, Side};

/// Writes `connections` in the original (`SEQ`/`CONC`) format.
pub fn write_original<W: Write>(out: &mut W, connections: &[Connection]) -> Result<(), CvecError> {
    for conn in connections {
        let text = original_text(conn)?;
        out.write_all(text.as_bytes()).map_err(CvecError::Write)?;
    }
    Ok(())
}

/// Writes `connections` in the alternate (`S`/`C`, `I`/`A`) format.
pub fn write_alternate<W: Write>(out: &mut W, connections: &[Connection]) -> Result<(), CvecError> {
    for conn in connections {
        out.write_all(alternate_text(conn).as_bytes())
            .map_err(CvecError::Write)?;
    }
    Ok(())
}

/// Converts an original-format file to the alternate format by the published
/// converter's rules (a `t 0` becomes 1 µs, a trailing `t` a size-0 FIN of
/// the side that sent last): parses `text` as the original format and writes
/// it as the alternate one. Returns what was parsed (with `lenient`, the
/// skipped connections are left out of the output and listed).
pub fn to_alternate<W: Write>(text: &str, name: &str, lenient: bool, out: &mut W) -> Result<Parsed, CvecError> {
    let parsed = parse(text, name, Format::Original, lenient)?;
    write_alternate(out, &parsed.connections)?;
    Ok(parsed)
}

/// One connection in the original format.
pub fn original_text(conn: &Connection) -> Result<String, CvecError> {
    let body = original_body(conn).map_err(|reason| CvecError::NotExpressible {
        ids: format!("{} {}", conn.ids.0, conn.ids.1),
        reason,
    })?;
    let keyword = match conn.mode {
        Mode::Sequential => "SEQ",
        Mode::Concurrent => "CONC",
    };
    let mut text = header(conn, keyword);
    text.push_str(&body);
    Ok(text)
}

/// One connection in the alternate format.
pub fn alternate_text(conn: &Connection) -> String {
    let keyword = match conn.mode {
        Mode::Sequential => "S",
        Mode::Concurrent => "C",
    };
    let mut text = header(conn, keyword);
    for adu in &conn.adus {
        let side = match adu.side {
            Side::Initiator => 'I',
            Side::Acceptor => 'A',
        };
        let _ = writeln!(text, "{side} {} {} {}", adu.send_wait_us, adu.recv_wait_us, adu.bytes);
    }
    text
}

/// An identifier as one header token: identifiers are whitespace-separated,
/// so an empty one is written `-` and inner whitespace becomes `_` (files
/// written from connections built in code must parse back).
fn id_token(id: &str) -> String {
    if id.is_empty() {
        "-".to_owned()
    } else {
        id.split_whitespace().collect::<Vec<_>>().join("_")
    }
}

/// Header line and option lines, shared by both formats.
fn header(conn: &Connection, keyword: &str) -> String {
    let mut text = String::new();
    let (id1, id2) = (id_token(&conn.ids.0), id_token(&conn.ids.1));
    let _ = match conn.mode {
        Mode::Sequential => writeln!(text, "{keyword} {} {} {id1} {id2}", conn.start_us, conn.epochs().len()),
        Mode::Concurrent => writeln!(
            text,
            "{keyword} {} {} {} {id1} {id2}",
            conn.start_us,
            conn.data_units(Side::Initiator),
            conn.data_units(Side::Acceptor)
        ),
    };
    if let Some(m) = conn.mss {
        let _ = writeln!(text, "m {} {}", m.initiator, m.acceptor);
    }
    if let Some(w) = conn.window {
        let _ = writeln!(text, "w {} {}", w.initiator, w.acceptor);
    }
    if let Some(r) = conn.min_rtt_us {
        let _ = writeln!(text, "r {r}");
    }
    if let Some(l) = conn.loss {
        // `{}` on f64 is the shortest text that parses back to the same value.
        let _ = writeln!(text, "l {} {}", l.initiator, l.acceptor);
    }
    text
}

/// The original-format body, or why there is none. What the original format
/// can express is exactly what [`parse`] produces from it:
///
/// * SEQ: a data unit after one of the same side has `recv_wait` 0 (its
///   `send_wait`, if any, is the `t` before it); any other data unit has
///   `send_wait` 0 (its `recv_wait`, if any, is the `t`). At most one FIN,
///   as the last unit, sent by the side that sent the unit before it, with
///   `recv_wait` 0 and `send_wait` ≥ 1 (the trailing `t`).
/// * CONC: `recv_wait` 0 everywhere; FINs (at most one per side) come after
///   all data units, the initiator's first, each with `send_wait` ≥ 1.
pub fn original_body(conn: &Connection) -> Result<String, Inexpressible> {
    match conn.mode {
        Mode::Sequential => seq_body(&conn.adus),
        Mode::Concurrent => conc_body(&conn.adus),
    }
}

fn seq_body(adus: &[Adu]) -> Result<String, Inexpressible> {
    let mut text = String::new();
    let mut last: Option<Side> = None;
    for (index, adu) in adus.iter().enumerate() {
        let unit = index + 1;
        let same_side = last == Some(adu.side);
        if adu.bytes == 0 {
            if index + 1 != adus.len() {
                return Err(Inexpressible::FinNotLast { unit });
            }
            if !same_side {
                return Err(Inexpressible::FinFromOtherSide { unit });
            }
            if adu.recv_wait_us != 0 || adu.send_wait_us == 0 {
                return Err(Inexpressible::SequentialFinWaits { unit });
            }
            let _ = writeln!(text, "t {}", adu.send_wait_us);
            continue;
        }
        let wait = if same_side {
            if adu.recv_wait_us != 0 {
                return Err(Inexpressible::RecvWaitAfterSameSide { unit });
            }
            adu.send_wait_us
        } else {
            if adu.send_wait_us != 0 {
                return Err(Inexpressible::SendWaitAfterOtherSide { unit });
            }
            adu.recv_wait_us
        };
        if wait > 0 {
            let _ = writeln!(text, "t {wait}");
        }
        let arrow = match adu.side {
            Side::Initiator => '>',
            Side::Acceptor => '<',
        };
        let _ = writeln!(text, "{arrow} {}", adu.bytes);
        last = Some(adu.side);
    }
    Ok(text)
}

fn conc_body(adus: &[Adu]) -> Result<String, Inexpressible> {
    let mut text = String::new();
    // FINs seen so far: initiator's, acceptor's.
    let mut fins = (false, false);
    for (index, adu) in adus.iter().enumerate() {
        let unit = index + 1;
        if adu.recv_wait_us != 0 {
            return Err(Inexpressible::ConcurrentRecvWait { unit });
        }
        let (data, time) = match adu.side {
            Side::Initiator => ("c>", "t>"),
            Side::Acceptor => ("c<", "t<"),
        };
        if adu.bytes == 0 {
            let out_of_order = match adu.side {
                Side::Initiator => fins.0 || fins.1,
                Side::Acceptor => fins.1,
            };
            if out_of_order {
                return Err(Inexpressible::FinOrder { unit });
            }
            if adu.send_wait_us == 0 {
                return Err(Inexpressible::ConcurrentFinWait { unit, time });
            }
            match adu.side {
                Side::Initiator => fins.0 = true,
                Side::Acceptor => fins.1 = true,
            }
            let _ = writeln!(text, "{time} {}", adu.send_wait_us);
            continue;
        }
        if fins.0 || fins.1 {
            return Err(Inexpressible::DataAfterFin { unit });
        }
        if adu.send_wait_us > 0 {
            let _ = writeln!(text, "{time} {}", adu.send_wait_us);
        }
        let _ = writeln!(text, "{data} {}", adu.bytes);
    }
    Ok(text)
}
