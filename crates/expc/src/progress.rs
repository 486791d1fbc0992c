//! Renders runtime events: a progress bar on a terminal, plain log lines
//! otherwise (CI logs, pipes, files).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use exp_runtime::live::Live;
use exp_runtime::{Event, Level};

use crate::summary::seconds;
use indicatif::{ProgressBar, ProgressStyle};

/// Consumes events until every sender is dropped, or until `finished` is
/// set and the events sent so far are shown: a task the run left behind
/// that still holds a sender must not keep `expc` from exiting. On a
/// terminal the bar also shows the running workloads' `live` counters.
pub fn render(events: Receiver<Event>, finished: Arc<AtomicBool>, live: &Live) {
    let events = Incoming { events, finished };
    if std::io::stderr().is_terminal() {
        bar(events, live);
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

fn bar(events: Incoming, live: &Live) {
    let mut workloads = crate::live_line::LiveLine::default();
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} trial {pos}/{len} {wide_msg} [{elapsed_precise}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut header = String::new();
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
                header = format!("#{trial} {sweep} rep {repetition}");
                bar.set_message(header.clone());
            }
            Event::TrialProgress {
                elapsed_ns,
                planned_ns,
                rows,
                ..
            } => {
                // The run's time left: this trial's, and the trials after it
                // at the same length (pauses aside).
                let after = bar.length().unwrap_or(0).saturating_sub(bar.position() + 1);
                let run_left = planned_ns
                    .map(|p| p.saturating_sub(elapsed_ns).saturating_add(p.saturating_mul(after)))
                    .filter(|_| after > 0)
                    .map_or(String::new(), |ns| {
                        format!(
                            " │ run: about {} left",
                            seconds(ns.div_ceil(1_000_000_000).saturating_mul(1_000_000_000))
                        )
                    });
                let trial = trial_progress(elapsed_ns, planned_ns, &rows);
                let running = workloads.line(live);
                let running = if running.is_empty() {
                    running
                } else {
                    format!(" │ {running}")
                };
                bar.set_message(format!("{header} │ {trial}{run_left}{running}"));
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
                ..
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

/// `12 s of 2 min (1 min 48 s left) │ 12,345 messages`: where the trial
/// stands and what its workloads have done, from the rows of the tables
/// that count them.
fn trial_progress(elapsed_ns: u64, planned_ns: Option<u64>, rows: &BTreeMap<String, u64>) -> String {
    // Ticks come every second: whole seconds, not jitter.
    let elapsed_ns = elapsed_ns / 1_000_000_000 * 1_000_000_000;
    let mut text = match planned_ns {
        Some(planned) => format!(
            "{} of {} ({} left)",
            seconds(elapsed_ns),
            seconds(planned),
            seconds(planned.saturating_sub(elapsed_ns))
        ),
        None => seconds(elapsed_ns),
    };
    let counted = [
        (exp_results::schemas::MESSAGES_TABLE, "messages"),
        (exp_results::schemas::CONNECTIONS_TABLE, "connections"),
    ];
    let counts: Vec<String> = counted
        .iter()
        .filter_map(|(table, word)| {
            rows.get(*table)
                .map(|n| format!("{} {word}", exp_diagnostics::limits::group(*n)))
        })
        .collect();
    if !counts.is_empty() {
        text.push_str(" │ ");
        text.push_str(&counts.join(", "));
    }
    text
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
        Event::WaitingForParts {
            trial,
            missing,
            count,
            waited_ns,
            timeout_ns,
        } => {
            let parts: Vec<String> = missing.iter().map(|k| format!("{k}/{count}")).collect();
            format!(
                "trial #{trial}: waiting {} (at most {}) for split part{} {} to be ready",
                seconds(*waited_ns / 1_000_000_000 * 1_000_000_000),
                seconds(*timeout_ns),
                if missing.len() == 1 { "" } else { "s" },
                parts.join(", ")
            )
        }
        Event::TrialFinished {
            trial,
            status,
            error: Some(error),
            ..
        } => format!("trial #{trial} {status}: {error}"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_shows_its_time_left_and_what_its_workloads_did() {
        let rows = BTreeMap::from([
            ("mqtt_messages".to_string(), 1_234_567),
            ("system_metrics".to_string(), 12),
        ]);
        assert_eq!(
            trial_progress(12_300_000_000, Some(120_000_000_000), &rows),
            "12 s of 2 min (1 min 48 s left) │ 1,234,567 messages"
        );
        assert_eq!(trial_progress(3_500_000_000, None, &BTreeMap::new()), "3 s");
    }
}
