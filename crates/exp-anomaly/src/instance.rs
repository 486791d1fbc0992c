//! The parent's side: starting a child, watching it, ending it, cleaning up.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::cleanup::clean_up;
use crate::config::{self, InstanceConfig, Launcher};
use crate::counters::{Counters, EndReason, Report};
use crate::exit::{classify, ExitKind};
use crate::ffi::{self, Reaped, Signal};
use crate::{proc, AnomalyError, PARENT_PID_ENV};

/// What a running instance looks like now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// CPU time of the child's threads so far, from /proc (ns).
    pub cpu_time_ns: u64,
    /// Resident memory of the child, from /proc (bytes); 0 once it has ended.
    pub rss_bytes: u64,
    /// The latest counters the child reported.
    pub counters: Counters,
}

/// How an instance ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The last counters the child reported.
    pub counters: Counters,
    /// CPU time of the whole child, all threads, from the kernel's accounting (ns).
    pub cpu_time_ns: u64,
    pub status: ExitKind,
}

/// Most stderr text kept from a child; the rest is read and dropped so the child never blocks on it.
const STDERR_LIMIT: usize = 64 * 1024;

/// How often `stop` looks whether the child has ended.
const STOP_POLL: Duration = Duration::from_millis(5);

#[derive(Default)]
struct FromChild {
    counters: Counters,
    end: Option<EndReason>,
    stderr: String,
}

type Shared = Arc<Mutex<FromChild>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, FromChild> {
    // A reader thread cannot panic while holding the lock; if one did, the data is still usable.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running (or ended, not yet collected) anomaly child.
///
/// Dropping an instance that has not ended kills and reaps the child and
/// removes its files, so a child never outlives its `Instance`.
pub struct Instance {
    pid: u32,
    shared: Shared,
    readers: Vec<JoinHandle<()>>,
    scratch_dir: PathBuf,
    work_dir: Option<PathBuf>,
    sent: Option<Signal>,
    reaped: bool,
    outcome: Option<Outcome>,
    last_cpu_ns: u64,
}

/// Starts the child of one anomaly instance: `launcher`'s program in its own
/// process group (a terminal's Ctrl-C reaches only the parent, which then
/// stops its children itself), with `config` on its stdin.
///
/// The child dies with SIGKILL when the *thread* that called `spawn` exits
/// (`PR_SET_PDEATHSIG` follows the forking thread, not the process): call
/// `spawn` from a thread that outlives the instance, such as the main thread
/// or a long-lived supervisor thread.
pub fn spawn(launcher: &Launcher, config: &InstanceConfig) -> Result<Instance, AnomalyError> {
    config::validate(&config.anomaly)?;
    let json = serde_json::to_vec(config)?;
    std::fs::create_dir_all(&config.scratch_dir).map_err(|source| AnomalyError::Directory {
        path: config.scratch_dir.clone(),
        source,
    })?;

    let mut child = Command::new(&launcher.program)
        .args(&launcher.args)
        .env(PARENT_PID_ENV, std::process::id().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|source| AnomalyError::Spawn {
            program: launcher.program.clone(),
            source,
        })?;
    let pid = child.id();
    let shared = Shared::default();
    let mut readers = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let shared = Arc::clone(&shared);
        readers.push(std::thread::spawn(move || read_reports(stdout, &shared)));
    }
    if let Some(stderr) = child.stderr.take() {
        let shared = Arc::clone(&shared);
        readers.push(std::thread::spawn(move || read_stderr(stderr, &shared)));
    }
    let stdin = child.stdin.take();
    // From here on the instance owns the child: `wait` below, or Drop, reaps it.
    drop(child);
    let mut instance = Instance {
        pid,
        shared,
        readers,
        scratch_dir: config.scratch_dir.clone(),
        work_dir: config::work_dir(&config.anomaly, &config.scratch_dir, pid),
        sent: None,
        reaped: false,
        outcome: None,
        last_cpu_ns: 0,
    };
    // The readers run already, so a child that fails early cannot block on a full stderr pipe.
    let handed_over = match stdin {
        Some(mut stdin) => stdin.write_all(&json), // dropping `stdin` closes it: the child's EOF
        None => Err(std::io::Error::other("no stdin pipe")),
    };
    if let Err(source) = handed_over {
        let _ = instance.end(Signal::Kill, Duration::ZERO);
        let stderr = lock(&instance.shared).stderr.clone();
        return Err(AnomalyError::Handover { source, stderr });
    }
    Ok(instance)
}

fn read_reports(stdout: impl Read, shared: &Shared) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if let Some(report) = Report::parse(&line) {
            let mut from_child = lock(shared);
            from_child.counters = report.counters();
            from_child.end = report.end.or(from_child.end);
        }
    }
}

fn read_stderr(mut stderr: impl Read, shared: &Shared) {
    let mut buffer = [0u8; 4096];
    loop {
        match stderr.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                let mut from_child = lock(shared);
                if from_child.stderr.len() < STDERR_LIMIT {
                    from_child.stderr.push_str(&String::from_utf8_lossy(&buffer[..n]));
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

impl Instance {
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Non-blocking: the latest counters the child reported, with its CPU
    /// time and resident memory read from /proc. After the child has ended:
    /// its final CPU time and counters, and 0 resident bytes.
    pub fn sample(&mut self) -> Result<Sample, AnomalyError> {
        if let Some(outcome) = &self.outcome {
            return Ok(Sample {
                cpu_time_ns: outcome.cpu_time_ns,
                rss_bytes: 0,
                counters: outcome.counters,
            });
        }
        let counters = lock(&self.shared).counters;
        // Monotonic even when a thread ends between two samples and leaves the per-thread sum.
        self.last_cpu_ns = self.last_cpu_ns.max(proc::cpu_time_ns(self.pid)?);
        let rss_bytes = proc::rss_bytes(self.pid)?;
        Ok(Sample {
            cpu_time_ns: self.last_cpu_ns,
            rss_bytes,
            counters,
        })
    }

    /// Has the child ended by itself (deadline reached, or failure)? If so it
    /// is reaped and its files are removed; later calls return the same outcome.
    pub fn try_wait(&mut self) -> Result<Option<Outcome>, AnomalyError> {
        if let Some(outcome) = &self.outcome {
            return Ok(Some(outcome.clone()));
        }
        match ffi::wait(self.pid, false).map_err(self.process_error("wait for"))? {
            Some(reaped) => self.finish(reaped).map(Some),
            None => Ok(None),
        }
    }

    /// SIGTERM, wait up to `grace` for the child to end, then SIGKILL; reap
    /// it, remove its files and return how it ended.
    pub fn stop(mut self, grace: Duration) -> Result<Outcome, AnomalyError> {
        self.end(Signal::Term, grace)
    }

    /// SIGKILL now (e.g. at a second Ctrl-C); still reaps and cleans up.
    pub fn kill(mut self) -> Result<Outcome, AnomalyError> {
        self.end(Signal::Kill, Duration::ZERO)
    }

    fn process_error(&self, action: &'static str) -> impl FnOnce(std::io::Error) -> AnomalyError {
        let pid = self.pid;
        move |source| AnomalyError::Process { action, pid, source }
    }

    fn signal(&mut self, signal: Signal) -> Result<(), AnomalyError> {
        self.sent = Some(signal);
        let action = if signal == Signal::Term {
            "send SIGTERM to"
        } else {
            "send SIGKILL to"
        };
        // Unreaped, the pid is still ours (a zombie at worst), so this cannot hit another process.
        ffi::send_signal(self.pid, signal).map_err(self.process_error(action))
    }

    fn end(&mut self, signal: Signal, grace: Duration) -> Result<Outcome, AnomalyError> {
        if let Some(outcome) = &self.outcome {
            return Ok(outcome.clone());
        }
        self.signal(signal)?;
        if signal == Signal::Term {
            let give_up = Instant::now() + grace;
            loop {
                if let Some(reaped) = ffi::wait(self.pid, false).map_err(self.process_error("wait for"))? {
                    return self.finish(reaped);
                }
                let now = Instant::now();
                if now >= give_up {
                    break;
                }
                std::thread::sleep(STOP_POLL.min(give_up - now));
            }
            self.signal(Signal::Kill)?;
        }
        match ffi::wait(self.pid, true).map_err(self.process_error("wait for"))? {
            Some(reaped) => self.finish(reaped),
            None => Err(AnomalyError::Process {
                action: "wait for",
                pid: self.pid,
                source: std::io::Error::other("still running after SIGKILL"),
            }),
        }
    }

    /// After the child was reaped: collect what it said, classify, clean up.
    fn finish(&mut self, reaped: Reaped) -> Result<Outcome, AnomalyError> {
        self.reaped = true;
        // The pipes close with the child, so the readers end (and have read everything).
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        let (counters, end, stderr) = {
            let from_child = lock(&self.shared);
            (from_child.counters, from_child.end, from_child.stderr.clone())
        };
        let status = classify(reaped.status, self.sent, end, &stderr);
        let outcome = Outcome {
            counters,
            cpu_time_ns: reaped.cpu_time_ns.max(self.last_cpu_ns),
            status,
        };
        self.outcome = Some(outcome.clone());
        match clean_up(&self.scratch_dir, self.work_dir.as_deref()) {
            Ok(()) => Ok(outcome),
            Err((path, source)) => Err(AnomalyError::Cleanup {
                path,
                source,
                outcome: Box::new(outcome),
            }),
        }
    }
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("pid", &self.pid)
            .field("scratch_dir", &self.scratch_dir)
            .field("outcome", &self.outcome)
            .finish_non_exhaustive()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.end(Signal::Kill, Duration::ZERO);
        }
    }
}
