use exp_syntax::units::Dimension::*;

use super::types::*;

pub const FLEET: BlockSchema = BlockSchema {
    kind: "fleet",
    doc: "MQTT devices, each its own client and TCP connection, publishing sensor payloads to a broker; every message's latency is recorded.",
    labelled: true,
    role: Role::Workload {
        shard_unit: "devices",
        shard_count: Some("devices"),
        metrics: &[
            "ack_latency",
            "ack_latency_p50",
            "ack_latency_p90",
            "ack_latency_p99",
            "delivery_latency",
            "delivery_latency_p50",
            "delivery_latency_p90",
            "delivery_latency_p99",
            "send_lateness",
            "send_lateness_p99",
            "throughput",
            "messages_lost",
            "disconnects",
            "outage",
            "runner_cpu_ratio",
            "runner_cpu_per_message",
            "runner_rss_per_device",
        ],
        row_metrics: &[
            RowMetric::new("ack_latency", Some(Duration), ("mqtt_messages", "ack_latency_ns"), "Time from a message's send to its acknowledgement by the broker (QoS 1) or to its write (QoS 0)."),
            RowMetric::new("delivery_latency", Some(Duration), ("mqtt_messages", "delivery_latency_ns"), "Time from a message's send to its delivery to the subscriber (`subscribe = true`)."),
            RowMetric::new("send_lateness", Some(Duration), ("mqtt_messages", "lateness_ns"), "How long after its scheduled time a message went out."),
        ],
        natural_end: NaturalEnd::When(&["messages"]),
    },
    props: &[
        Prop::required("devices", Ty::Int, "Number of emulated devices.").range(1.0, 1_000_000.0),
        Prop::required("gap", Ty::Dist(Some(Duration)), "Gap between a device's messages, drawn per message (a plain duration means constant).")
            .rule(ValueRule::DeviceGap),
        Prop::with_default("client_id", Ty::Str, "\"{fleet}-{index}\"", "Client id template: {fleet}, {index}."),
        Prop::with_default("topic", Ty::Str, "\"{fleet}/{device}/telemetry\"", "Topic template: {fleet}, {device}, {index}."),
        Prop::with_default("qos", Ty::Int, "1", "MQTT quality of service.").range(0.0, 2.0),
        Prop::with_default("keep_alive", Ty::Quantity(Duration), "30s", "MQTT keep-alive.").range(1e9, 65535e9),
        Prop::with_default("clean_session", Ty::Bool, "true", "Start each session clean."),
        Prop::with_default(
            "first_send",
            Ty::OneOf(&[Ty::Enum(&["uniform", "lockstep"]), Ty::Dist(Some(Duration))]),
            "uniform",
            "Offset of each device's first message: uniform over one mean gap, lockstep, or a distribution.",
        ),
        Prop::with_default(
            "payload",
            Ty::OneOf(&[Ty::Ctor("json"), Ty::Ctor("raw")]),
            "json(size = 128B, fields = [temperature, humidity])",
            "Message body: a JSON sensor record padded to an exact size, or raw bytes.",
        ),
        Prop::optional("messages", Ty::Int, "Messages per device; without it devices publish until the window ends.").at_least(1.0),
        Prop::with_default("connect_rate", Ty::Quantity(Rate), "400/s", "Connection ramp, devices per second.").at_least(0.001),
        Prop::with_default(
            "warmup",
            Ty::OneOf(&[Ty::Quantity(Percent), Ty::Quantity(Duration)]),
            "0%",
            "Messages left out of statistics (kept in the table, marked): a share of each device's first messages, or those scheduled in a span at the start of each interval (shorter than the interval).",
        )
        .range(0.0, 0.99),
        Prop::with_default("subscribe", Ty::Bool, "false", "Also subscribe to the fleet's topics and record delivery."),
        Prop::with_default("ack_timeout", Ty::Quantity(Duration), "10s", "A message not acknowledged by then is marked `timeout`.").at_least(1e6),
        Prop::optional("lateness_bound", Ty::Quantity(Duration), "A trial whose send-lateness p99 exceeds this is marked `contended`; without it, a tenth of the median gap, at least 1 ms.").at_least(0.0),
    ],
    variants: &[],
    parts: &["broker"],
};

/// Fleet properties the runtime checks each on its own, with nothing else
/// derived from two of them together: a sweep over them is stored as plan
/// fields (`exp_plan::Field`) instead of multiplying the fleet's variants.
/// Left out: `topic` (the payload's room in a packet), `first_send` (drawn
/// from the gap), `messages` (whether the fleet ends by itself), `warmup`
/// (a span must be shorter than the window), the timing and the broker.
pub const INDEPENDENT: &[&str] = &[
    "devices",
    "gap",
    "client_id",
    "qos",
    "keep_alive",
    "clean_session",
    "payload",
    "connect_rate",
    "subscribe",
    "ack_timeout",
    "lateness_bound",
];

pub const BROKER: BlockSchema = BlockSchema {
    kind: "broker",
    doc: "The broker a fleet publishes to. Without `url`, an embedded broker is started on 127.0.0.1.",
    labelled: false,
    role: Role::Part,
    props: &[
        Prop::optional(
            "url",
            Ty::Str,
            "`mqtt://host:port` or `mqtts://host:port` of an external broker.",
        ),
        Prop::optional(
            "port",
            Ty::Int,
            "Port of the embedded broker; by default a free port is chosen.",
        )
        .range(exp_plan::bounds::PORT.0, exp_plan::bounds::PORT.1),
        Prop::optional(
            "ca_file",
            Ty::Path,
            "`mqtts://`: PEM file of the CA certificates to trust; without it, the system's CA store.",
        ),
        Prop::optional(
            "client_cert",
            Ty::Path,
            "`mqtts://` with mutual TLS: PEM client certificate chain, leaf first (needs `client_key`).",
        ),
        Prop::optional(
            "client_key",
            Ty::Path,
            "`mqtts://` with mutual TLS: PEM private key of `client_cert` (PKCS#8, RSA or EC); never logged.",
        ),
        Prop::optional(
            "username_env",
            Ty::Str,
            "Name of the environment variable holding the user name (the value is never stored).",
        ),
        Prop::optional(
            "password_env",
            Ty::Str,
            "Name of the environment variable holding the password (the value is never stored).",
        ),
        Prop::with_default(
            "max_inflight",
            Ty::Int,
            "128",
            "Unacknowledged QoS 1/2 messages a device keeps on the wire (65,535 acts as 65,534: one packet id stays free). More wait in the device's queue, up to twice this (at least 16); past that a message is lost as `not_queued`. Only messages actually in flight take memory.",
        )
        .range(1.0, 65535.0),
        Prop::with_default("max_packet", Ty::Quantity(Bytes), "1MiB", "Largest packet accepted.")
            .range(1024.0, 268_435_455.0),
    ],
    variants: &[],
    parts: &[],
};
