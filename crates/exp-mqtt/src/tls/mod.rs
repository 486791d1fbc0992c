//! TLS for `mqtts://`: one rustls `ClientConfig` per fleet, built from PEM
//! files once and shared (behind an `Arc`) by every device and the subscriber,
//! so a fleet of 10,000 devices reads and parses its files once.
//!
//! The crypto provider is ring, passed explicitly instead of relying on
//! rustls' process-wide default: the default (aws-lc-rs) needs cmake and
//! minutes to build on a small machine, and an explicit provider cannot be
//! swapped under us by another crate installing its own default.
//!
//! Without `ca_file` the system's roots are trusted (rustls-native-certs;
//! rumqttc's rustls support compiles it anyway, so it costs no build time).
//! Errors name the property and the file, never the contents: a key is a secret.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rumqttc::{TlsConfiguration, Transport};
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{AlertDescription, CertificateError, ClientConfig, RootCertStore};

use crate::MqttError;

/// The PEM files a fleet's `broker` block names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// CA certificates to trust; `None` trusts the system's roots.
    pub ca_file: Option<PathBuf>,
    /// Client certificate chain, leaf first, for mutual TLS; needs `client_key`.
    pub client_cert: Option<PathBuf>,
    /// The private key of `client_cert` (PKCS#8, PKCS#1 RSA or SEC1 EC).
    pub client_key: Option<PathBuf>,
}

/// A loaded TLS client configuration; cloning shares it.
#[derive(Clone)]
pub struct Tls {
    config: Arc<ClientConfig>,
}

impl Tls {
    /// Reads and checks the files (see [`client_config`]).
    pub fn load(files: &TlsFiles) -> Result<Tls, MqttError> {
        Ok(Tls {
            config: client_config(files)?,
        })
    }

    pub(crate) fn config(&self) -> Arc<ClientConfig> {
        Arc::clone(&self.config)
    }

    pub(crate) fn transport(&self) -> Transport {
        Transport::tls_with_config(TlsConfiguration::Rustls(Arc::clone(&self.config)))
    }
}

impl PartialEq for Tls {
    /// The same configuration, not an equal one: `ClientConfig` has no equality.
    fn eq(&self, other: &Tls) -> bool {
        Arc::ptr_eq(&self.config, &other.config)
    }
}

impl Eq for Tls {}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the configuration itself: it holds the client's private key.
        f.debug_struct("Tls")
            .field("client_auth", &self.config.client_auth_cert_resolver.has_certs())
            .finish_non_exhaustive()
    }
}

/// A rustls client configuration trusting `ca_file` (or the system's roots),
/// with the client certificate and key when both are given.
pub fn client_config(files: &TlsFiles) -> Result<Arc<ClientConfig>, MqttError> {
    let client_auth = match (&files.client_cert, &files.client_key) {
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        (Some(_), None) => {
            return Err(MqttError::TlsHalfClientAuth {
                given: "client_cert",
                missing: "client_key",
            })
        }
        (None, Some(_)) => {
            return Err(MqttError::TlsHalfClientAuth {
                given: "client_key",
                missing: "client_cert",
            })
        }
    };
    let roots = match &files.ca_file {
        Some(path) => ca_roots(path)?,
        None => system_roots()?,
    };
    let builder = ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| MqttError::TlsConfig(e.to_string()))?
        .with_root_certificates(roots);
    let config = match client_auth {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = certificates("client_cert", cert)?;
            let key_der = private_key(key)?;
            // rustls rejects keys it cannot sign with and keys not matching the certificate.
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| MqttError::TlsClientAuth {
                    cert: cert.clone(),
                    key: key.clone(),
                    reason: e.to_string(),
                })?
        }
    };
    Ok(Arc::new(config))
}

/// Whether `host` is a name or address rustls can verify the broker's
/// certificate against (a TLS endpoint's host must be).
pub(crate) fn is_verifiable_server_name(host: &str) -> bool {
    ServerName::try_from(host).is_ok()
}

/// Largest certificate or key file read: a CA bundle of every public root
/// is about 200 KB.
const MAX_PEM_BYTES: u64 = 16 << 20;

/// Through the bounded reader: a FIFO is refused instead of blocking the
/// preflight, `/dev/zero` instead of filling memory.
fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, MqttError> {
    exp_files::read_bytes(path, exp_files::Cap::new(MAX_PEM_BYTES, "a PEM file")).map_err(|e| MqttError::TlsFile {
        what,
        path: path.to_path_buf(),
        source: e.into(),
    })
}

/// Describes a PEM error without quoting the file (the offending line may be key material).
fn bad_pem(what: &'static str, path: &Path, e: &pem::Error) -> MqttError {
    let reason = match e {
        pem::Error::MissingSectionEnd { .. } => "a section has no `-----END ...-----` line",
        pem::Error::IllegalSectionStart { .. } => "a `-----BEGIN ...-----` line is malformed",
        pem::Error::Base64Decode(_) => "a section is not valid base64",
        pem::Error::SectionTooLarge => "a section is larger than 256 MB",
        _ => "the file cannot be parsed",
    };
    MqttError::TlsPem {
        what,
        path: path.to_path_buf(),
        reason,
    }
}

fn certificates(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, MqttError> {
    let pem = read(what, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad_pem(what, path, &e))?;
    if certs.is_empty() {
        return Err(MqttError::TlsNoCertificate {
            what,
            path: path.to_path_buf(),
        });
    }
    Ok(certs)
}

fn ca_roots(path: &Path) -> Result<RootCertStore, MqttError> {
    let mut roots = RootCertStore::empty();
    for (i, cert) in certificates("ca_file", path)?.into_iter().enumerate() {
        roots.add(cert).map_err(|e| MqttError::TlsBadCertificate {
            what: "ca_file",
            path: path.to_path_buf(),
            index: i + 1,
            reason: e.to_string(),
        })?;
    }
    Ok(roots)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, MqttError> {
    let pem = read("client_key", path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| match e {
        pem::Error::NoItemsFound => MqttError::TlsNoKey {
            path: path.to_path_buf(),
        },
        e => bad_pem("client_key", path, &e),
    })
}

fn system_roots() -> Result<RootCertStore, MqttError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    // System stores often hold a few certificates webpki cannot parse; skipping them is the norm.
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let detail = found
            .errors
            .first()
            .map_or_else(|| "none found".to_string(), ToString::to_string);
        return Err(MqttError::TlsNoSystemRoots { detail });
    }
    Ok(roots)
}

/// A TLS failure that retrying cannot fix, with what it most likely means;
/// `None` for anything else (a broker restarting, a network hiccup).
pub(crate) fn rejection(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let tls = rustls_error(e)?;
    let hint = match tls {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer | CertificateError::BadSignature) => {
            "the broker's certificate is not signed by a CA in `ca_file` (or, without it, the system's roots)"
        }
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => "the broker's certificate does not name the host of the URL",
        rustls::Error::InvalidCertificate(_) => "the broker's certificate is not acceptable",
        rustls::Error::AlertReceived(
            AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateRevoked
            | AlertDescription::AccessDenied,
        ) => "the broker refused the client certificate, or wants one: check `client_cert` and `client_key`",
        // What TLS 1.2 servers (OpenSSL's among them) also send for a missing client certificate.
        rustls::Error::AlertReceived(AlertDescription::HandshakeFailure) => {
            "the broker wants a client certificate (`client_cert`, `client_key`), or shares no cipher suite with this client"
        }
        rustls::Error::AlertReceived(AlertDescription::ProtocolVersion | AlertDescription::InsufficientSecurity)
        | rustls::Error::PeerIncompatible(_) => "the broker and this client share no TLS version or cipher suite",
        _ => return None,
    };
    Some(format!("{tls} ({hint})"))
}

/// The rustls error behind a connection error. It can sit deep: in rumqttc
/// an alert read after the handshake arrives as state error → packet error →
/// I/O error, and tokio-rustls wraps rustls errors *inside* I/O errors, where
/// `source()` does not look.
fn rustls_error<'e>(e: &'e (dyn std::error::Error + 'static)) -> Option<&'e rustls::Error> {
    let mut next = Some(e);
    while let Some(err) = next {
        let inner = err
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .and_then(|inner| inner.downcast_ref::<rustls::Error>());
        if let Some(tls) = err.downcast_ref::<rustls::Error>().or(inner) {
            return Some(tls);
        }
        next = err.source();
    }
    None
}

#[cfg(test)]
mod tests;
