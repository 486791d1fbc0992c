//! The child process of one anomaly instance.
//!
//! Protocol with the parent ([`crate::spawn`]): the [`InstanceConfig`] as
//! JSON on stdin; a JSON line of counters on stdout about every 100 ms and a
//! final one with the reason it ended; on failure the error on stderr. Exit
//! status 0 after a clean stop (SIGTERM, SIGINT or the deadline), 1 when a
//! kernel failed, 2 on an unusable configuration, 3 when the parent is gone.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::config::{self, InstanceConfig};
use crate::counters::{EndReason, Report};
use crate::job::kernel_error;
use crate::kernels::Workers;
use crate::plan::plan;
use crate::{error_chain, ffi, AnomalyError, PARENT_PID_ENV};

const REPORT_EVERY: Duration = Duration::from_millis(100);

/// The child's entry point: run the anomaly described on stdin until SIGTERM
/// or its `run_for` is over. Call it from `main` of the program a
/// [`crate::Launcher`] names, and return its exit code.
pub fn child_main() -> ExitCode {
    // First, so there is no moment in which the parent can die unnoticed ...
    if let Err(error) = ffi::set_parent_death_signal() {
        return fail(3, &format!("cannot ask to die with the parent: {error}"));
    }
    // ... and the parent may have died before that: then we were re-parented.
    if let Some(expected) = std::env::var(PARENT_PID_ENV)
        .ok()
        .and_then(|pid| pid.parse::<u32>().ok())
    {
        if std::os::unix::process::parent_id() != expected {
            return fail(3, &format!("the parent process {expected} is gone"));
        }
    }
    if let Err(error) = ffi::install_stop_handlers() {
        return fail(1, &format!("cannot handle SIGTERM: {error}"));
    }
    let started = Instant::now();
    let config = match read_config(std::io::stdin().lock()) {
        Ok(config) => config,
        Err(error) => return fail(2, &error_chain(&error)),
    };
    match run(&config, started, ffi::stop_flag(), &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(
            if matches!(error, AnomalyError::Config(_)) { 2 } else { 1 },
            &error_chain(&error),
        ),
    }
}

fn fail(code: u8, message: &str) -> ExitCode {
    // stderr is how the parent learns why; if even that is gone, the exit status still says it.
    let _ = writeln!(std::io::stderr(), "{message}");
    ExitCode::from(code)
}

fn read_config(mut input: impl Read) -> Result<InstanceConfig, AnomalyError> {
    let mut text = String::new();
    input.read_to_string(&mut text).map_err(|source| AnomalyError::Kernel {
        kernel: "child",
        what: "reading the configuration".into(),
        source,
    })?;
    let config: InstanceConfig = serde_json::from_str(&text)?;
    config::validate(&config.anomaly)?;
    Ok(config)
}

/// Runs the kernels until stop or deadline, reporting counters on stdout.
fn run(
    config: &InstanceConfig,
    started: Instant,
    stop: &'static AtomicU32,
    out: &mut impl Write,
) -> Result<(), AnomalyError> {
    let deadline = started.checked_add(config.run_for);
    let remaining = deadline.map_or(u64::MAX, |d| {
        d.saturating_duration_since(Instant::now()).as_nanos() as u64
    });
    let deadline_ns = ffi::monotonic_ns().saturating_add(remaining).max(1);

    // The whole child stays on the anomaly's cores (threads inherit this), so
    // its own bookkeeping does not disturb the other cores.
    if !config.anomaly.cores.is_empty() {
        ffi::pin_current_thread(&config.anomaly.cores).map_err(kernel_error(
            "child",
            format!("pinning to cores {:?}", config.anomaly.cores),
        ))?;
    }
    let work_dir = config::work_dir(&config.anomaly, &config.scratch_dir, std::process::id());
    let jobs = plan(&config.anomaly, work_dir.as_deref())?;
    let (done, ended) = mpsc::channel();
    let mut workers = Workers::start(jobs, stop, deadline_ns, config.seed, &done)?;
    drop(done);

    // Wakes up to report, at the deadline, and when a worker ends (which is
    // also how a SIGTERM shows: the kernels see the flag and return). No
    // polling in between: every wake-up costs CPU on the anomaly's cores.
    let mut next_report = Instant::now();
    let mut failure = None;
    let reason = loop {
        if stop.load(Ordering::Relaxed) != 0 {
            break EndReason::Signal;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break EndReason::Deadline;
        }
        if let Some(error) = workers.failure() {
            failure = Some(error);
            break EndReason::Failed;
        }
        if now >= next_report {
            // A parent that stopped reading is not our problem: it can still signal us.
            let _ = writeln!(out, "{}", Report::new(workers.counters(), None).to_line());
            let _ = out.flush();
            next_report = (next_report + REPORT_EVERY).max(now);
        }
        let wake = deadline.map_or(next_report, |d| d.min(next_report));
        match ended.recv_timeout(wake.saturating_duration_since(Instant::now())) {
            Ok(()) | Err(RecvTimeoutError::Timeout) => {}
            // Every worker has ended, without error (checked next): kernels end
            // only when stopped or at the deadline, which they may see a hair
            // before this thread does.
            Err(RecvTimeoutError::Disconnected) => {
                if let Some(error) = workers.failure() {
                    failure = Some(error);
                    break EndReason::Failed;
                }
                break if stop.load(Ordering::Relaxed) != 0 {
                    EndReason::Signal
                } else {
                    EndReason::Deadline
                };
            }
        }
    };
    stop.store(1, Ordering::Relaxed);
    let mut errors = workers.join();
    let failure = failure.or_else(|| {
        if errors.is_empty() {
            None
        } else {
            Some(errors.remove(0))
        }
    });
    let end = if failure.is_some() { EndReason::Failed } else { reason };
    let _ = writeln!(out, "{}", Report::new(workers.counters(), Some(end)).to_line());
    let _ = out.flush();
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use exp_plan::{Anomaly, AnomalyParams};

    #[test]
    fn reads_and_checks_the_configuration() {
        let config = InstanceConfig {
            instance: "t".into(),
            anomaly: Anomaly {
                cores: vec![0],
                params: AnomalyParams::Cpuoccupy {
                    utilization_ratio: 0.25,
                },
            },
            seed: 1,
            scratch_dir: std::env::temp_dir(),
            run_for: Duration::from_secs(1),
        };
        let json = serde_json::to_vec(&config).unwrap();
        assert_eq!(read_config(&json[..]).unwrap(), config);
        assert!(matches!(read_config(&b"{"[..]), Err(AnomalyError::Json(_))));

        let mut bad = config;
        bad.anomaly.params = AnomalyParams::Cpuoccupy { utilization_ratio: 2.0 };
        let json = serde_json::to_vec(&bad).unwrap();
        assert!(matches!(read_config(&json[..]), Err(AnomalyError::Config(_))));
    }

    #[test]
    fn runs_until_the_deadline() {
        // A real run inside the test process: memleak leaks little and frees on return.
        let config = InstanceConfig {
            instance: "t".into(),
            anomaly: Anomaly {
                cores: vec![],
                params: AnomalyParams::Memleak {
                    size_bytes: 4096,
                    rate_per_s: 100.0,
                    limit_bytes: 1 << 20,
                },
            },
            seed: 1,
            scratch_dir: std::env::temp_dir(),
            run_for: Duration::from_millis(200),
        };
        let stop: &'static AtomicU32 = Box::leak(Box::new(AtomicU32::new(0)));
        let started = Instant::now();
        let mut out = Vec::new();
        run(&config, started, stop, &mut out).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        let text = String::from_utf8(out).unwrap();
        let last = text.lines().last().and_then(Report::parse).unwrap();
        assert_eq!(last.end, Some(EndReason::Deadline));
        // 100 steps/s for 0.2 s: about 20 steps of 4096 bytes, each counted as filled.
        assert!((10..=30).contains(&last.iterations), "{text}");
        assert_eq!(last.bytes, last.iterations * 4096);
    }
}
