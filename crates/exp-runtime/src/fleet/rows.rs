//! The rows the fleet's tasks hand each other and the tables: a message's
//! fate, a device's connection, and how they become table cells. Shared by
//! the pacer's sink (devices.rs), the collector and the writer threads
//! (tables.rs), and depending on none of them.

use exp_results::{Cell, RowError, Schema};

/// What became of a message, in the four words the report groups by; the
/// `reason` column says why for everything but `ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Announced to the collector, outcome not known yet (never written).
    Pending,
    /// Acknowledged (QoS 1/2) or written to the socket (QoS 0).
    Ok,
    /// No acknowledgement within `ack_timeout` (late acks keep their times).
    Timeout,
    /// Sent, but the broker lost it (a session that did not survive a reconnect).
    Error,
    /// Never sent: the device was not connected, or its client refused the message.
    Dropped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Ok => "ok",
            Status::Timeout => "timeout",
            Status::Error => "error",
            Status::Dropped => "dropped",
        }
    }
}

/// One message, ready for the `mqtt_messages` table. Times are on the trial clock.
#[derive(Debug, Clone)]
pub struct MessageRow {
    /// The device's number in the whole fleet, also in a split run's part.
    pub device: u32,
    pub seq: u64,
    pub scheduled_ns: u64,
    pub sent_ns: Option<u64>,
    pub lateness_ns: u64,
    pub ack_latency_ns: Option<u64>,
    pub delivery_latency_ns: Option<u64>,
    pub bytes: u64,
    pub status: Status,
    pub reason: Option<&'static str>,
    pub warmup: bool,
}

impl MessageRow {
    /// Its cells in `mqtt_messages`' column order (by position: this is the
    /// hot path; `message_cells_follow_the_schema` pins the order).
    pub(super) fn cells(self, fleet: &str) -> Vec<Cell> {
        let after_send = |latency: Option<u64>| self.sent_ns.zip(latency).map(|(s, l)| s.saturating_add(l));
        vec![
            fleet.into(),
            u64::from(self.device).into(),
            self.seq.into(),
            self.scheduled_ns.into(),
            self.sent_ns.into(),
            after_send(self.ack_latency_ns).into(),
            after_send(self.delivery_latency_ns).into(),
            self.lateness_ns.into(),
            self.ack_latency_ns.into(),
            self.delivery_latency_ns.into(),
            self.bytes.into(),
            self.status.as_str().into(),
            self.reason.into(),
            self.warmup.into(),
        ]
    }
}

/// How one device's connection went, for the `mqtt_devices` table.
pub struct Connection {
    /// The device's number in the whole fleet.
    pub device: u32,
    pub client_id: String,
    /// When its connect attempt began; `None` if it never began.
    pub connect_start_ns: Option<u64>,
    pub connected_ns: Option<u64>,
    pub fate: Fate,
}

/// Where a device stood when the connect phase ended: its `mqtt_devices`
/// status, and the reason on its messages if sending never began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    Connected,
    /// Refused, timed out, or no file descriptor for its socket.
    Failed(String),
    /// Its attempt had begun, and neither CONNACK nor failure came before
    /// the interval ended or the trial stopped.
    Connecting,
    /// Its place in the connect ramp came after the interval ended or the trial stopped.
    NotStarted,
}

impl Fate {
    /// The `status` column.
    pub fn status(&self) -> String {
        match self {
            Fate::Connected => "connected".into(),
            Fate::Failed(why) => format!("failed: {why}"),
            Fate::Connecting => "connecting".into(),
            Fate::NotStarted => "not_started".into(),
        }
    }

    /// The `reason` of its messages when the interval ended (or the trial
    /// stopped) before the send phase began: nothing was sent.
    pub fn unsent_reason(&self) -> &'static str {
        match self {
            // Connected, waiting for the others.
            Fate::Connected => "send_not_started",
            Fate::Failed(_) => "not_connected",
            Fate::Connecting | Fate::NotStarted => "connect_pending",
        }
    }
}

/// A device's troubles in one interval, for its `mqtt_devices` row.
#[derive(Debug, Default, Clone, Copy)]
pub struct DeviceTally {
    pub disconnects: u64,
    /// Connections after the first.
    pub reconnects: u64,
    /// Messages whose status is not `ok`, warm-up included.
    pub errors: u64,
}

/// The `mqtt_devices` row of one device in one interval, by column name of
/// `schema` (`devices_schema()`, made once per fleet, not per row).
pub fn device_row(schema: &Schema, fleet: &str, c: Connection, counts: DeviceTally) -> Result<Vec<Cell>, RowError> {
    schema.row([
        ("fleet", fleet.into()),
        ("device", u64::from(c.device).into()),
        ("client_id", c.client_id.into()),
        ("connect_start_ns", c.connect_start_ns.into()),
        ("connected_ns", c.connected_ns.into()),
        (
            "connect_latency_ns",
            c.connected_ns
                .zip(c.connect_start_ns)
                .map(|(end, start)| end.saturating_sub(start))
                .into(),
        ),
        ("disconnects", counts.disconnects.into()),
        ("reconnects", counts.reconnects.into()),
        ("errors", counts.errors.into()),
        ("status", c.fate.status().into()),
    ])
}

#[cfg(test)]
mod tests {
    use exp_results::schemas::messages_schema;

    use super::*;

    /// Message rows are the hot path, so they are built by position: this
    /// pins each position to its column by name.
    #[test]
    fn message_cells_follow_the_schema() {
        let row = MessageRow {
            device: 12,
            seq: 3,
            scheduled_ns: 4,
            sent_ns: Some(5),
            lateness_ns: 6,
            ack_latency_ns: Some(7),
            delivery_latency_ns: Some(8),
            bytes: 9,
            status: Status::Timeout,
            reason: Some("late_ack"),
            warmup: true,
        };
        let named = messages_schema()
            .row([
                ("fleet", "f".into()),
                ("device", 12u64.into()),
                ("seq", 3u64.into()),
                ("scheduled_ns", 4u64.into()),
                ("sent_ns", 5u64.into()),
                ("acked_ns", 12u64.into()),
                ("delivered_ns", 13u64.into()),
                ("lateness_ns", 6u64.into()),
                ("ack_latency_ns", 7u64.into()),
                ("delivery_latency_ns", 8u64.into()),
                ("bytes", 9u64.into()),
                ("status", "timeout".into()),
                ("reason", "late_ack".into()),
                ("warmup", true.into()),
            ])
            .unwrap();
        assert_eq!(row.cells("f"), named);
    }
}
