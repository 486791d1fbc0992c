//! A broker's own word on what it is: Mosquitto publishes its version,
//! retained, on `$SYS/broker/version` (`mosquitto version 2.0.11`), so a
//! subscriber gets it at once. Brokers without a `$SYS` tree publish
//! nothing there, and the answer is `None`.

use std::time::Duration;

use tokio::sync::mpsc::unbounded_channel;

use crate::{DeviceOptions, Endpoint, MqttError, Subscriber, SubscriberEvent};

/// Mosquitto's topic of its version.
pub const VERSION_TOPIC: &str = "$SYS/broker/version";

/// At most this much of the payload is kept (a version is a line).
const MAX_VERSION_BYTES: usize = 200;

/// The broker's version from [`VERSION_TOPIC`]: connects as `options`'
/// client, waits at most `wait` for the retained message, disconnects.
/// `Err` says why there is none (refused, nothing published in time).
pub async fn broker_version(endpoint: &Endpoint, options: DeviceOptions, wait: Duration) -> Result<String, MqttError> {
    let (events, mut received) = unbounded_channel();
    let subscriber = Subscriber::connect(endpoint, options, vec![VERSION_TOPIC.to_string()], events, wait).await?;
    let deadline = tokio::time::Instant::now() + wait;
    let mut version = Err(MqttError::NoVersion {
        topic: VERSION_TOPIC,
        waited_ms: wait.as_millis(),
    });
    while let Ok(Some(event)) = tokio::time::timeout_at(deadline, received.recv()).await {
        if let SubscriberEvent::Message(message) = event {
            let text = String::from_utf8_lossy(&message.payload);
            let line: String = text.trim().chars().filter(|c| !c.is_control()).collect();
            let mut end = line.len().min(MAX_VERSION_BYTES);
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            version = Ok(line[..end].to_string());
            break;
        }
    }
    subscriber.close().await;
    version
}
