//! MQTT fleets: thousands of emulated devices publishing to a real broker.
//!
//! Building blocks of the fleet executor; each module owns one concern.

pub mod broker;
mod client;
pub mod device;
pub mod error;
pub mod fds;
mod frame;
pub mod pacer;
pub mod payload;
pub mod schedule;
pub mod subscriber;
pub mod tls;
pub mod url;
pub mod version;

pub use broker::{BrokerOptions, EmbeddedBroker};
pub use device::{Device, DeviceEvent, DeviceEventKind, DeviceOptions, LostReason, MessageTicket};
pub use error::MqttError;
pub use fds::{FdBudget, FdShortage, HeldFds};
pub use pacer::{Fire, FireSink, FnSink, Pacer, PacerConfig, PacerStats, SendOutcome};
pub use payload::{parse_header, Header, PayloadGenerator};
pub use schedule::{DeviceSchedule, FleetSchedule};
pub use subscriber::{Received, Subscriber, SubscriberEvent};
pub use tls::{Tls, TlsFiles};
pub use url::{Endpoint, Scheme};
pub use version::broker_version;
