//! The rows of an interval whose send phase never began: the interval
//! ended (or the trial stopped) while devices were still connecting, so
//! the pacer never ran. Every message the devices were scheduled to send
//! still gets its row, `dropped`, with its device's reason
//! ([`Fate::unsent_reason`](super::rows::Fate::unsent_reason)).
//!
//! Which messages: each device's schedule (a pure function of the seed and
//! the device's number) laid from the interval's planned start, as though no
//! connect phase came first, up to the interval's end (or the moment the
//! trial stopped) and `messages` per device. They are written in batches
//! straight to the table from a blocking thread, which waits while the
//! store's queue is full, so memory stays bounded however many there are.

use exp_mqtt::FleetSchedule;
use exp_results::TableSink;

use super::collector::{Totals, BATCH_ROWS};
use super::devices::WarmupRule;
use super::rows::{MessageRow, Status};
use crate::cancel::{Cancel, Level};
use crate::executor::ExecError;
use crate::live::WorkloadCounters;

/// What the rows are laid out from.
pub struct NeverSent {
    pub fleet: String,
    pub schedule: FleetSchedule,
    /// The schedule's origin: the interval's start, on the trial clock.
    pub origin_ns: u64,
    /// Messages scheduled at or after this are not part of the interval.
    pub cut_ns: u64,
    /// `messages` per device, if the fleet has it.
    pub messages: Option<u64>,
    pub warmup: WarmupRule,
}

impl NeverSent {
    /// The rows of one device, in `seq` order.
    pub fn rows(&self, device: u32, reason: &'static str) -> impl Iterator<Item = MessageRow> + '_ {
        let offsets = self.schedule.device(device).map(|o| self.origin_ns.saturating_add(o));
        let in_interval = offsets.take_while(|&at| at < self.cut_ns);
        (0..self.messages.unwrap_or(u64::MAX))
            .zip(in_interval)
            .map(move |(seq, scheduled_ns)| MessageRow {
                device,
                seq,
                scheduled_ns,
                sent_ns: None,
                lateness_ns: 0,
                ack_latency_ns: None,
                delivery_latency_ns: None,
                bytes: 0,
                status: Status::Dropped,
                reason: Some(reason),
                warmup: self.warmup.covers(seq, scheduled_ns),
            })
    }

    /// Writes the rows of `devices` (number and reason) to `sink`, adding
    /// them to `totals` and the `live` counters as the collector would;
    /// stops early only when the run is being killed (a second Ctrl-C).
    pub fn write(
        &self,
        devices: &[(u32, &'static str)],
        sink: &TableSink,
        cancel: &Cancel,
        (totals, live): (&mut Totals, &WorkloadCounters),
    ) -> Result<(), ExecError> {
        let mut batch = sink.schema().batch();
        for row in devices.iter().flat_map(|&(device, reason)| self.rows(device, reason)) {
            count(totals, &row);
            live.message(false, false, None);
            batch.push_row(row.cells(&self.fleet))?;
            if batch.rows() >= BATCH_ROWS {
                sink.write(std::mem::replace(&mut batch, sink.schema().batch()))?;
                if cancel.level() == Level::Kill {
                    return Ok(());
                }
            }
        }
        sink.write(batch)?;
        Ok(())
    }
}

/// A dropped row in the totals: the device's errors, and the fleet's
/// messages and losses unless it is warm-up.
fn count(totals: &mut Totals, row: &MessageRow) {
    totals.devices.entry(row.device).or_default().errors += 1;
    if !row.warmup {
        totals.messages += 1;
        totals.lost += 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use exp_plan::{Dist, DistValue, FirstSend, Unit};

    use super::*;

    fn never_sent(first_send: &FirstSend, messages: Option<u64>) -> NeverSent {
        let gap = DistValue {
            unit: Unit::Ns,
            dist: Dist::Constant { value: 1e6 },
        };
        NeverSent {
            fleet: "plant".into(),
            schedule: FleetSchedule::new(&gap, first_send, 7).unwrap(),
            origin_ns: 5_000,
            cut_ns: 5_000 + 10_000_000,
            messages,
            warmup: WarmupRule::FirstMessages(2),
        }
    }

    #[test]
    fn a_device_has_a_row_for_each_message_of_its_schedule_in_the_interval() {
        let unsent = never_sent(&FirstSend::Lockstep, None);
        let rows: Vec<MessageRow> = unsent.rows(12, "connect_pending").collect();
        // 1 ms apart from the interval's start, the last one before its end at 10 ms.
        let times: Vec<u64> = rows.iter().map(|r| r.scheduled_ns).collect();
        assert_eq!(times, (0..10).map(|k| 5_000 + k * 1_000_000).collect::<Vec<_>>());
        assert!(rows
            .iter()
            .enumerate()
            .all(|(k, r)| r.seq == k as u64 && r.device == 12));
        assert!(rows
            .iter()
            .all(|r| r.status == Status::Dropped && r.reason == Some("connect_pending") && r.sent_ns.is_none()));
        let warmup: Vec<bool> = rows.iter().map(|r| r.warmup).collect();
        assert_eq!(warmup[..3], [true, true, false]);
        // `messages` bounds them too.
        assert_eq!(never_sent(&FirstSend::Lockstep, Some(3)).rows(0, "x").count(), 3);
    }

    #[test]
    fn the_rows_follow_the_devices_own_schedule() {
        let unsent = never_sent(&FirstSend::Uniform, None);
        let times: Vec<u64> = unsent.rows(3, "not_connected").map(|r| r.scheduled_ns).collect();
        let schedule: Vec<u64> = unsent
            .schedule
            .device(3)
            .map(|o| 5_000 + o)
            .take_while(|&t| t < unsent.cut_ns)
            .collect();
        assert_eq!(times, schedule);
        let mut totals = Totals::default();
        for row in unsent.rows(3, "not_connected") {
            count(&mut totals, &row);
        }
        assert_eq!(totals.devices[&3].errors, times.len() as u64);
        assert_eq!(
            (totals.messages, totals.lost),
            (times.len() as u64 - 2, times.len() as u64 - 2)
        );
    }
}
