//! The body of one connection vector, line by line, in each format's
//! grammar, mapped onto [`Adu`]s.
//!
//! The mapping of the original format is the published converter's
//! (`cvec-orig2alt`), so an original file and its converted alternate file
//! parse to the same [`Connection`](super::Connection):
//!
//! * SEQ: a `t` line is held until the next `>`/`<`. If that unit is sent by
//!   the same side as the unit before it, the `t` is its `send_wait` (wait
//!   after its own previous send); otherwise (a `t` between `>` and `<` is
//!   the acceptor's server time, between `<` and `>` the initiator's think
//!   time, and a `t` before the first unit) it is its `recv_wait`. A unit
//!   without a `t` before it has both waits 0. A trailing `t` becomes a FIN
//!   (0 bytes) sent by the side of the last unit, `send_wait` = the `t`.
//! * CONC: `t>`/`t<` is held until that side's next `c>`/`c<` and becomes its
//!   `send_wait`; `recv_wait` is always 0. A trailing `t>`/`t<` becomes that
//!   side's FIN; FINs are appended after all data units, initiator first.
//! * In both, `t 0` means 1 µs: the converter's rule, since a 0 would be
//!   indistinguishable from "no `t` line".
//!
//! A SEQ/CONC connection without a trailing `t` has no FIN unit (Tmix adds
//! its default FIN when it replays such a connection).

use super::{Adu, Side};

/// A line that breaks the format: its number, text and what was expected.
#[derive(Debug)]
pub(crate) struct Bad {
    pub line: usize,
    pub text: String,
    pub expected: String,
}

/// One parsed body line: its number, trimmed text and whitespace tokens.
pub(crate) struct Line<'a> {
    pub number: usize,
    pub text: &'a str,
    pub tokens: Vec<&'a str>,
}

impl Line<'_> {
    pub fn bad(&self, expected: impl Into<String>) -> Bad {
        Bad {
            line: self.number,
            text: self.text.to_string(),
            expected: expected.into(),
        }
    }

    /// The line's single unsigned integer argument (`> 120`, `t 5`).
    pub fn one_uint(&self, expected: &str) -> Result<u64, Bad> {
        match self.tokens.as_slice() {
            [_, value] => value.parse().map_err(|_| self.bad(expected)),
            _ => Err(self.bad(expected)),
        }
    }
}

/// A `t` line waiting for the unit it applies to (value already ≥ 1).
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    wait_us: u64,
    line: usize,
    text: String,
}

fn pending(line: &Line<'_>, value: u64) -> Pending {
    Pending {
        wait_us: value.max(1),
        line: line.number,
        text: line.text.to_string(),
    }
}

fn side_index(side: Side) -> usize {
    match side {
        Side::Initiator => 0,
        Side::Acceptor => 1,
    }
}

/// The state of a body being read, per format and mode.
#[derive(Debug)]
pub(crate) enum Body {
    Seq {
        last: Option<Side>,
        pending: Option<Pending>,
    },
    Conc {
        pending: [Option<Pending>; 2],
    },
    Alternate {
        fin_sent: [bool; 2],
    },
}

const SEQ_LINE: &str = "a SEQ body line (`> BYTES`, `< BYTES` or `t USEC`) or a new header";
const CONC_LINE: &str = "a CONC body line (`c> BYTES`, `c< BYTES`, `t> USEC` or `t< USEC`) or a new header";
const ALT_LINE: &str = "a data-unit line `I|A SEND_WAIT RECV_WAIT BYTES` or a new header";

impl Body {
    pub fn seq() -> Body {
        Body::Seq {
            last: None,
            pending: None,
        }
    }

    pub fn conc() -> Body {
        Body::Conc { pending: [None, None] }
    }

    pub fn alternate() -> Body {
        Body::Alternate {
            fin_sent: [false, false],
        }
    }

    /// Whether `keyword` starts a body line of this body's grammar.
    pub fn is_body_keyword(&self, keyword: &str) -> bool {
        match self {
            Body::Seq { .. } => matches!(keyword, ">" | "<" | "t"),
            Body::Conc { .. } => matches!(keyword, "c>" | "c<" | "t>" | "t<"),
            Body::Alternate { .. } => matches!(keyword, "I" | "A"),
        }
    }

    /// What a body line of this grammar looks like, for error messages.
    pub fn expected(&self) -> &'static str {
        match self {
            Body::Seq { .. } => SEQ_LINE,
            Body::Conc { .. } => CONC_LINE,
            Body::Alternate { .. } => ALT_LINE,
        }
    }

    /// Reads one body line, appending the units it completes to `adus`.
    pub fn line(&mut self, line: &Line<'_>, adus: &mut Vec<Adu>) -> Result<(), Bad> {
        let keyword = line.tokens.first().copied().unwrap_or_default();
        match self {
            Body::Seq { last, pending: held } => {
                let side = match keyword {
                    ">" => Side::Initiator,
                    "<" => Side::Acceptor,
                    "t" => {
                        let value = line.one_uint("`t USEC` (one integer, microseconds)")?;
                        if held.is_some() {
                            return Err(line.bad("`>` or `<` after a `t` line (two `t` lines in a row)"));
                        }
                        *held = Some(pending(line, value));
                        return Ok(());
                    }
                    _ => return Err(line.bad(SEQ_LINE)),
                };
                let bytes = data_bytes(line, keyword)?;
                let wait = held.take().map_or(0, |p| p.wait_us);
                let (send_wait_us, recv_wait_us) = if *last == Some(side) { (wait, 0) } else { (0, wait) };
                adus.push(Adu {
                    side,
                    send_wait_us,
                    recv_wait_us,
                    bytes,
                });
                *last = Some(side);
                Ok(())
            }
            Body::Conc { pending: held } => {
                let (side, is_time) = match keyword {
                    "c>" => (Side::Initiator, false),
                    "c<" => (Side::Acceptor, false),
                    "t>" => (Side::Initiator, true),
                    "t<" => (Side::Acceptor, true),
                    _ => return Err(line.bad(CONC_LINE)),
                };
                let slot = &mut held[side_index(side)];
                if is_time {
                    let value = line.one_uint(&format!("`{keyword} USEC` (one integer, microseconds)"))?;
                    if slot.is_some() {
                        let data = if side == Side::Initiator { "c>" } else { "c<" };
                        return Err(line.bad(format!(
                            "`{data}` after a `{keyword}` line (a second `{keyword}` before that side's next `{data}`)"
                        )));
                    }
                    *slot = Some(pending(line, value));
                    return Ok(());
                }
                let bytes = data_bytes(line, keyword)?;
                let wait = slot.take().map_or(0, |p| p.wait_us);
                adus.push(Adu {
                    side,
                    send_wait_us: wait,
                    recv_wait_us: 0,
                    bytes,
                });
                Ok(())
            }
            Body::Alternate { fin_sent } => {
                let side = match keyword {
                    "I" => Side::Initiator,
                    "A" => Side::Acceptor,
                    _ => return Err(line.bad(ALT_LINE)),
                };
                let expected = format!("`{keyword} SEND_WAIT RECV_WAIT BYTES` (three integers)");
                let values = match line.tokens.as_slice() {
                    [_, send, recv, bytes] => [send, recv, bytes].map(|t| t.parse::<u64>().ok()),
                    _ => return Err(line.bad(expected)),
                };
                let [Some(send_wait_us), Some(recv_wait_us), Some(bytes)] = values else {
                    return Err(line.bad(expected));
                };
                let index = side_index(side);
                if fin_sent[index] {
                    return Err(line.bad(format!("no `{keyword}` line after that side's FIN (`{keyword} … 0`)")));
                }
                fin_sent[index] = bytes == 0;
                adus.push(Adu {
                    side,
                    send_wait_us,
                    recv_wait_us,
                    bytes,
                });
                Ok(())
            }
        }
    }

    /// Ends the body: a held trailing `t` becomes a FIN.
    pub fn finish(self, adus: &mut Vec<Adu>) -> Result<(), Bad> {
        match self {
            Body::Seq { last, pending } => {
                let Some(p) = pending else { return Ok(()) };
                let Some(side) = last else {
                    return Err(Bad {
                        line: p.line,
                        text: p.text,
                        expected: "a `>` or `<` line before a trailing `t` (whose FIN it times)".into(),
                    });
                };
                adus.push(fin(side, p.wait_us));
                Ok(())
            }
            Body::Conc { pending: [init, acc] } => {
                for (side, p) in [(Side::Initiator, init), (Side::Acceptor, acc)] {
                    if let Some(p) = p {
                        adus.push(fin(side, p.wait_us));
                    }
                }
                Ok(())
            }
            Body::Alternate { .. } => Ok(()),
        }
    }
}

fn fin(side: Side, send_wait_us: u64) -> Adu {
    Adu {
        side,
        send_wait_us,
        recv_wait_us: 0,
        bytes: 0,
    }
}

/// The byte count of an original-format data line; 0 is refused because the
/// original format writes a FIN as a trailing `t`, not as an empty unit.
fn data_bytes(line: &Line<'_>, keyword: &str) -> Result<u64, Bad> {
    let expected = format!("`{keyword} BYTES` (one integer ≥ 1; a FIN is a trailing `t`)");
    match line.one_uint(&expected)? {
        0 => Err(line.bad(expected)),
        bytes => Ok(bytes),
    }
}
