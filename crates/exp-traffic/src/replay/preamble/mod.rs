//! The preamble: the first bytes the initiator sends on every connection,
//! carrying the script both sides execute, so an acceptor (in-process or an
//! `expc serve` on another host) needs no copy of the trace.
//!
//! Layout (version 1, unsigned): `"XR"`, version byte, body length (u32, big
//! endian), then the body: connection id (varint), mode byte (0 sequential,
//! 1 concurrent), window flag byte (0 none, 1 followed by the initiator's and
//! the acceptor's window as varints), ADU count (varint), and per ADU a side
//! byte (0 initiator, 1 acceptor) and `send_wait_us`, `recv_wait_us`,
//! `bytes` as varints. Varints are LEB128. Both sides' sizes travel, so the
//! acceptor knows what it should receive and can check it. A typical
//! connection's preamble is a few dozen bytes.
//!
//! Version 2 is signed: the body starts with the session nonce (16 bytes)
//! and a sequence number (varint) before the version 1 body, and an
//! HMAC-SHA256 tag of header and body (32 bytes) follows it (see
//! [`auth`](super::auth) for sessions). An acceptor with a secret reads
//! only version 2; one without reads only version 1.

use tokio::io::{AsyncRead, AsyncReadExt};

use super::auth::{ClientSession, AUTH_VERSION, HELLO_MAGIC, NONCE_LEN, TAG_LEN};
use crate::cvec::{Adu, Connection, Mode, PerSide, Side};

const MAGIC: [u8; 2] = *b"XR";
/// The unsigned preamble format version this build writes and reads.
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
    #[error("preamble version {0} is not supported (this build reads {VERSION} and {AUTH_VERSION})")]
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

/// Encodes `script` as a complete unsigned preamble (header and body).
pub fn encode(script: &Script) -> Vec<u8> {
    let body = encode_body(script, Vec::with_capacity(16 + script.adus.len() * 6));
    let mut out = header(VERSION, body.len());
    out.extend_from_slice(&body);
    out
}

/// Encodes `script` as a preamble signed for `session` (its next sequence
/// number): header, body, tag.
pub fn encode_signed(script: &Script, session: &ClientSession) -> Vec<u8> {
    let mut prefix = Vec::with_capacity(NONCE_LEN + 26 + script.adus.len() * 6);
    prefix.extend_from_slice(session.nonce());
    put_varint(&mut prefix, session.next_sequence());
    let body = encode_body(script, prefix);
    let mut out = header(AUTH_VERSION, body.len());
    out.extend_from_slice(&body);
    let tag = session.secret().tag(&[&out]);
    out.extend_from_slice(&tag);
    out
}

fn header(version: u8, body_len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body_len + TAG_LEN);
    out.extend_from_slice(&MAGIC);
    out.push(version);
    out.extend_from_slice(&u32::try_from(body_len).unwrap_or(u32::MAX).to_be_bytes());
    out
}

/// Appends the version 1 body of `script` to `body`.
fn encode_body(script: &Script, mut body: Vec<u8>) -> Vec<u8> {
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
    body
}

/// The first message on an accepted connection.
#[derive(Debug)]
pub(crate) enum Message {
    /// A session request: its 3 leading bytes, client nonce and tag.
    Hello {
        head: [u8; 3],
        client_nonce: [u8; NONCE_LEN],
        tag: [u8; TAG_LEN],
    },
    /// An unsigned (version 1) preamble.
    Plain(Script),
    /// A signed preamble: the tag covers `signed` (header and body).
    Signed {
        script: Script,
        nonce: [u8; NONCE_LEN],
        sequence: u64,
        signed: Vec<u8>,
        tag: [u8; TAG_LEN],
    },
}

/// The 3 leading bytes of a message: magic and version.
pub(crate) async fn read_head<R: AsyncRead + Unpin>(reader: &mut R) -> Result<[u8; 3], PreambleError> {
    let mut head = [0u8; 3];
    reader.read_exact(&mut head).await?;
    match ([head[0], head[1]], head[2]) {
        (MAGIC, VERSION | AUTH_VERSION) | (HELLO_MAGIC, AUTH_VERSION) => Ok(head),
        (MAGIC | HELLO_MAGIC, version) => Err(PreambleError::Version(version)),
        (magic, _) => Err(PreambleError::Magic(magic)),
    }
}

/// The rest of the message `head` (from [`read_head`]) starts. Bodies
/// longer than `max_body` are refused before anything is allocated, and
/// memory grows only as bytes arrive.
pub(crate) async fn read_rest<R: AsyncRead + Unpin>(
    reader: &mut R,
    head: [u8; 3],
    max_body: u32,
) -> Result<Message, PreambleError> {
    if [head[0], head[1]] == HELLO_MAGIC {
        let mut client_nonce = [0u8; NONCE_LEN];
        let mut tag = [0u8; TAG_LEN];
        reader.read_exact(&mut client_nonce).await?;
        reader.read_exact(&mut tag).await?;
        return Ok(Message::Hello {
            head,
            client_nonce,
            tag,
        });
    }
    let mut length = [0u8; 4];
    reader.read_exact(&mut length).await?;
    let len = u32::from_be_bytes(length);
    if len > max_body.min(MAX_BODY) {
        return Err(PreambleError::TooLong(len));
    }
    let mut signed = Vec::with_capacity(HEADER + (len as usize).min(4096));
    signed.extend_from_slice(&head);
    signed.extend_from_slice(&length);
    let read = reader.take(u64::from(len)).read_to_end(&mut signed).await?;
    if read < len as usize {
        return Err(PreambleError::Malformed("truncated body"));
    }
    if head[2] == VERSION {
        return Ok(Message::Plain(decode_body(&signed[HEADER..])?));
    }
    let mut tag = [0u8; TAG_LEN];
    reader.read_exact(&mut tag).await?;
    let mut cursor = Cursor {
        rest: &signed[HEADER..],
    };
    let mut nonce = [0u8; NONCE_LEN];
    for byte in &mut nonce {
        *byte = cursor.byte()?;
    }
    let sequence = cursor.varint()?;
    let script = decode_body(cursor.rest)?;
    Ok(Message::Signed {
        script,
        nonce,
        sequence,
        signed,
        tag,
    })
}

/// Reads and validates one unsigned preamble from `reader`.
pub async fn read<R: AsyncRead + Unpin>(reader: &mut R) -> Result<Script, PreambleError> {
    let head = read_head(reader).await?;
    match read_rest(reader, head, MAX_BODY).await? {
        Message::Plain(script) => Ok(script),
        _ => Err(PreambleError::Version(head[2])),
    }
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
mod tests;
