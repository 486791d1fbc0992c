//! Helpers of the expc tests: the binary, its output as text, scratch
//! directories and a Mosquitto process.

#![allow(dead_code, clippy::unwrap_used)] // each test file uses some of these

use std::collections::BTreeMap;
use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use exp_parquet::Frame;

pub mod rows;

pub const MOSQUITTO: &str = "/usr/sbin/mosquitto";

/// The expc binary under test.
pub fn expc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_expc"))
}

/// `expc run SPEC --out OUT`, not yet started.
fn run_command(spec: &Path, out: &Path) -> Command {
    let mut command = expc();
    command.arg("run").arg(spec).arg("--out").arg(out);
    command
}

/// Starts `expc run SPEC --out OUT` in the background, its output discarded
/// (the tests read what it wrote).
pub fn spawn_run(spec: &Path, out: &Path) -> Child {
    run_command(spec, out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Starts `expc run SPEC --out OUT` in the background, its output captured
/// for `wait_with_output`.
pub fn spawn_run_captured(spec: &Path, out: &Path) -> Child {
    run_command(spec, out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The one run directory under `out` (finished or `.partial`).
pub fn run_dir(out: &Path) -> Option<PathBuf> {
    let experiment = std::fs::read_dir(out).ok()?.flatten().next()?.path();
    std::fs::read_dir(experiment).ok()?.flatten().next().map(|e| e.path())
}

/// Taken by every test that loads the machine or measures timing (anomaly
/// kernels, fleets beside hogs, the reproductions, runs whose figures show
/// an anomaly): in the one test binary they never run beside each other.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Polls `probe` every 50 ms until it answers; fails after `timeout`.
pub fn wait_for<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(
            started.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends signal `name` (`INT`, `TERM`, …) to `child`.
pub fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

pub fn read_parquet(path: &Path) -> Frame {
    exp_parquet::Reader::new(File::open(path).unwrap())
        .and_then(|r| r.read_all())
        .unwrap()
}

/// The Parquet part files of one trial of `table` in a finished run, in
/// name order.
pub fn trial_frames(run: &Path, table: &str, trial: u32) -> Vec<Frame> {
    let dir = run.join("tables").join(table).join(format!("trial={trial}"));
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    parts.sort();
    parts.iter().map(|p| read_parquet(p)).collect()
}

/// Every value of a column across `frames` as `u64` (UInt64, or Int64 for
/// times, `*_ns`), nulls left out.
pub fn u64_values(frames: &[Frame], column: &str) -> Vec<u64> {
    frames
        .iter()
        .flat_map(|f| {
            f.column(column)
                .unwrap()
                .to_u64s()
                .unwrap()
                .iter()
                .flatten()
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every file below `dir`.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// Rows per (table, trial) of the finished files of the run in `dir`.
pub fn rows_by_trial(dir: &Path) -> BTreeMap<(String, u32), usize> {
    let mut rows = BTreeMap::new();
    for path in files(&dir.join("tables")) {
        let relative = path.strip_prefix(dir.join("tables")).unwrap();
        let parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts[0].starts_with('.') {
            continue;
        }
        let trial: u32 = parts[1].strip_prefix("trial=").unwrap().parse().unwrap();
        *rows.entry((parts[0].clone(), trial)).or_default() += read_parquet(&path).height();
    }
    rows
}

/// As [`rows_by_trial`], without `trial_validity`: its findings audit the
/// host while the trial ran (steal, neighbours' CPU), so two runs of the
/// same plan may differ there and only there.
pub fn measured_rows_by_trial(dir: &Path) -> BTreeMap<(String, u32), usize> {
    let mut rows = rows_by_trial(dir);
    rows.retain(|(table, _), _| table != "trial_validity");
    rows
}

/// A command's stdout and stderr, for assertion messages.
pub fn text(output: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A scratch directory of one test, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-fleet-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Mosquitto on a free loopback port, killed when dropped.
pub struct Mosquitto {
    child: Child,
    conf: PathBuf,
    pub port: u16,
}

impl Mosquitto {
    /// A plain listener on a free loopback port.
    pub fn start(dir: &Path) -> Mosquitto {
        Mosquitto::start_with(dir, "")
    }

    /// A listener on a free loopback port with `listener_options` (e.g. TLS
    /// files) in its section of the configuration.
    pub fn start_with(dir: &Path, listener_options: &str) -> Mosquitto {
        assert!(
            Path::new(MOSQUITTO).exists(),
            "{MOSQUITTO} not found: apt-get install mosquitto"
        );
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let conf = dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!(
                "listener {port} 127.0.0.1\n{listener_options}allow_anonymous true\npersistence false\nlog_dest none\n"
            ),
        )
        .unwrap();
        Mosquitto {
            child: spawn_mosquitto(&conf, port),
            conf,
            port,
        }
    }

    /// Stops the broker (SIGSTOP: connections stay open, nothing is read or
    /// acknowledged) for `stalled`, then lets it go on.
    pub fn stall_for(&self, stalled: Duration) {
        signal(&self.child, "STOP");
        std::thread::sleep(stalled);
        signal(&self.child, "CONT");
    }

    /// Kills the broker (every session is lost) and starts it again on the same port.
    pub fn restart_after(&mut self, down: Duration) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(down);
        self.child = spawn_mosquitto(&self.conf, self.port);
    }
}

fn spawn_mosquitto(conf: &Path, port: u16) -> Child {
    let mut child = Command::new(MOSQUITTO)
        .arg("-c")
        .arg(conf)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    while TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_err() {
        if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            let _ = child.kill();
            panic!("mosquitto did not start on port {port}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
