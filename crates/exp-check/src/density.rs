//! Schedule density (E0606): periods and gaps the runtime can honour. A
//! periodic window's intervals are expanded before a trial starts, and each
//! starts its workload anew; a device's gap of 0 sends as fast as the CPU
//! allows. The bounds are in `exp_diagnostics::limits`. Also: a fleet's
//! warm-up span must leave something of each interval to measure (E0501).

use exp_diagnostics::limits::{group, MAX_INTERVALS, MIN_MEAN_GAP_NS, MIN_PERIOD_PART_NS};
use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::{DistValue, Period, Warmup, Window};

use crate::checker::Checker;
use crate::value::display_quantity;
use exp_syntax::units::Dimension;

fn duration(ns: f64) -> String {
    display_quantity(Dimension::Duration, ns)
}

impl Checker<'_> {
    /// Reports a periodic window the runtime cannot honour; returns whether
    /// it can. `end` is where the window ends (its own end or the trial's).
    pub(crate) fn period_is_honourable(
        &mut self,
        period: &Period,
        spans: (Span, Span),
        start: u64,
        end: Option<u64>,
    ) -> bool {
        let (every_span, active_span) = spans;
        let pause = period.every_ns - period.active_ns;
        let problem = if period.active_ns < MIN_PERIOD_PART_NS {
            Some((
                active_span,
                format!("`active` is {}", duration(period.active_ns as f64)),
            ))
        } else if pause < MIN_PERIOD_PART_NS {
            Some((
                every_span,
                format!("the pause `every − active` is {}", duration(pause as f64)),
            ))
        } else {
            None
        };
        if let Some((span, what)) = problem {
            self.report(
                Diagnostic::error(
                    Code::E0606,
                    format!("{what}, shorter than {}", duration(MIN_PERIOD_PART_NS as f64)),
                )
                .primary(span, "too short to start the workload anew each period")
                .help("each interval starts the workload anew: make `active` and the pause at least 10ms"),
            );
            return false;
        }
        let intervals = end.map_or(1, |end| end.saturating_sub(start).div_ceil(period.every_ns));
        if intervals > MAX_INTERVALS {
            self.report(
                Diagnostic::error(
                    Code::E0606,
                    format!(
                        "the window has {} active intervals in one trial, more than {}",
                        group(intervals),
                        group(MAX_INTERVALS)
                    ),
                )
                .primary(every_span, "this period")
                .help("lengthen `every`, or shorten the window"),
            );
            return false;
        }
        true
    }

    /// Reports a device gap whose mean is below the limit (E0606 at `span`).
    pub(crate) fn check_device_gap(&mut self, gap: &DistValue, span: Span) {
        let Ok(sampler) = exp_stats::Sampler::new(gap) else {
            return; // reported by preflight, which builds the same sampler
        };
        // `None` is an infinite mean (a Pareto with shape ≤ 1): never too dense.
        let Some(mean) = sampler.mean() else { return };
        if mean >= MIN_MEAN_GAP_NS as f64 {
            return;
        }
        self.report(
            Diagnostic::error(
                Code::E0606,
                format!(
                    "a device's mean gap is {}, less than {}",
                    duration(mean.max(0.0)),
                    duration(MIN_MEAN_GAP_NS as f64)
                ),
            )
            .primary(span, "gaps too short to honour")
            .note("at most 1,000 messages per second per device; a gap of 0 would send as fast as the CPU allows")
            .help("for more load, add devices rather than shortening their gap"),
        );
    }

    /// Reports a warm-up span as long as the fleet's intervals (E0501 at
    /// `span`): every message would be warm-up, and nothing measured.
    pub(crate) fn check_warmup_span(&mut self, warmup: Warmup, window: &Window, trial_ns: Option<u64>, span: Span) {
        let Warmup::Ns(warmup_ns) = warmup else { return };
        let interval_ns = match &window.period {
            Some(period) => Some(period.active_ns),
            None => window
                .end_ns
                .or(trial_ns)
                .map(|end| end.saturating_sub(window.start_ns)),
        };
        let Some(interval_ns) = interval_ns.filter(|i| warmup_ns >= *i) else {
            return;
        };
        self.report(
            Diagnostic::error(
                Code::E0501,
                format!(
                    "`warmup` of {} covers the fleet's whole interval of {}",
                    duration(warmup_ns as f64),
                    duration(interval_ns as f64)
                ),
            )
            .primary(span, "every message would be warm-up")
            .help("shorten the warm-up, or give it as a share of each device's messages (`10%`)"),
        );
    }
}
