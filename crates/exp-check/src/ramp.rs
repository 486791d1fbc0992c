//! W0803: a fleet whose connect ramp is no shorter than its window. Devices
//! connect one after another at `connect_rate`, and none sends until every
//! one has connected or failed, so such a window ends during the connect
//! phase: nothing is sent and the trial fails.
//!
//! A sweep warns once per fleet block: for the variant (and the fields'
//! values) whose ramp is longest against its window. `devices` and
//! `connect_rate` swept as fields are taken at their largest and smallest
//! value, the slowest ramp any point can have.

use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{Field, Variants, Workload, WorkloadConfig};
use exp_syntax::ast::Block;
use exp_syntax::units::Dimension;

use crate::checker::Checker;
use crate::query::attributes;
use crate::value::display_quantity;

/// The slowest ramp of one variant: devices, rate (per second), window (ns).
struct Ramp {
    devices: f64,
    rate_per_s: f64,
    window_ns: f64,
}

impl Ramp {
    fn ns(&self) -> f64 {
        self.devices / self.rate_per_s * 1e9
    }
}

impl Checker<'_> {
    /// Warns (W0803 at `connect_rate`, or the block) when a variant's
    /// ramp, `devices / connect_rate`, is at least its window.
    pub(crate) fn check_connect_ramp(
        &mut self,
        block: &Block,
        variants: &Variants<Option<Workload>>,
        trial_ns: Option<u64>,
    ) {
        let field_values = |pointer: &str| -> Vec<f64> {
            let field = variants.fields.iter().find(|f| f.pointers.iter().any(|p| p == pointer));
            field.map_or_else(Vec::new, |f: &Field| {
                f.values.iter().filter_map(serde_json::Value::as_f64).collect()
            })
        };
        let devices = field_values("/config/fleet/devices");
        let rates = field_values("/config/fleet/connect_rate_per_s");
        let worst = variants
            .variants
            .iter()
            .flatten()
            .filter_map(|workload| {
                let WorkloadConfig::Fleet(fleet) = &workload.config else {
                    return None;
                };
                let window = &workload.window;
                let window_ns = match &window.period {
                    Some(period) => period.active_ns,
                    None => window.end_ns.or(trial_ns)?.saturating_sub(window.start_ns),
                };
                Some(Ramp {
                    devices: devices.iter().copied().fold(f64::from(fleet.devices), f64::max),
                    rate_per_s: rates.iter().copied().fold(fleet.connect_rate_per_s, f64::min),
                    window_ns: window_ns as f64,
                })
            })
            .filter(|ramp| ramp.rate_per_s > 0.0 && ramp.ns() >= ramp.window_ns)
            .max_by(|a, b| (a.ns() / a.window_ns).total_cmp(&(b.ns() / b.window_ns)));
        let Some(ramp) = worst else { return };
        let attrs = attributes(block);
        // At what varies, if a sweep does; otherwise at the rate to raise.
        let order = if devices.is_empty() {
            ["connect_rate", "devices"]
        } else {
            ["devices", "connect_rate"]
        };
        let span = order
            .iter()
            .find_map(|name| attrs.get(name))
            .map_or(block.kind.span, |a| a.value.span);
        let duration = |ns: f64| display_quantity(Dimension::Duration, ns.round());
        self.report(
            Diagnostic::warning(
                Code::W0803,
                format!(
                    "connecting {} devices at {} takes {}, no shorter than the fleet's window of {}",
                    ramp.devices,
                    display_quantity(Dimension::Rate, ramp.rate_per_s),
                    duration(ramp.ns()),
                    duration(ramp.window_ns)
                ),
            )
            .primary(span, "the window ends before every device has connected")
            .note("no device sends until every one has connected or failed: nothing would be sent, and the trial fails")
            .help("raise `connect_rate`, lengthen the window, or use fewer devices"),
        );
    }
}
