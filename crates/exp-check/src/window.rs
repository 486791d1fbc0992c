//! A workload's time window: `at`, `for`, `until`, `every` and `active`
//! lowered, checked against each other, against the trial's `duration` and
//! for a workload that would never end.

use exp_diagnostics::limits::MAX_PLAN_INTEGER;
use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::{Period, Window};
use exp_syntax::ast::Block;
use serde_json::{Map, Value as Json};

use crate::checker::{Checker, Scope};
use crate::query::attributes;
use crate::registry::{NaturalEnd, TIMING};

/// A time in ns with the span of the value that wrote it.
type Time = (u64, Span);

/// The timing attributes of a block, lowered; `None` where not written.
struct Times {
    at: Option<Time>,
    duration: Option<Time>,
    until: Option<Time>,
    every: Option<Time>,
    active: Option<Time>,
}

impl Checker<'_> {
    /// The time window from `at`, `for`, `until`, `every` and `active`.
    pub(crate) fn window(
        &mut self,
        block: &Block,
        scope: Scope,
        trial_ns: Option<u64>,
        natural_end: NaturalEnd,
        config: Option<&Map<String, Json>>,
    ) -> Option<Window> {
        let times = self.window_times(block, scope)?;
        let start = times.at.map_or(0, |(ns, _)| ns);
        let end = self.window_end(start, times.duration, times.until)?;
        let period = self.window_period(times.every, times.active)?;
        if let Some((period, spans)) = &period {
            let end = end.map(|(e, _)| e).or(trial_ns);
            if !self.period_is_honourable(period, *spans, start, end) {
                return None;
            }
        }
        let period = period.map(|(p, _)| p);
        if !self.window_inside_trial(trial_ns, times.at, end) {
            return None;
        }
        if end.is_none() && trial_ns.is_none() && !ends_by_itself(natural_end, config) && !self.experiment_damaged {
            self.report(
                Diagnostic::error(Code::E0605, format!("`{}` never ends", block.kind.name))
                    .primary(block.kind.span, "no end")
                    .help("give the experiment a `duration`, or this block `for` or `until`"),
            );
            return None;
        }
        Some(Window {
            start_ns: start,
            end_ns: end.map(|(e, _)| e),
            period,
        })
    }

    /// The block's timing attributes, all lowered; `None` once any is reported.
    fn window_times(&mut self, block: &Block, scope: Scope) -> Option<Times> {
        let attrs = attributes(block);
        let mut ok = true;
        let mut get = |this: &mut Self, name: &str| -> Option<Time> {
            let attr = attrs.get(name)?;
            let prop = TIMING.iter().find(|p| p.name == name)?;
            match this.lower_prop(Some(attr), prop, scope) {
                Some(json) => json.as_u64().map(|ns| (ns, attr.value.span)),
                None => {
                    ok = false;
                    None
                }
            }
        };
        let at = get(self, "at");
        let duration = get(self, "for");
        let until = get(self, "until");
        let every = get(self, "every");
        let active = get(self, "active");
        ok.then_some(Times {
            at,
            duration,
            until,
            every,
            active,
        })
    }

    /// The window's end from `for` or `until` (`Some(None)`: neither); `None` once reported (E0503, E0603).
    fn window_end(&mut self, start: u64, duration: Option<Time>, until: Option<Time>) -> Option<Option<Time>> {
        let end = match (duration, until) {
            (Some((_, a)), Some((_, b))) => {
                self.report(
                    Diagnostic::error(Code::E0503, "`for` and `until` both set the end")
                        .primary(b, "`until` given")
                        .secondary(a, "`for` given")
                        .help("keep one of them"),
                );
                return None;
            }
            (Some((ns, span)), None) => Some((start.saturating_add(ns), span)),
            (None, Some((ns, span))) => Some((ns, span)),
            (None, None) => None,
        };
        if let Some((end_ns, span)) = end {
            // `at + for` can pass what a plan holds although each is within
            // it; preflight would refuse the plan (E1005).
            if end_ns as f64 > MAX_PLAN_INTEGER {
                self.report(
                    Diagnostic::error(Code::E0506, "the time window ends too late for a plan")
                        .primary(span, "`at` + `for` is past 2^53 − 1 ns")
                        .note("a plan's times are at most 2^53 − 1 ns, about 104 days")
                        .help("shorten `for` or start the window earlier"),
                );
                return None;
            }
            if end_ns <= start {
                self.report(
                    Diagnostic::error(Code::E0603, "the time window is empty")
                        .primary(span, "ends where or before it starts")
                        .with_help(Some("the window must end after `at`".to_string())),
                );
                return None;
            }
        }
        Some(end)
    }

    /// The period from `every` and `active` (`Some(None)`: neither); `None` once reported (E0602, E0604).
    fn window_period(&mut self, every: Option<Time>, active: Option<Time>) -> Option<Option<(Period, (Span, Span))>> {
        match (every, active) {
            (Some((every_ns, every_span)), Some((active_ns, active_span))) => {
                if active_ns >= every_ns {
                    self.report(
                        Diagnostic::error(Code::E0602, "`active` must be shorter than `every`")
                            .primary(active_span, "active for the whole period or longer")
                            .secondary(every_span, "the period"),
                    );
                    return None;
                }
                Some(Some((Period { every_ns, active_ns }, (every_span, active_span))))
            }
            (Some((_, span)), None) | (None, Some((_, span))) => {
                self.report(
                    Diagnostic::error(Code::E0604, "`every` and `active` go together")
                        .primary(span, "only one of them given")
                        .help("e.g. `every = 35s` with `active = 5s`"),
                );
                None
            }
            (None, None) => Some(None),
        }
    }

    /// E0601 unless the window lies inside the trial; returns whether it does.
    fn window_inside_trial(&mut self, trial_ns: Option<u64>, at: Option<Time>, end: Option<Time>) -> bool {
        let Some(trial) = trial_ns else {
            return true;
        };
        let late = end
            .filter(|(e, _)| *e > trial)
            .map(|(_, s)| s)
            .or(at.filter(|(s, _)| *s >= trial).map(|(_, s)| s));
        let Some(span) = late else {
            return true;
        };
        let trial_text = crate::value::display_quantity(exp_syntax::units::Dimension::Duration, trial as f64);
        self.report(
            Diagnostic::error(
                Code::E0601,
                format!("the time window reaches past the trial's end at {trial_text}"),
            )
            .primary(span, "outside the trial")
            .help("shorten the window or lengthen the experiment's `duration`"),
        );
        false
    }
}

/// Whether a workload without `for`/`until` ends by itself (some do once e.g. `messages` is set).
fn ends_by_itself(natural_end: NaturalEnd, config: Option<&Map<String, Json>>) -> bool {
    match natural_end {
        NaturalEnd::Always => true,
        NaturalEnd::Never => false,
        // No config: a property failed and was reported; whether the block
        // ends by itself is unknown, and "never ends" would only mislead
        // (`documents = 500` set beside a failed `split_at`).
        NaturalEnd::When(props) => config.is_none_or(|c| {
            props.iter().any(|p| {
                c.iter()
                    .any(|(k, v)| (k == p || k.starts_with(&format!("{p}_"))) && !v.is_null())
            })
        }),
    }
}
