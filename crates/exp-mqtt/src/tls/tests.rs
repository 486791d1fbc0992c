//! Loading TLS files: what is refused, and how the errors read.
#![allow(clippy::unwrap_used)]

use super::*;

/// A self-signed CA certificate (no key: it never signs anything here), valid until 2126.
const CA_PEM: &str = "\
-----BEGIN CERTIFICATE-----
MIIBkDCCATWgAwIBAgIUbvhSJPt3XdcPfacROKT+aYIYJVYwCgYIKoZIzj0EAwIw
HDEaMBgGA1UEAwwRZXhwYyB1bml0LXRlc3QgQ0EwIBcNMjYxMTIxMjEwMTM0WhgP
MjEyNjEwMjgyMTAxMzRaMBwxGjAYBgNVBAMMEWV4cGMgdW5pdC10ZXN0IENBMFkw
EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEob1Fghoy3VhnjdwZoyIRwg2gieB/H2ft
arPzkXYdbj/6NtS7dZzXA7IVVBumvCRJuE43mwxVzbS9H86olZCDAKNTMFEwHQYD
VR0OBBYEFOLiXQVqWNoGE2XorY2xPaxmFOzZMB8GA1UdIwQYMBaAFOLiXQVqWNoG
E2XorY2xPaxmFOzZMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIh
AOZ8u+3vaYnaFXPBqesozzNWG5RcUzq4THrpN1zf7mcmAiEAuImwEip2enfgZo6y
QquDNOLOCnOMwBsFaKMr6jqTyyM=
-----END CERTIFICATE-----
";

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn files(ca: Option<&PathBuf>, cert: Option<&PathBuf>, key: Option<&PathBuf>) -> TlsFiles {
    TlsFiles {
        ca_file: ca.cloned(),
        client_cert: cert.cloned(),
        client_key: key.cloned(),
    }
}

#[test]
fn a_ca_file_alone_is_enough() {
    let dir = tempfile::tempdir().unwrap();
    let ca = write(&dir, "ca.pem", CA_PEM);
    let tls = Tls::load(&files(Some(&ca), None, None)).unwrap();
    assert_eq!(format!("{tls:?}"), "Tls { client_auth: false, .. }");
    assert_eq!(tls.clone(), tls);
}

#[test]
fn a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.pem");
    let err = client_config(&files(Some(&missing), None, None)).unwrap_err();
    assert!(matches!(&err, MqttError::TlsFile { what: "ca_file", path, .. } if *path == missing));
    let text = err.to_string();
    assert!(text.contains("ca_file") && text.contains("nope.pem"), "{text}");
}

#[test]
fn a_file_without_certificates_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(&dir, "empty.pem", "just some text\n");
    let err = client_config(&files(Some(&empty), None, None)).unwrap_err();
    assert!(
        matches!(err, MqttError::TlsNoCertificate { what: "ca_file", .. }),
        "{err}"
    );
    // A key where the certificate should be is not a certificate either.
    let ca = write(&dir, "ca.pem", CA_PEM);
    let key = write(
        &dir,
        "key.pem",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    );
    let err = client_config(&files(Some(&ca), Some(&key), Some(&key))).unwrap_err();
    assert!(
        matches!(
            err,
            MqttError::TlsNoCertificate {
                what: "client_cert",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn malformed_pem_and_bad_trust_anchors_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cut = write(&dir, "cut.pem", &CA_PEM[..CA_PEM.len() / 2]);
    let err = client_config(&files(Some(&cut), None, None)).unwrap_err();
    assert!(matches!(err, MqttError::TlsPem { what: "ca_file", .. }), "{err}");
    let junk = write(
        &dir,
        "junk.pem",
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    );
    let err = client_config(&files(Some(&junk), None, None)).unwrap_err();
    assert!(matches!(err, MqttError::TlsBadCertificate { index: 1, .. }), "{err}");
}

#[test]
fn client_cert_and_key_go_together() {
    let dir = tempfile::tempdir().unwrap();
    let ca = write(&dir, "ca.pem", CA_PEM);
    let err = client_config(&files(Some(&ca), Some(&ca), None)).unwrap_err();
    assert!(
        matches!(
            err,
            MqttError::TlsHalfClientAuth {
                given: "client_cert",
                ..
            }
        ),
        "{err}"
    );
    let err = client_config(&files(Some(&ca), None, Some(&ca))).unwrap_err();
    assert!(
        matches!(
            err,
            MqttError::TlsHalfClientAuth {
                given: "client_key",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn bad_keys_are_refused_without_quoting_them() {
    let dir = tempfile::tempdir().unwrap();
    let ca = write(&dir, "ca.pem", CA_PEM);
    // A certificate file is not a key file.
    let err = client_config(&files(Some(&ca), Some(&ca), Some(&ca))).unwrap_err();
    assert!(matches!(err, MqttError::TlsNoKey { .. }), "{err}");
    // Base64 that is not a key rustls can sign with; its text must not leak into the error.
    let secret = "c2VjcmV0c2VjcmV0c2VjcmV0";
    let key = write(
        &dir,
        "key.pem",
        &format!("-----BEGIN PRIVATE KEY-----\n{secret}\n-----END PRIVATE KEY-----\n"),
    );
    let err = client_config(&files(Some(&ca), Some(&ca), Some(&key))).unwrap_err();
    assert!(matches!(err, MqttError::TlsClientAuth { .. }), "{err}");
    // Broken PEM around a key: the message describes it, never the offending line.
    let broken = write(
        &dir,
        "broken.pem",
        &format!("-----BEGIN PRIVATE KEY-----\n{secret}!!\n-----END PRIVATE KEY-----\n"),
    );
    let err2 = client_config(&files(Some(&ca), Some(&ca), Some(&broken))).unwrap_err();
    assert!(matches!(err2, MqttError::TlsPem { what: "client_key", .. }), "{err2}");
    for e in [err, err2] {
        let text = format!("{e} {e:?}");
        assert!(!text.contains(secret), "{text}");
    }
}

#[test]
fn server_names_may_be_ip_addresses() {
    assert!(is_verifiable_server_name("broker.example.com"));
    assert!(is_verifiable_server_name("127.0.0.1"));
    assert!(is_verifiable_server_name("::1"));
    assert!(!is_verifiable_server_name("bad host!"));
}
