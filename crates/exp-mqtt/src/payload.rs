//! Message payloads: JSON sensor records padded to an exact size, or raw
//! random bytes behind a binary header. Both carry the device id, sequence
//! number and send timestamp, which [`parse_header`] reads back so the
//! subscriber can compute delivery latency.
//!
//! JSON layout (header fields first and in this order, so parsing is a
//! prefix scan, not a JSON parse):
//!
//! ```text
//! {"device":7,"seq":42,"ts":1700000000000000000,"temperature":21.37,…,"pad":"xxxx"}
//! ```
//!
//! Raw layout, little endian: `device u32 | reserved u32 = 0 | seq u64 | ts u64`
//! (24 bytes), then random bytes. The reserved word is always zero, which is
//! how [`parse_header`] tells the formats apart: a JSON payload has `vice`
//! in bytes 4..8.
//!
//! [`PayloadGenerator::build`] writes into a caller-owned buffer and formats
//! numbers by hand, so after the buffer has grown once no message allocates.

use exp_plan::{DistValue, Payload};
use exp_stats::{sampler::standard_normal, Rng, Sampler};

use crate::MqttError;

/// Size of the raw header; raw payloads are never smaller.
pub const RAW_HEADER_BYTES: usize = 24;
/// The largest payload an MQTT packet can carry (the maximum remaining length,
/// 268,435,455 bytes, bounds the whole packet). Raw sizes are clamped to it so a
/// heavy-tailed size distribution cannot ask for gigabytes.
pub const MAX_PAYLOAD_BYTES: u64 = 268_435_455;

const JSON_PREFIX: &[u8] = b"{\"device\":";
const JSON_SEQ: &[u8] = b",\"seq\":";
const JSON_TS: &[u8] = b",\"ts\":";
const JSON_PAD: &[u8] = b",\"pad\":\"";
const JSON_END: &[u8] = b"\"}";
/// Decimal digits of `u32::MAX` and `u64::MAX`: the worst case for the header.
const U32_DIGITS: usize = 10;
const U64_DIGITS: usize = 20;

/// The identifying fields every payload carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub device: u32,
    pub seq: u64,
    /// When the device sent the message, in ns since the Unix epoch.
    pub sent_unix_ns: u64,
}

/// How one sensor reading is drawn: `mean + sd · Z` (or `mean · e^(sd · Z)`
/// when log-normal), clamped to the sensor's physical range and printed with a
/// fixed number of decimals. The clamp also bounds the printed width, which
/// the worst-case size check relies on.
#[derive(Debug, Clone, Copy)]
struct Sensor {
    name: &'static str,
    mean: f64,
    sd: f64,
    log_normal: bool,
    min: f64,
    max: f64,
    decimals: u32,
}

const fn sensor(name: &'static str, mean: f64, sd: f64, min: f64, max: f64, decimals: u32) -> Sensor {
    Sensor {
        name,
        mean,
        sd,
        log_normal: false,
        min,
        max,
        decimals,
    }
}

/// Typical indoor/industrial values; the ranges are those of common sensors.
const SENSORS: &[Sensor] = &[
    sensor("temperature", 22.0, 3.0, -40.0, 125.0, 2), // °C
    sensor("humidity", 45.0, 10.0, 0.0, 100.0, 1),     // % RH
    Sensor {
        log_normal: true,
        ..sensor("vibration", 0.8, 0.5, 0.0, 100.0, 3)
    }, // mm/s RMS
    sensor("acceleration", 9.81, 0.05, -160.0, 160.0, 3), // m/s², ±16 g
    sensor("power", 150.0, 30.0, 0.0, 10_000.0, 1),    // W
    sensor("pressure", 1013.25, 8.0, 300.0, 1100.0, 2), // hPa
    sensor("voltage", 230.0, 2.0, 0.0, 400.0, 2),      // V
    sensor("current", 0.65, 0.13, 0.0, 100.0, 3),      // A
    sensor("co2", 600.0, 150.0, 400.0, 5000.0, 0),     // ppm
    Sensor {
        log_normal: true,
        ..sensor("light", 300.0, 1.0, 0.0, 100_000.0, 1)
    }, // lux
];

const KNOWN_FIELDS: &str =
    "temperature, humidity, vibration, acceleration, power, pressure, voltage, current, co2, light";

impl Sensor {
    fn draw(&self, rng: &mut Rng) -> f64 {
        let z = standard_normal(rng);
        let x = if self.log_normal {
            self.mean * (self.sd * z).exp()
        } else {
            self.mean + self.sd * z
        };
        x.clamp(self.min, self.max)
    }

    /// The widest value this sensor can print (its range's ends are the widest).
    fn max_width(&self) -> usize {
        let mut buf = Vec::new();
        write_fixed(&mut buf, self.min, self.decimals);
        let a = buf.len();
        buf.clear();
        write_fixed(&mut buf, self.max, self.decimals);
        a.max(buf.len())
    }
}

#[derive(Debug, Clone)]
enum Format {
    Json { size: usize, sensors: Vec<Sensor> },
    Raw { size: Sampler },
}

/// Writes payloads for one fleet (or one device); deterministic for a seed.
#[derive(Debug, Clone)]
pub struct PayloadGenerator {
    format: Format,
    rng: Rng,
}

impl PayloadGenerator {
    /// Validates the plan's payload: JSON field names must be known and
    /// distinct, and `size_bytes` must hold the header and every field at
    /// their widest; raw sizes must come from a valid distribution.
    pub fn new(payload: &Payload, seed: u64) -> Result<Self, MqttError> {
        let rng = Rng::new(seed).fork("payload");
        let format = match payload {
            Payload::Json { size_bytes, fields } => {
                let mut sensors: Vec<Sensor> = Vec::with_capacity(fields.len());
                for name in fields {
                    let Some(s) = SENSORS.iter().find(|s| s.name == name) else {
                        return Err(MqttError::UnknownPayloadField {
                            name: name.clone(),
                            known: KNOWN_FIELDS,
                        });
                    };
                    if sensors.iter().any(|t| t.name == s.name) {
                        return Err(MqttError::DuplicatePayloadField { name: name.clone() });
                    }
                    sensors.push(*s);
                }
                let minimum = json_min_size(&sensors) as u64;
                if *size_bytes < minimum {
                    return Err(MqttError::PayloadTooSmall {
                        size_bytes: *size_bytes,
                        minimum,
                    });
                }
                // Above the MQTT maximum the broker would refuse it anyway; the cap keeps `as usize` exact.
                if *size_bytes > MAX_PAYLOAD_BYTES {
                    return Err(MqttError::PayloadTooLarge {
                        size_bytes: *size_bytes,
                        maximum: MAX_PAYLOAD_BYTES,
                    });
                }
                Format::Json {
                    size: *size_bytes as usize,
                    sensors,
                }
            }
            Payload::Raw { size } => Format::Raw {
                size: raw_sampler(size)?,
            },
        };
        Ok(PayloadGenerator { format, rng })
    }

    /// The share of payloads longer than `limit` bytes: 0 or 1 for JSON,
    /// from 1,000 seeded draws of the size distribution for raw payloads
    /// (the same clamping as [`PayloadGenerator::build`]). Preflight uses it
    /// to refuse payloads the client's `max_packet_bytes` would drop.
    pub fn share_longer_than(&self, limit: u64) -> f64 {
        match &self.format {
            Format::Json { size, .. } => f64::from(u8::from(*size as u64 > limit)),
            Format::Raw { size } => {
                const DRAWS: u32 = 1000;
                let mut rng = Rng::new(0).fork("payload sizes");
                let over = (0..DRAWS)
                    .filter(|_| {
                        size.sample_u64(&mut rng)
                            .clamp(RAW_HEADER_BYTES as u64, MAX_PAYLOAD_BYTES)
                            > limit
                    })
                    .count();
                over as f64 / f64::from(DRAWS)
            }
        }
    }

    /// The smallest `size_bytes` a JSON payload with these fields accepts.
    pub fn json_min_size(fields: &[String]) -> Result<u64, MqttError> {
        let mut sensors = Vec::new();
        for name in fields {
            match SENSORS.iter().find(|s| s.name == name) {
                Some(s) => sensors.push(*s),
                None => {
                    return Err(MqttError::UnknownPayloadField {
                        name: name.clone(),
                        known: KNOWN_FIELDS,
                    })
                }
            }
        }
        Ok(json_min_size(&sensors) as u64)
    }

    /// Replaces `out`'s contents with one payload. JSON payloads are exactly
    /// `size_bytes` long; raw ones `max(24, min(draw, MAX_PAYLOAD_BYTES))`.
    pub fn build(&mut self, device: u32, seq: u64, sent_unix_ns: u64, out: &mut Vec<u8>) {
        out.clear();
        match &self.format {
            Format::Json { size, sensors } => {
                out.reserve(*size);
                out.extend_from_slice(JSON_PREFIX);
                write_u64(out, u64::from(device));
                out.extend_from_slice(JSON_SEQ);
                write_u64(out, seq);
                out.extend_from_slice(JSON_TS);
                write_u64(out, sent_unix_ns);
                for s in sensors {
                    out.push(b',');
                    out.push(b'"');
                    out.extend_from_slice(s.name.as_bytes());
                    out.extend_from_slice(b"\":");
                    write_fixed(out, s.draw(&mut self.rng), s.decimals);
                }
                out.extend_from_slice(JSON_PAD);
                // `new` checked the worst case, so this never saturates.
                let pad = size.saturating_sub(out.len() + JSON_END.len());
                out.resize(out.len() + pad, b'x');
                out.extend_from_slice(JSON_END);
            }
            Format::Raw { size } => {
                let n = size
                    .sample_u64(&mut self.rng)
                    .clamp(RAW_HEADER_BYTES as u64, MAX_PAYLOAD_BYTES) as usize;
                out.extend_from_slice(&device.to_le_bytes());
                out.extend_from_slice(&0u32.to_le_bytes());
                out.extend_from_slice(&seq.to_le_bytes());
                out.extend_from_slice(&sent_unix_ns.to_le_bytes());
                out.resize(n, 0);
                for chunk in out[RAW_HEADER_BYTES..].chunks_mut(8) {
                    let bytes = self.rng.next_u64().to_le_bytes();
                    chunk.copy_from_slice(&bytes[..chunk.len()]);
                }
            }
        }
    }
}

fn raw_sampler(size: &DistValue) -> Result<Sampler, MqttError> {
    Sampler::new(size).map_err(|source| MqttError::InvalidDistribution {
        what: "payload size",
        source,
    })
}

/// Header at its widest (u32::MAX, u64::MAX, u64::MAX), every field at its
/// widest, and an empty pad.
fn json_min_size(sensors: &[Sensor]) -> usize {
    let header = JSON_PREFIX.len() + U32_DIGITS + JSON_SEQ.len() + U64_DIGITS + JSON_TS.len() + U64_DIGITS;
    // `,"name":value`
    let fields: usize = sensors.iter().map(|s| 4 + s.name.len() + s.max_width()).sum();
    header + fields + JSON_PAD.len() + JSON_END.len()
}

/// Decimal digits of `n` without allocating (at most 20).
fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; U64_DIGITS];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// `x` with exactly `decimals` digits after the point, rounded half away from
/// zero. Sensor values are clamped to ranges far below 2⁵³ / 10^decimals, so
/// the scaled integer is exact.
fn write_fixed(out: &mut Vec<u8>, x: f64, decimals: u32) {
    let scale = 10u64.pow(decimals);
    let scaled = (x.abs() * scale as f64).round() as u64;
    // No "-0.00": the sign only when the printed value is non-zero.
    if x < 0.0 && scaled != 0 {
        out.push(b'-');
    }
    write_u64(out, scaled / scale);
    if decimals > 0 {
        out.push(b'.');
        let mut frac = scaled % scale;
        let mut digits = [b'0'; 8];
        for d in digits[..decimals as usize].iter_mut().rev() {
            *d = b'0' + (frac % 10) as u8;
            frac /= 10;
        }
        out.extend_from_slice(&digits[..decimals as usize]);
    }
}

/// Reads device, sequence number and send time back from a payload of either
/// format; `None` if it is neither. The JSON path only scans the fixed prefix.
pub fn parse_header(payload: &[u8]) -> Option<Header> {
    if let Some(rest) = payload.strip_prefix(JSON_PREFIX) {
        let (device, rest) = parse_digits(rest)?;
        let rest = rest.strip_prefix(JSON_SEQ)?;
        let (seq, rest) = parse_digits(rest)?;
        let rest = rest.strip_prefix(JSON_TS)?;
        let (sent_unix_ns, rest) = parse_digits(rest)?;
        // The timestamp must end at a delimiter, or it was truncated.
        if !matches!(rest.first(), Some(b',' | b'}')) {
            return None;
        }
        return Some(Header {
            device: u32::try_from(device).ok()?,
            seq,
            sent_unix_ns,
        });
    }
    let header: &[u8; RAW_HEADER_BYTES] = payload.get(..RAW_HEADER_BYTES)?.try_into().ok()?;
    let word = |range: std::ops::Range<usize>| -> Option<u64> {
        let mut b = [0u8; 8];
        b[..range.len()].copy_from_slice(header.get(range)?);
        Some(u64::from_le_bytes(b))
    };
    if word(4..8)? != 0 {
        return None;
    }
    Some(Header {
        device: u32::try_from(word(0..4)?).ok()?,
        seq: word(8..16)?,
        sent_unix_ns: word(16..24)?,
    })
}

/// A non-empty run of ASCII digits that fits a u64, and what follows it.
fn parse_digits(s: &[u8]) -> Option<(u64, &[u8])> {
    let len = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if len == 0 || len > U64_DIGITS {
        return None;
    }
    let mut n: u64 = 0;
    for &b in &s[..len] {
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some((n, &s[len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(x: f64, decimals: u32) -> String {
        let mut out = Vec::new();
        write_fixed(&mut out, x, decimals);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn fixed_point_formatting() {
        assert_eq!(fixed(21.374, 2), "21.37");
        assert_eq!(fixed(21.375, 2), "21.38");
        assert_eq!(fixed(-0.001, 2), "0.00");
        assert_eq!(fixed(-40.0, 2), "-40.00");
        assert_eq!(fixed(0.05, 3), "0.050");
        assert_eq!(fixed(599.6, 0), "600");
        let mut out = Vec::new();
        write_u64(&mut out, u64::MAX);
        assert_eq!(out, u64::MAX.to_string().as_bytes());
    }

    #[test]
    fn sensor_widths_bound_every_draw() {
        let mut rng = Rng::new(1);
        for s in SENSORS {
            let mut out = Vec::new();
            for _ in 0..10_000 {
                out.clear();
                write_fixed(&mut out, s.draw(&mut rng), s.decimals);
                assert!(
                    out.len() <= s.max_width(),
                    "{}: {}",
                    s.name,
                    String::from_utf8_lossy(&out)
                );
            }
        }
    }
}
