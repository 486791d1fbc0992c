//! The broker under test: an external URL, the crate's embedded broker, or a
//! Mosquitto started for the run (and its `$SYS` counters, to cross-check ours).

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use exp_mqtt::{BrokerOptions, Device, DeviceOptions, EmbeddedBroker, Endpoint, Subscriber, SubscriberEvent};
use tokio::sync::mpsc;

use crate::BoxError;

pub const MOSQUITTO: &str = "/usr/sbin/mosquitto";

pub enum Broker {
    External(Endpoint),
    /// Stopped when dropped.
    Embedded(EmbeddedBroker),
    Mosquitto(Mosquitto),
}

impl Broker {
    pub fn embedded(devices: u32, window: u16, payload: usize) -> Result<Broker, BoxError> {
        let options = BrokerOptions::for_fleet(devices, window, payload as u64 + 1024);
        Ok(Broker::Embedded(EmbeddedBroker::start(options)?))
    }

    pub fn endpoint(&self) -> Endpoint {
        match self {
            Broker::External(e) => e.clone(),
            Broker::Embedded(b) => b.endpoint(),
            Broker::Mosquitto(m) => Endpoint::tcp("127.0.0.1", m.port),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Broker::External(_) => "external",
            Broker::Embedded(_) => "embedded",
            Broker::Mosquitto(_) => "mosquitto",
        }
    }
}

/// A Mosquitto child process, killed on drop. It also gets SIGKILL from the
/// kernel if this process dies without dropping it (panic=abort, SIGINT, SIGKILL).
pub struct Mosquitto {
    child: Child,
    port: u16,
    /// The config file and the log, for the process's lifetime.
    dir: tempfile::TempDir,
}

impl Mosquitto {
    /// Must be called from the main thread: PR_SET_PDEATHSIG fires when the
    /// *thread* that forked exits, not the process.
    pub fn start() -> Result<Mosquitto, BoxError> {
        let port = exp_mqtt::broker::free_port()?;
        let dir = tempfile::tempdir()?;
        // No limits on the in-flight / queued windows so the broker never throttles
        // the clients; `$SYS` every second for the cross-check. `user root`: started
        // as root, Mosquitto would switch to its own user, and a change of credentials
        // clears PR_SET_PDEATHSIG (prctl(2)); it is ignored when not root. Errors only.
        let conf = format!(
            "listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n\
             max_inflight_messages 0\nmax_queued_messages 1000000\nsys_interval 1\n\
             log_dest stderr\nlog_type error\n"
        );
        let path = dir.path().join("mosquitto.conf");
        std::fs::write(&path, conf)?;
        // Shown when it stops (see Drop), so that the run's own line stays first.
        let log = std::fs::File::create(dir.path().join("mosquitto.log"))?;
        let mut command = Command::new(MOSQUITTO);
        command
            .arg("-c")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        die_with_parent(&mut command);
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {MOSQUITTO}: {e} (apt-get install mosquitto)"))?;
        let mut m = Mosquitto { child, port, dir };
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_err() {
            if let Some(status) = m.child.try_wait()? {
                return Err(format!("mosquitto exited at start: {status}").into());
            }
            if Instant::now() > deadline {
                return Err(format!("mosquitto does not listen on {addr} after 10 s").into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(m)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Mosquitto warns at every start as root whatever `log_type` says; the rest matters.
        let log = std::fs::read_to_string(self.dir.path().join("mosquitto.log")).unwrap_or_default();
        for line in log.lines().filter(|l| !l.contains("should not be run as root")) {
            eprintln!("mosquitto: {line}");
        }
    }
}

#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    // SAFETY: prctl with integer arguments is async-signal-safe, as pre_exec requires.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Mosquitto's count of PUBLISH packets received, from `$SYS` (updated every second).
/// Mosquitto 2.0 tests `command & 0xF5 == PUBLISH`, which misses QoS 2 (0x34): only
/// QoS 0 and 1 runs can be checked this way.
pub struct SysCounter {
    sub: Subscriber,
    rx: mpsc::UnboundedReceiver<SubscriberEvent>,
    latest: Option<u64>,
}

pub const PUBLISH_RECEIVED: &str = "$SYS/broker/publish/messages/received";

impl SysCounter {
    pub async fn connect(endpoint: &Endpoint) -> Result<SysCounter, BoxError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let options = DeviceOptions {
            client_id: "throughput-sys".into(),
            keep_alive: Duration::from_secs(30),
            clean_session: true,
            credentials: None,
            max_inflight: 10,
            max_packet_bytes: 4096,
        };
        let filters = vec![PUBLISH_RECEIVED.to_string()];
        let sub = Subscriber::connect(endpoint, options, filters, tx, Duration::from_secs(10)).await?;
        Ok(SysCounter { sub, rx, latest: None })
    }

    /// The count as it stands, before a run on a broker that earlier runs used.
    /// Mosquitto publishes it (retained, but expiring after 60 s) only when it
    /// changed, and then (2.0 compares whole seconds strictly) every other
    /// second with `sys_interval 1`: so one QoS 0 message is sent first to make
    /// it change, and the value is taken once no newer one came for 3 s. The
    /// probe is in the baseline.
    pub async fn baseline(&mut self, endpoint: &Endpoint) -> Result<u64, BoxError> {
        let (tx, _rx) = mpsc::unbounded_channel();
        let options = DeviceOptions {
            client_id: "throughput-sys-probe".into(),
            keep_alive: Duration::from_secs(30),
            clean_session: true,
            credentials: None,
            max_inflight: 1,
            max_packet_bytes: 4096,
        };
        let probe = Device::connect(u32::MAX, endpoint, options, tx, Duration::from_secs(10)).await?;
        probe.publish("throughput/sys-probe", 0, b"probe")?;
        probe.close(Duration::from_secs(1)).await;
        let quiet = Duration::from_secs(3);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let wait = match self.latest {
                Some(_) => (tokio::time::Instant::now() + quiet).min(deadline),
                None => deadline,
            };
            match tokio::time::timeout_at(wait, self.rx.recv()).await {
                Ok(Some(SubscriberEvent::Message(m))) => {
                    self.latest = std::str::from_utf8(&m.payload).ok().and_then(|s| s.trim().parse().ok());
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => {
                    return self
                        .latest
                        .ok_or_else(|| "no $SYS count from the broker within 10 s".into())
                }
            }
        }
    }

    /// The counter once it reaches `expected`, or its last value after `timeout`.
    pub async fn wait_for(&mut self, expected: u64, timeout: Duration) -> Option<u64> {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.latest.is_none_or(|v| v < expected) {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(SubscriberEvent::Message(m))) => {
                    self.latest = std::str::from_utf8(&m.payload).ok().and_then(|s| s.trim().parse().ok());
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        self.latest
    }

    pub async fn close(self) {
        self.sub.close().await;
    }
}
