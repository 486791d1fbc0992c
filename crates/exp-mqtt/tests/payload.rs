//! Payload sizes, header round trips, determinism and size errors.
#![allow(clippy::unwrap_used)]

use exp_mqtt::payload::{MAX_PAYLOAD_BYTES, RAW_HEADER_BYTES};
use exp_mqtt::{parse_header, Header, MqttError, PayloadGenerator};
use exp_plan::{Dist, DistValue, Payload, Unit};

const ALL: [&str; 10] = [
    "temperature",
    "humidity",
    "vibration",
    "acceleration",
    "power",
    "pressure",
    "voltage",
    "current",
    "co2",
    "light",
];

fn json(size_bytes: u64, fields: &[&str]) -> Payload {
    Payload::Json {
        size_bytes,
        fields: fields.iter().map(|f| f.to_string()).collect(),
    }
}

fn raw(dist: Dist) -> Payload {
    Payload::Raw {
        size: DistValue {
            unit: Unit::Bytes,
            dist,
        },
    }
}

/// Extremes of every header field, plus ordinary values.
const HEADERS: [(u32, u64, u64); 4] = [
    (0, 0, 0),
    (7, 42, 1_700_000_000_123_456_789),
    (u32::MAX, u64::MAX, u64::MAX),
    (123, 1, 99),
];

#[test]
fn json_sizes_are_exact_for_many_sizes_and_fields() {
    let field_sets: [&[&str]; 4] = [&[], &["temperature"], &["humidity", "co2", "light"], &ALL];
    let mut out = Vec::new();
    for fields in field_sets {
        let minimum =
            PayloadGenerator::json_min_size(&fields.iter().map(|f| f.to_string()).collect::<Vec<_>>()).unwrap();
        for size in [minimum, minimum + 1, minimum + 7, 256, 300, 1024, 2048, 65_536] {
            if size < minimum {
                continue;
            }
            let mut generator = PayloadGenerator::new(&json(size, fields), 9).unwrap();
            for (i, (device, seq, ts)) in HEADERS.iter().cycle().take(200).enumerate() {
                generator.build(*device, *seq + i as u64 % 2, *ts, &mut out);
                assert_eq!(out.len() as u64, size, "fields {fields:?}");
                let text = std::str::from_utf8(&out).unwrap();
                assert!(text.ends_with("\"}"), "{text}");
                for f in fields {
                    assert!(text.contains(&format!(",\"{f}\":")), "{text}");
                }
                let header = parse_header(&out).unwrap();
                assert_eq!(
                    header,
                    Header {
                        device: *device,
                        seq: *seq + i as u64 % 2,
                        sent_unix_ns: *ts
                    }
                );
            }
        }
    }
}

#[test]
fn json_looks_like_a_sensor_record() {
    let mut generator = PayloadGenerator::new(&json(256, &["temperature", "humidity"]), 1).unwrap();
    let mut out = Vec::new();
    generator.build(7, 42, 1_700_000_000_000_000_000, &mut out);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("{\"device\":7,\"seq\":42,\"ts\":1700000000000000000,\"temperature\":"),
        "{text}"
    );
    assert!(text.contains(",\"pad\":\"xxx"), "{text}");
    // Two decimals for temperature, one for humidity.
    let temperature = text
        .split("\"temperature\":")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    assert_eq!(temperature.split('.').nth(1).unwrap().len(), 2, "{temperature}");
    let value: f64 = temperature.parse().unwrap();
    assert!((0.0..45.0).contains(&value), "{value}");
}

#[test]
fn too_small_names_the_minimum() {
    // Worst case: `{"device":` + 10 + `,"seq":` + 20 + `,"ts":` + 20 + `,"pad":""}` = 83 bytes.
    match PayloadGenerator::new(&json(82, &[]), 1) {
        Err(MqttError::PayloadTooSmall {
            size_bytes: 82,
            minimum: 83,
        }) => {}
        other => panic!("{other:?}"),
    }
    assert!(PayloadGenerator::new(&json(83, &[]), 1).is_ok());
    let err = PayloadGenerator::new(&json(100, &["temperature"]), 1).err().unwrap();
    let minimum = match err {
        MqttError::PayloadTooSmall { minimum, .. } => minimum,
        other => panic!("{other:?}"),
    };
    // `,"temperature":` (15) + `-40.00` or `125.00` (6).
    assert_eq!(minimum, 83 + 15 + 6);
    assert!(err_text(100, &["temperature"]).contains("minimum is 104 bytes"));
    assert!(err_text(262, &ALL).contains("minimum is 263 bytes"));
}

fn err_text(size: u64, fields: &[&str]) -> String {
    PayloadGenerator::new(&json(size, fields), 1).err().unwrap().to_string()
}

#[test]
fn unknown_and_duplicate_fields_are_errors() {
    assert!(matches!(
        PayloadGenerator::new(&json(256, &["temperature", "wind"]), 1),
        Err(MqttError::UnknownPayloadField { ref name, .. }) if name == "wind"
    ));
    assert!(matches!(
        PayloadGenerator::new(&json(256, &["co2", "co2"]), 1),
        Err(MqttError::DuplicatePayloadField { .. })
    ));
    assert!(matches!(
        PayloadGenerator::new(&json(MAX_PAYLOAD_BYTES + 1, &[]), 1),
        Err(MqttError::PayloadTooLarge { .. })
    ));
}

#[test]
fn same_seed_same_payloads() {
    let build_all = |seed| {
        // All ten fields at their widest need 263 bytes.
        let mut generator = PayloadGenerator::new(&json(263, &ALL), seed).unwrap();
        let mut raw_gen = PayloadGenerator::new(&raw(Dist::Uniform { min: 30.0, max: 500.0 }), seed).unwrap();
        let mut all = Vec::new();
        let mut out = Vec::new();
        for seq in 0..100 {
            generator.build(3, seq, 1000 + seq, &mut out);
            all.push(out.clone());
            raw_gen.build(3, seq, 1000 + seq, &mut out);
            all.push(out.clone());
        }
        all
    };
    assert_eq!(build_all(5), build_all(5));
    assert_ne!(build_all(5), build_all(6));
}

#[test]
fn raw_sizes_follow_the_distribution_and_clamp() {
    let mut generator = PayloadGenerator::new(&raw(Dist::Uniform { min: 0.0, max: 200.0 }), 3).unwrap();
    let mut out = Vec::new();
    let mut sizes = Vec::new();
    for (i, (device, seq, ts)) in HEADERS.iter().cycle().take(4000).enumerate() {
        generator.build(*device, *seq, *ts, &mut out);
        assert!(out.len() >= RAW_HEADER_BYTES && out.len() <= 200, "{i}: {}", out.len());
        assert_eq!(
            parse_header(&out),
            Some(Header {
                device: *device,
                seq: *seq,
                sent_unix_ns: *ts
            })
        );
        sizes.push(out.len());
    }
    // Draws below 24 are raised to 24 (about 12 % of them here).
    let at_min = sizes.iter().filter(|&&s| s == RAW_HEADER_BYTES).count();
    assert!((350..600).contains(&at_min), "{at_min}");
    let mut fixed = PayloadGenerator::new(&raw(Dist::Constant { value: 100.0 }), 3).unwrap();
    fixed.build(1, 2, 3, &mut out);
    assert_eq!(out.len(), 100);
    // The bytes after the header are random, not zero.
    assert!(out[RAW_HEADER_BYTES..].iter().filter(|&&b| b == 0).count() < 10);
    assert!(matches!(
        PayloadGenerator::new(&raw(Dist::Exponential { mean: -1.0 }), 1),
        Err(MqttError::InvalidDistribution { .. })
    ));
}

#[test]
fn parse_header_rejects_garbage() {
    assert_eq!(parse_header(b""), None);
    assert_eq!(parse_header(b"{\"device\":1,\"seq\":2,\"ts\":"), None);
    assert_eq!(parse_header(b"{\"device\":1,\"seq\":2,\"ts\":3"), None);
    assert_eq!(parse_header(b"{\"device\":99999999999,\"seq\":2,\"ts\":3}"), None);
    assert_eq!(
        parse_header(b"{\"device\":1,\"seq\":2,\"ts\":3}").map(|h| h.sent_unix_ns),
        Some(3)
    );
    // Raw needs 24 bytes with a zero reserved word.
    assert_eq!(parse_header(&[0u8; 23]), None);
    let mut bytes = [0u8; 24];
    assert!(parse_header(&bytes).is_some());
    bytes[5] = 1;
    assert_eq!(parse_header(&bytes), None);
    // A raw payload whose device id starts with `{` is still raw.
    let mut generator = PayloadGenerator::new(&raw(Dist::Constant { value: 40.0 }), 1).unwrap();
    let mut out = Vec::new();
    generator.build(u32::from_le_bytes(*b"{\"de"), 5, 6, &mut out);
    assert_eq!(parse_header(&out).map(|h| h.seq), Some(5));
}
