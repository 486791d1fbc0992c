//! Authentication of replayed connections: a shared secret keys
//! HMAC-SHA256, and a session per run keeps captured preambles from being
//! replayed.
//!
//! A run first opens a session on a connection of its own:
//!
//! ```text
//! initiator → "XH" 2  client_nonce[16]  tag(secret, "XH" 2 client_nonce)
//! acceptor  → "XS" 2  session[16]       tag(secret, "XS" 2 client_nonce session)
//! ```
//!
//! The acceptor answers only a hello whose tag checks and whose client
//! nonce it has not seen, with a fresh random session nonce; the initiator
//! checks the answer's tag (the acceptor knows the secret too). Every
//! preamble of the run then carries the session nonce, a sequence number
//! unique in the session, and a tag over the whole preamble (see
//! [`preamble`](super::preamble)). The acceptor refuses a preamble of a
//! session it did not open (another run, another acceptor process) and a
//! sequence number it has already seen (the same run), before sending
//! anything. A session idle for [`SESSION_IDLE`] is closed, so a preamble
//! held back from a run (never delivered) is refused once the run has
//! stopped using its session.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Shortest secret accepted, bytes.
pub const MIN_SECRET_LEN: usize = 16;
/// Length of client and session nonces.
pub const NONCE_LEN: usize = 16;
/// Length of an HMAC-SHA256 tag.
pub const TAG_LEN: usize = 32;
pub(crate) const HELLO_MAGIC: [u8; 2] = *b"XH";
const WELCOME_MAGIC: [u8; 2] = *b"XS";
/// Version byte of hellos, welcomes and signed preambles.
pub const AUTH_VERSION: u8 = 2;
/// Sessions an acceptor keeps; the least recently used goes first.
const MAX_SESSIONS: usize = 1024;
/// A session unused this long is closed. Longer than any pause between a
/// run's connections (a trial's `pause`, a quiet stretch of a trace).
pub const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);
/// Client nonces of hellos remembered (the oldest forgotten first): a
/// replayed hello only opens a session its sender cannot sign for, so
/// this bounds memory, not security.
const MAX_HELLOS: usize = 65_536;

/// A shared secret. Its `Debug` never shows it.
#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    /// The secret in `text` (surrounding whitespace, such as a file's final
    /// newline, removed); at least [`MIN_SECRET_LEN`] bytes.
    pub fn from_text(text: &str) -> Result<Secret, AuthError> {
        let trimmed = text.trim();
        if trimmed.len() < MIN_SECRET_LEN {
            return Err(AuthError::ShortSecret { len: trimmed.len() });
        }
        Ok(Secret(trimmed.as_bytes().to_vec()))
    }

    /// A new random secret as text: 32 bytes from the kernel, in hex.
    pub fn generate() -> std::io::Result<String> {
        let bytes: [u8; 32] = random_bytes()?;
        Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    fn mac(&self, parts: &[&[u8]]) -> Hmac<Sha256> {
        // HMAC takes keys of any length; this cannot fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!());
        for part in parts {
            mac.update(part);
        }
        mac
    }

    /// The tag of the concatenated `parts`.
    pub(crate) fn tag(&self, parts: &[&[u8]]) -> [u8; TAG_LEN] {
        self.mac(parts).finalize().into_bytes().into()
    }

    /// Whether `tag` is the tag of `parts` (in constant time).
    pub(crate) fn verify(&self, parts: &[&[u8]], tag: &[u8]) -> bool {
        self.mac(parts).verify_slice(tag).is_ok()
    }
}

/// `N` bytes from the kernel's random source.
pub fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("the secret has {len} bytes; at least {MIN_SECRET_LEN} are needed")]
    ShortSecret { len: usize },
    #[error("opening a session with {target}: {source}")]
    Io { target: SocketAddr, source: std::io::Error },
    #[error(
        "{target} refused the session: it has no secret or another one (check that the spec's \
         `secret_env` holds the secret `expc serve` uses)"
    )]
    Refused { target: SocketAddr },
    #[error("{target} answered the hello with a tag that does not check: it does not know the secret")]
    Impostor { target: SocketAddr },
    #[error("opening a session with {target}: no answer within {timeout:?}")]
    Timeout { target: SocketAddr, timeout: Duration },
    #[error("reading random bytes: {0}")]
    Random(std::io::Error),
}

/// The initiator's side of a session: signs every preamble of a run.
#[derive(Debug)]
pub struct ClientSession {
    secret: Secret,
    nonce: [u8; NONCE_LEN],
    next_sequence: AtomicU64,
}

impl ClientSession {
    /// Opens a session with the acceptor at `target` (a connection of its
    /// own, closed afterwards).
    pub async fn open(target: SocketAddr, secret: Secret, timeout: Duration) -> Result<ClientSession, AuthError> {
        let client_nonce: [u8; NONCE_LEN] = random_bytes().map_err(AuthError::Random)?;
        let exchange = async {
            let mut stream = TcpStream::connect(target).await?;
            let head = [HELLO_MAGIC[0], HELLO_MAGIC[1], AUTH_VERSION];
            let tag = secret.tag(&[&head, &client_nonce]);
            stream.write_all(&[&head[..], &client_nonce, &tag].concat()).await?;
            let mut answer = [0u8; 3 + NONCE_LEN + TAG_LEN];
            stream.read_exact(&mut answer).await.map(|_| answer)
        };
        let answer = match tokio::time::timeout(timeout, exchange).await {
            Err(_) => return Err(AuthError::Timeout { target, timeout }),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(AuthError::Refused { target });
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Err(AuthError::Refused { target });
            }
            Ok(Err(source)) => return Err(AuthError::Io { target, source }),
            Ok(Ok(answer)) => answer,
        };
        let (head, rest) = answer.split_at(3);
        let (nonce, tag) = rest.split_at(NONCE_LEN);
        let expected_head = [WELCOME_MAGIC[0], WELCOME_MAGIC[1], AUTH_VERSION];
        if head != expected_head || !secret.verify(&[head, &client_nonce, nonce], tag) {
            return Err(AuthError::Impostor { target });
        }
        let mut session = [0u8; NONCE_LEN];
        session.copy_from_slice(nonce);
        Ok(ClientSession::new(secret, session))
    }

    /// A session whose nonce the acceptor already knows (an in-process
    /// acceptor registers it directly).
    pub(crate) fn new(secret: Secret, nonce: [u8; NONCE_LEN]) -> ClientSession {
        ClientSession {
            secret,
            nonce,
            next_sequence: AtomicU64::new(0),
        }
    }

    pub(crate) fn secret(&self) -> &Secret {
        &self.secret
    }

    pub(crate) fn nonce(&self) -> &[u8; NONCE_LEN] {
        &self.nonce
    }

    /// A sequence number no other preamble of this session carries.
    pub(crate) fn next_sequence(&self) -> u64 {
        self.next_sequence.fetch_add(1, Ordering::Relaxed)
    }
}

/// Why an acceptor's session check refused a hello or a preamble.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionRefusal {
    /// A hello or preamble whose tag does not check.
    WrongMac,
    /// A hello seen before, or a preamble sequence number already used.
    Replayed,
    /// A preamble of a session this acceptor did not open (or has dropped).
    UnknownSession,
}

struct Session {
    seen: HashSet<u64>,
    /// Order of last use (a counter: instants may tie).
    last_used: u64,
    last_used_at: Instant,
}

/// The acceptor's side: the secret, the sessions it opened, and the hellos
/// it answered.
pub(crate) struct Sessions {
    secret: Secret,
    live: HashMap<[u8; NONCE_LEN], Session>,
    hellos: HashSet<[u8; NONCE_LEN]>,
    hello_order: VecDeque<[u8; NONCE_LEN]>,
    clock: u64,
    idle: Duration,
    /// Random at start: session nonces are the tags of a counter under it,
    /// unique and unpredictable without a read of the random source each.
    salt: [u8; NONCE_LEN],
    opened: u64,
}

impl Sessions {
    pub(crate) fn new(secret: Secret) -> std::io::Result<Sessions> {
        Ok(Sessions {
            secret,
            live: HashMap::new(),
            hellos: HashSet::new(),
            hello_order: VecDeque::new(),
            clock: 0,
            idle: SESSION_IDLE,
            salt: random_bytes()?,
            opened: 0,
        })
    }

    pub(crate) fn secret(&self) -> &Secret {
        &self.secret
    }

    /// Checks a hello (`head` is its 3 leading bytes) and opens a session;
    /// returns the complete answer to send.
    pub(crate) fn answer_hello(
        &mut self,
        head: &[u8],
        client_nonce: &[u8; NONCE_LEN],
        tag: &[u8],
    ) -> Result<Vec<u8>, SessionRefusal> {
        if !self.secret.verify(&[head, client_nonce], tag) {
            return Err(SessionRefusal::WrongMac);
        }
        if !self.hellos.insert(*client_nonce) {
            return Err(SessionRefusal::Replayed);
        }
        self.hello_order.push_back(*client_nonce);
        if self.hello_order.len() > MAX_HELLOS {
            if let Some(oldest) = self.hello_order.pop_front() {
                self.hellos.remove(&oldest);
            }
        }
        self.opened += 1;
        let derived = self.secret.tag(&[b"session", &self.salt, &self.opened.to_le_bytes()]);
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&derived[..NONCE_LEN]);
        self.register(nonce);
        let head = [WELCOME_MAGIC[0], WELCOME_MAGIC[1], AUTH_VERSION];
        let tag = self.secret.tag(&[&head, client_nonce, &nonce]);
        Ok([&head[..], &nonce, &tag].concat())
    }

    /// Opens a session with a known nonce.
    pub(crate) fn register(&mut self, nonce: [u8; NONCE_LEN]) {
        let now = Instant::now();
        let idle = self.idle;
        self.live.retain(|_, s| now.duration_since(s.last_used_at) < idle);
        if self.live.len() >= MAX_SESSIONS {
            if let Some(oldest) = self.live.iter().min_by_key(|(_, s)| s.last_used).map(|(n, _)| *n) {
                self.live.remove(&oldest);
            }
        }
        self.clock += 1;
        self.live.insert(
            nonce,
            Session {
                seen: HashSet::new(),
                last_used: self.clock,
                last_used_at: now,
            },
        );
    }

    /// Admits sequence number `sequence` of session `nonce` once (the
    /// preamble's tag was checked by the caller).
    pub(crate) fn admit(&mut self, nonce: &[u8; NONCE_LEN], sequence: u64) -> Result<(), SessionRefusal> {
        let now = Instant::now();
        let session = self.live.get_mut(nonce).ok_or(SessionRefusal::UnknownSession)?;
        if now.duration_since(session.last_used_at) >= self.idle {
            self.live.remove(nonce);
            return Err(SessionRefusal::UnknownSession);
        }
        self.clock += 1;
        session.last_used = self.clock;
        session.last_used_at = now;
        if session.seen.insert(sequence) {
            Ok(())
        } else {
            Err(SessionRefusal::Replayed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret() -> Secret {
        Secret::from_text("0123456789abcdef0123456789abcdef\n").expect("long enough")
    }

    #[test]
    fn hmac_sha256_matches_rfc_4231_case_2() {
        let key = Secret(b"Jefe".to_vec());
        let tag = key.tag(&[b"what do ya want ", b"for nothing?"]);
        let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        assert!(key.verify(&[b"what do ya want for nothing?"], &tag));
        assert!(!key.verify(&[b"what do ya want for nothing!"], &tag));
    }

    #[test]
    fn secrets_are_long_enough_and_never_shown() {
        assert!(matches!(
            Secret::from_text("  short  "),
            Err(AuthError::ShortSecret { len: 5 })
        ));
        assert_eq!(format!("{:?}", secret()), "Secret(<redacted>)");
        let generated = Secret::generate().expect("random");
        assert_eq!(generated.len(), 64);
        assert_ne!(generated, Secret::generate().expect("random"));
    }

    #[test]
    fn sessions_admit_each_sequence_once_and_only_their_own() {
        let mut sessions = Sessions::new(secret()).expect("random");
        let head = [b'X', b'H', AUTH_VERSION];
        let client = [7u8; NONCE_LEN];
        let tag = secret().tag(&[&head, &client]);
        let answer = sessions.answer_hello(&head, &client, &tag).expect("hello checks");
        assert_eq!(answer.len(), 3 + NONCE_LEN + TAG_LEN);
        assert_eq!(
            sessions.answer_hello(&head, &client, &tag),
            Err(SessionRefusal::Replayed),
            "a hello is answered once"
        );
        let wrong = Secret::from_text("another secret, as long as needed").expect("long");
        let forged = wrong.tag(&[&head, &[8u8; NONCE_LEN]]);
        assert_eq!(
            sessions.answer_hello(&head, &[8u8; NONCE_LEN], &forged),
            Err(SessionRefusal::WrongMac)
        );
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&answer[3..3 + NONCE_LEN]);
        assert_eq!(sessions.admit(&nonce, 0), Ok(()));
        assert_eq!(sessions.admit(&nonce, 1), Ok(()));
        assert_eq!(sessions.admit(&nonce, 0), Err(SessionRefusal::Replayed));
        assert_eq!(
            sessions.admit(&[1u8; NONCE_LEN], 2),
            Err(SessionRefusal::UnknownSession)
        );
    }

    #[test]
    fn the_least_recently_used_session_goes_first() {
        let mut sessions = Sessions::new(secret()).expect("random");
        for i in 0..MAX_SESSIONS {
            let mut nonce = [0u8; NONCE_LEN];
            nonce[..8].copy_from_slice(&(i as u64).to_le_bytes());
            sessions.register(nonce);
        }
        let first = [0u8; NONCE_LEN];
        assert_eq!(sessions.admit(&first, 0), Ok(()), "the first session, used again");
        sessions.register([0xff; NONCE_LEN]);
        let mut second = [0u8; NONCE_LEN];
        second[0] = 1;
        assert_eq!(sessions.admit(&second, 0), Err(SessionRefusal::UnknownSession));
        assert_eq!(sessions.admit(&first, 1), Ok(()));
    }

    #[test]
    fn an_idle_session_is_closed() {
        let mut sessions = Sessions::new(secret()).expect("random");
        sessions.idle = Duration::from_millis(50);
        let idle = [2u8; NONCE_LEN];
        sessions.register(idle);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(sessions.admit(&idle, 0), Err(SessionRefusal::UnknownSession));
        assert!(!sessions.live.contains_key(&idle), "closed, not kept");
        // A session in use is kept (an hour's limit: no stall reaches it).
        sessions.idle = SESSION_IDLE;
        let kept = [1u8; NONCE_LEN];
        sessions.register(kept);
        assert_eq!(sessions.admit(&kept, 0), Ok(()));
        assert_eq!(sessions.admit(&kept, 1), Ok(()));
    }
}
