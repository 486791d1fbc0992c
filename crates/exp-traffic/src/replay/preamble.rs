//! The preamble: the first bytes the initiator sends on every connection,
//! carrying the script both sides execute, so an acceptor (in-process or an
//! `expc serve` on another host) needs no copy of the trace.
//!
//! Layout (version 1): `"XR"`, version byte, body length (u32, big endian),
//! then the body: connection id (varint), mode byte (0 sequential,
//! 1 concurrent), window flag byte (0 none, 1 followed by the initiator's and
//! the acceptor's window as varints), ADU count (varint), and per ADU a side
//! byte (0 initiator, 1 acceptor) and `send_wait_us`, `recv_wait_us`,
//! `bytes` as varints. Varints are LEB128. Both sides' sizes travel, so the
//! acceptor knows what it should receive and can check it. A typical
//! connection's preamble is a few dozen bytes.

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::cvec::{Adu, Connection, Mode, PerSide, Side};

const MAGIC: [u8; 2] = *b"XR";
/// The preamble format version this build writes and reads.
pub const VERSION: u8 = 1;
/// Longest body accepted: bounds what a garbage or hostile preamble can make
/// the acceptor allocate (a million ADUs fit comfortably).
pub const MAX_BODY: u32 = 16 << 20;
const HEADER: usize = 7;

/// What both sides of one connection execute.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// Connection id (its position in the replayed list).
    pub id: u64,
    pub mode: Mode,
    /// Receiver windows, bytes (`w` line or the configured override).
    pub window: Option<PerSide<u32>>,
    pub adus: Vec<Adu>,
}

impl Script {
    /// The script of `connection`, with `window` overriding its `w` line.
    pub fn of(id: u64, connection: &Connection, window: Option<u32>) -> Script {
        Script {
            id,
            mode: connection.mode,
            window: window
                .map(|w| PerSide {
                    initiator: w,
                    acceptor: w,
                })
                .or(connection.window),
            adus: connection.adus.clone(),
        }
    }

    /// Bytes `side` sends.
    pub fn bytes(&self, side: Side) -> u64 {
        self.adus
            .iter()
            .filter(|a| a.side == side)
            .fold(0u64, |sum, a| sum.saturating_add(a.bytes))
    }
}

/// Why a preamble was refused.
#[derive(Debug, thiserror::Error)]
pub enum PreambleError {
    #[error("reading the preamble: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a replay preamble (magic {0:02x?})")]
    Magic([u8; 2]),
    #[error("preamble version {0} is not supported (this build reads {VERSION})")]
    Version(u8),
    #[error("preamble body of {0} bytes exceeds the limit of {MAX_BODY}")]
    TooLong(u32),
    #[error("malformed preamble: {0}")]
    Malformed(&'static str),
    #[error("invalid script: {0}")]
    Invalid(#[from] ScriptError),
}

/// A script neither side could execute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    #[error("ADU {index} is sent by the {side:?} after its FIN")]
    AfterFin { index: usize, side: Side },
}

/// Checks that no side sends after its own FIN.
pub fn validate(adus: &[Adu]) -> Result<(), ScriptError> {
    let mut fin = [false; 2];
    for (index, adu) in adus.iter().enumerate() {
        let slot = side_index(adu.side);
        if fin[slot] {
            return Err(ScriptError::AfterFin { index, side: adu.side });
        }
        fin[slot] = adu.bytes == 0;
    }
    Ok(())
}

fn side_index(side: Side) -> usize {
    match side {
        Side::Initiator => 0,
        Side::Acceptor => 1,
    }
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Encodes `script` as a complete preamble (header and body).
pub fn encode(script: &Script) -> Vec<u8> {
    let mut body = Vec::with_capacity(16 + script.adus.len() * 6);
    put_varint(&mut body, script.id);
    body.push(match script.mode {
        Mode::Sequential => 0,
        Mode::Concurrent => 1,
    });
    match script.window {
        None => body.push(0),
        Some(w) => {
            body.push(1);
            put_varint(&mut body, u64::from(w.initiator));
            put_varint(&mut body, u64::from(w.acceptor));
        }
    }
    put_varint(&mut body, script.adus.len() as u64);
    for adu in &script.adus {
        body.push(side_index(adu.side) as u8);
        put_varint(&mut body, adu.send_wait_us);
        put_varint(&mut body, adu.recv_wait_us);
        put_varint(&mut body, adu.bytes);
    }
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Reads and validates one preamble from `reader`.
pub async fn read<R: AsyncRead + Unpin>(reader: &mut R) -> Result<Script, PreambleError> {
    let mut header = [0u8; HEADER];
    reader.read_exact(&mut header).await?;
    let magic = [header[0], header[1]];
    if magic != MAGIC {
        return Err(PreambleError::Magic(magic));
    }
    if header[2] != VERSION {
        return Err(PreambleError::Version(header[2]));
    }
    let len = u32::from_be_bytes([header[3], header[4], header[5], header[6]]);
    if len > MAX_BODY {
        return Err(PreambleError::TooLong(len));
    }
    let mut body = vec![0u8; len as usize];
    reader.read_exact(&mut body).await?;
    decode_body(&body)
}

/// Decodes a preamble body (everything after the 7-byte header).
pub fn decode_body(body: &[u8]) -> Result<Script, PreambleError> {
    let mut cursor = Cursor { rest: body };
    let id = cursor.varint()?;
    let mode = match cursor.byte()? {
        0 => Mode::Sequential,
        1 => Mode::Concurrent,
        _ => return Err(PreambleError::Malformed("mode byte")),
    };
    let window = match cursor.byte()? {
        0 => None,
        1 => Some(PerSide {
            initiator: cursor.u32()?,
            acceptor: cursor.u32()?,
        }),
        _ => return Err(PreambleError::Malformed("window flag")),
    };
    let count = cursor.varint()?;
    // Every ADU takes at least four bytes, so a count beyond that is a lie
    // and must not size an allocation.
    if count > (cursor.rest.len() / 4) as u64 {
        return Err(PreambleError::Malformed("ADU count exceeds the body"));
    }
    let mut adus = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let side = match cursor.byte()? {
            0 => Side::Initiator,
            1 => Side::Acceptor,
            _ => return Err(PreambleError::Malformed("side byte")),
        };
        adus.push(Adu {
            side,
            send_wait_us: cursor.varint()?,
            recv_wait_us: cursor.varint()?,
            bytes: cursor.varint()?,
        });
    }
    if !cursor.rest.is_empty() {
        return Err(PreambleError::Malformed("trailing bytes after the ADUs"));
    }
    validate(&adus)?;
    Ok(Script { id, mode, window, adus })
}

struct Cursor<'a> {
    rest: &'a [u8],
}

impl Cursor<'_> {
    fn byte(&mut self) -> Result<u8, PreambleError> {
        let (&first, rest) = self
            .rest
            .split_first()
            .ok_or(PreambleError::Malformed("truncated body"))?;
        self.rest = rest;
        Ok(first)
    }

    fn varint(&mut self) -> Result<u64, PreambleError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(PreambleError::Malformed("varint overflows 64 bits"));
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(PreambleError::Malformed("varint longer than 10 bytes"))
    }

    fn u32(&mut self) -> Result<u32, PreambleError> {
        u32::try_from(self.varint()?).map_err(|_| PreambleError::Malformed("window exceeds u32"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adu(side: Side, send: u64, recv: u64, bytes: u64) -> Adu {
        Adu {
            side,
            send_wait_us: send,
            recv_wait_us: recv,
            bytes,
        }
    }

    #[test]
    fn round_trip() {
        let script = Script {
            id: 300_000,
            mode: Mode::Sequential,
            window: Some(PerSide {
                initiator: 65_535,
                acceptor: 1 << 20,
            }),
            adus: vec![
                adu(Side::Initiator, 0, 0, 300),
                adu(Side::Acceptor, 0, 2_000, 1 << 40),
                adu(Side::Initiator, u64::MAX, 0, 0),
                adu(Side::Acceptor, 0, 0, 0),
            ],
        };
        let encoded = encode(&script);
        assert_eq!(&encoded[..3], b"XR\x01");
        assert_eq!(decode_body(&encoded[HEADER..]).expect("decodes"), script);
    }

    #[test]
    fn refuses_truncation_and_garbage() {
        let script = Script {
            id: 1,
            mode: Mode::Concurrent,
            window: None,
            adus: vec![adu(Side::Initiator, 5, 0, 10), adu(Side::Acceptor, 0, 0, 20)],
        };
        let encoded = encode(&script);
        for cut in HEADER..encoded.len() {
            assert!(decode_body(&encoded[HEADER..cut]).is_err(), "cut at {cut}");
        }
        let mut trailing = encoded[HEADER..].to_vec();
        trailing.push(0);
        assert!(decode_body(&trailing).is_err());
        assert!(decode_body(&[0xff; 12]).is_err());
    }

    #[test]
    fn refuses_data_after_fin() {
        let adus = [adu(Side::Acceptor, 0, 0, 0), adu(Side::Acceptor, 0, 0, 1)];
        assert_eq!(
            validate(&adus),
            Err(ScriptError::AfterFin {
                index: 1,
                side: Side::Acceptor
            })
        );
    }
}
