//! The reports as text, as `expc report` prints them: the run's header, the
//! MQTT and traffic sections, then each table's per-trial summaries, with
//! units read from the column names (`units.rs`). Every function returns a
//! `String`; the caller decides where it goes.

pub mod compare;
pub mod mqtt;
mod summary;
pub mod sweep;
pub mod traffic;
pub mod units;

use exp_results::RunView;

use crate::{MqttReport, RunSummary, TrafficReport};

/// The whole text of `expc report` for the run `view`, whose summary is
/// `summary`: the MQTT and traffic sections come before the tables, each
/// only if the run has its report.
pub fn report(
    view: &RunView,
    summary: &RunSummary,
    mqtt: Option<&MqttReport>,
    traffic: Option<&TrafficReport>,
) -> String {
    let mut sections = mqtt.map(mqtt::render).unwrap_or_default();
    sections.push_str(&traffic.map(traffic::render).unwrap_or_default());
    sections.push_str(&crate::validity::text(&view.manifest));
    summary::render(summary, &summary::status_note(view), &sections)
}
