//! A Mosquitto broker for one test: generated config in a temp dir, a free
//! loopback port, and a guard that kills the process whatever happens.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BINARY: &str = "/usr/sbin/mosquitto";

pub struct Mosquitto {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

impl Mosquitto {
    /// Starts Mosquitto on a free port; panics (failing the test) if it is not installed.
    pub fn start() -> Mosquitto {
        Mosquitto::start_with("")
    }

    /// Like `start`, with `listener` lines (e.g. TLS files) added to the listener's settings.
    pub fn start_with(listener: &str) -> Mosquitto {
        assert!(
            Path::new(BINARY).exists(),
            "{BINARY} not found: these tests need Mosquitto; install it with `apt-get install mosquitto`"
        );
        let port = exp_mqtt::broker::free_port().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let conf = format!(
            "listener {port} 127.0.0.1\n{listener}allow_anonymous true\npersistence false\nsys_interval 1\n\
             max_queued_messages 0\nlog_dest none\n"
        );
        std::fs::write(dir.path().join("mosquitto.conf"), conf).unwrap();
        let mut m = Mosquitto { child: None, port, dir };
        m.restart();
        m
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn endpoint(&self) -> exp_mqtt::Endpoint {
        exp_mqtt::Endpoint::tcp("127.0.0.1", self.port)
    }

    /// Starts the process (again) on the same port and waits until it accepts connections.
    pub fn restart(&mut self) {
        self.kill();
        let deadline = Instant::now() + Duration::from_secs(10);
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        loop {
            let child = Command::new(BINARY)
                .arg("-c")
                .arg(self.dir.path().join("mosquitto.conf"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            self.child = Some(child);
            // Ready when it accepts; if it exited (port briefly unavailable), start it again.
            loop {
                if TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok() {
                    return;
                }
                let exited = self.child.as_mut().unwrap().try_wait().unwrap().is_some();
                assert!(
                    Instant::now() < deadline,
                    "mosquitto did not start on port {}",
                    self.port
                );
                if exited {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGKILL: no clean shutdown, like a crash.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        self.kill();
    }
}
