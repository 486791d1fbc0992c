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

#[tokio::test]
async fn signed_preambles_carry_session_sequence_and_a_checking_tag() {
    let secret = crate::replay::Secret::from_text("a secret of sufficient length").expect("long");
    let session = ClientSession::new(secret.clone(), [9; NONCE_LEN]);
    let script = Script {
        id: 4,
        mode: Mode::Sequential,
        window: None,
        adus: vec![adu(Side::Initiator, 0, 0, 10), adu(Side::Acceptor, 0, 0, 1 << 30)],
    };
    let _first = encode_signed(&script, &session);
    let encoded = encode_signed(&script, &session);
    let mut reader = encoded.as_slice();
    let head = read_head(&mut reader).await.expect("head");
    assert_eq!(&head, b"XR\x02");
    let Message::Signed {
        script: decoded,
        nonce,
        sequence,
        signed,
        tag,
    } = read_rest(&mut reader, head, MAX_BODY).await.expect("body")
    else {
        panic!("a signed preamble")
    };
    assert!(reader.is_empty(), "the tag ends the preamble");
    assert_eq!((decoded, nonce, sequence), (script.clone(), [9; NONCE_LEN], 1));
    assert!(secret.verify(&[&signed], &tag));
    let mut tampered = signed.clone();
    *tampered.last_mut().expect("bytes") ^= 1;
    assert!(!secret.verify(&[&tampered], &tag), "a changed script fails the tag");
    // Unsigned readers refuse it; a short limit refuses before reading.
    assert!(read(&mut encoded.as_slice()).await.is_err());
    let mut reader = encoded.as_slice();
    let head = read_head(&mut reader).await.expect("head");
    assert!(matches!(
        read_rest(&mut reader, head, 8).await,
        Err(PreambleError::TooLong(_))
    ));
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
