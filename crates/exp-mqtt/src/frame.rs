//! The MQTT 3.1.1 frames the device client and the embedded broker encode
//! by hand (the hot ones); everything else goes through rumqttc's codec.

/// First bytes of the four-byte acknowledgements.
pub(crate) const PUBACK: u8 = 0x40;
pub(crate) const PUBREC: u8 = 0x50;
pub(crate) const PUBREL: u8 = 0x62;
pub(crate) const PUBCOMP: u8 = 0x70;
pub(crate) const UNSUBACK: u8 = 0xB0;

/// A packet of `kind` whose body is its packet id.
pub(crate) fn ack(kind: u8, pkid: u16) -> [u8; 4] {
    let [hi, lo] = pkid.to_be_bytes();
    [kind, 2, hi, lo]
}

/// MQTT's variable-length "remaining length": 7 bits a byte, at most 4
/// bytes; `None` above 268,435,455 (128⁴ − 1).
pub(crate) fn remaining_length(mut n: usize) -> Option<([u8; 4], usize)> {
    if n > 268_435_455 {
        return None;
    }
    let (mut out, mut len) = ([0; 4], 0);
    loop {
        let byte = (n % 128) as u8;
        n /= 128;
        out[len] = if n == 0 { byte } else { byte | 0x80 };
        len += 1;
        if n == 0 {
            return Some((out, len));
        }
    }
}
