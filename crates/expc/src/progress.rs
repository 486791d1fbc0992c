//! Renders runtime events: a progress bar on a terminal, plain log lines
//! otherwise (CI logs, pipes, files).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use exp_runtime::{Event, Level};

use crate::summary::seconds;
use indicatif::{ProgressBar, ProgressStyle};

/// Consumes events until every sender is dropped, or until `finished` is
/// set and the events sent so far are shown: a task the run left behind
/// that still holds a sender must not keep `expc` from exiting.
pub fn render(events: Receiver<Event>, finished: Arc<AtomicBool>) {
    let events = Incoming { events, finished };
    if std::io::stderr().is_terminal() {
        bar(events);
    } else {
        lines(events);
    }
}

struct Incoming {
    events: Receiver<Event>,
    finished: Arc<AtomicBool>,
}

impl Iterator for Incoming {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            match self.events.recv_timeout(Duration::from_millis(100)) {
                Ok(event) => return Some(event),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) if self.finished.load(Ordering::SeqCst) => {
                    return self.events.try_recv().ok();
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

fn bar(events: Incoming) {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} trial {pos}/{len} {wide_msg} [{elapsed_precise}] eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    for event in events {
        match event {
            Event::RunStarted { run_dir, trials } => {
                bar.set_length(u64::from(trials));
                bar.println(format!("run directory: {}", run_dir.display()));
            }
            Event::TrialStarted {
                trial,
                sweep,
                repetition,
                ..
            } => {
                bar.set_message(format!("#{trial} {sweep} rep {repetition}"));
            }
            other => {
                if matches!(other, Event::TrialFinished { .. }) {
                    bar.inc(1);
                }
                if let Some(line) = describe(&other) {
                    bar.println(line);
                }
            }
        }
    }
    bar.finish_and_clear();
}

fn lines(events: Incoming) {
    let started = Instant::now();
    for event in events {
        let text = match &event {
            Event::RunStarted { run_dir, trials } => {
                format!("run directory {} ({trials} trials)", run_dir.display())
            }
            Event::TrialStarted {
                trial,
                ordinal,
                total,
                sweep,
                repetition,
                planned_ns,
                ..
            } => format!(
                "trial {ordinal}/{total} (#{trial}) {}rep {repetition}{}",
                if sweep.is_empty() {
                    String::new()
                } else {
                    format!("{sweep} ")
                },
                planned_ns.map_or(String::new(), |ns| format!(", {}", seconds(ns)))
            ),
            Event::TrialFinished {
                trial,
                status,
                elapsed_ns,
                error,
            } => format!(
                "trial #{trial} {status} after {}{}",
                seconds(*elapsed_ns),
                error.as_ref().map_or(String::new(), |e| format!(": {e}"))
            ),
            other => match describe(other) {
                Some(line) => line,
                None => continue,
            },
        };
        errln!("[{:>7.1}s] {text}", started.elapsed().as_secs_f64());
    }
}

fn describe(event: &Event) -> Option<String> {
    Some(match event {
        Event::RepeatStopped {
            point,
            repetitions,
            reason,
        } => {
            format!("point {point}: stopped after {repetitions} repetitions: {reason}")
        }
        Event::Stopping { level: Level::Kill } => "stopping now (second interrupt); finishing files".into(),
        Event::Stopping { .. } => "interrupted: stopping workloads cleanly (interrupt again to stop at once)".into(),
        Event::Pause { .. } => return None,
        Event::TrialFinished {
            trial,
            status,
            error: Some(error),
            ..
        } => format!("trial #{trial} {status}: {error}"),
        _ => return None,
    })
}
