//! When a workload is active within a trial: its window, expanded into
//! intervals, on the trial's clock (scaled by `--time-scale`).

use exp_plan::Window;

/// One active interval, in ns since the trial's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub start_ns: u64,
    /// `None`: until the trial ends or the workload finishes by itself.
    pub end_ns: Option<u64>,
}

/// Scales a planned time by `--time-scale` (1.0 keeps the plan's times).
pub fn scale(ns: u64, time_scale: f64) -> u64 {
    if time_scale == 1.0 {
        ns
    } else {
        (ns as f64 * time_scale).round() as u64
    }
}

/// The active intervals of `window` in a trial of `trial_ns` (scaled).
/// The compiler guarantees a periodic window is bounded.
pub fn intervals(window: &Window, trial_ns: Option<u64>, time_scale: f64) -> Vec<Interval> {
    let start = scale(window.start_ns, time_scale);
    let end = match (window.end_ns.map(|e| scale(e, time_scale)), trial_ns) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let Some(period) = &window.period else {
        return vec![Interval {
            start_ns: start,
            end_ns: end,
        }];
    };
    let every = scale(period.every_ns, time_scale).max(1);
    let active = scale(period.active_ns, time_scale);
    let Some(end) = end else {
        return vec![Interval {
            start_ns: start,
            end_ns: Some(start.saturating_add(active)),
        }];
    };
    // At most one interval past the limit: preflight refuses denser windows
    // (`plan_limits`), and a schedule printed before it stays small.
    (0..=exp_diagnostics::limits::MAX_INTERVALS)
        .map(|k: u64| start.saturating_add(k.saturating_mul(every)))
        .take_while(|s| *s < end)
        .map(|s| Interval {
            start_ns: s,
            end_ns: Some(s.saturating_add(active).min(end)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use exp_plan::Period;

    use super::*;

    const S: u64 = 1_000_000_000;

    fn window(start: u64, end: Option<u64>, period: Option<(u64, u64)>) -> Window {
        Window {
            start_ns: start * S,
            end_ns: end.map(|e| e * S),
            period: period.map(|(every, active)| Period {
                every_ns: every * S,
                active_ns: active * S,
            }),
        }
    }

    #[test]
    fn a_plain_window_ends_at_its_end_or_the_trial() {
        assert_eq!(
            intervals(&window(10, Some(40), None), Some(60 * S), 1.0),
            vec![Interval {
                start_ns: 10 * S,
                end_ns: Some(40 * S)
            }]
        );
        assert_eq!(
            intervals(&window(10, None, None), Some(60 * S), 1.0),
            vec![Interval {
                start_ns: 10 * S,
                end_ns: Some(60 * S)
            }]
        );
        assert_eq!(
            intervals(&window(0, None, None), None, 1.0),
            vec![Interval {
                start_ns: 0,
                end_ns: None
            }]
        );
    }

    #[test]
    fn periodic_windows_repeat_and_clip_at_the_end() {
        // 5 s of every 35 s, from 0 to 100 s: 0–5, 35–40, 70–75.
        let got = intervals(&window(0, Some(100), Some((35, 5))), Some(120 * S), 1.0);
        let starts: Vec<_> = got.iter().map(|i| (i.start_ns / S, i.end_ns.unwrap() / S)).collect();
        assert_eq!(starts, vec![(0, 5), (35, 40), (70, 75)]);
        // The last activation is cut by the window's end.
        let got = intervals(&window(0, Some(72), Some((35, 5))), None, 1.0);
        assert_eq!(got.last().unwrap().end_ns, Some(72 * S));
    }

    #[test]
    fn time_scale_shrinks_everything() {
        let got = intervals(&window(60, Some(120), None), Some(180 * S), 0.05);
        assert_eq!(
            got,
            vec![Interval {
                start_ns: 3 * S,
                end_ns: Some(6 * S)
            }]
        );
    }
}
