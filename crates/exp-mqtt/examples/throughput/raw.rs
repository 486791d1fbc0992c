//! `--raw`: the same closed loop on bare rumqttc clients, each device's task
//! republishing itself on PUBACK. No tracker, no event channel: the baseline
//! that shows what exp-mqtt's `Device` costs on top of rumqttc.

use std::time::{Duration, Instant};

use bytes::Bytes;
use exp_mqtt::Endpoint;
use rumqttc::{AsyncClient, Event, MqttOptions, NetworkOptions, Outgoing, Packet, QoS};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;

use crate::{host, Args, BoxError, Report};

/// What one device's task counted.
#[derive(Default)]
struct Counts {
    done_in_window: u64,
    published: u64,
    latencies_us: Vec<u32>,
}

pub async fn run(args: &Args, endpoint: &Endpoint, cpu: host::BrokerCpu) -> Result<Report, BoxError> {
    // The measured window's end, sent once every device is connected.
    let (start_tx, start_rx) = watch::channel(None::<Instant>);
    // QoS 1 only (checked in parse_args): the loop below counts PUBACKs.
    let qos = QoS::AtLeastOnce;
    let payload = Bytes::from(vec![b'x'; args.payload]);
    let mut tasks = JoinSet::new();
    for d in 0..args.devices {
        let mut opts = MqttOptions::new(format!("throughput-raw-{d}"), endpoint.host.clone(), endpoint.port);
        opts.set_keep_alive(Duration::from_secs(30));
        opts.set_inflight(args.window);
        // As for `Device`s: max_packet_bytes (payload + 64) plus exp-mqtt's 1 KiB for headers.
        opts.set_max_packet_size(args.payload + 1088, args.payload + 1088);
        let (client, mut eventloop) = AsyncClient::new(opts, usize::from(args.window) * 2);
        let mut net = NetworkOptions::new();
        net.set_tcp_nodelay(true);
        eventloop.set_network_options(net);
        let (ready_tx, ready_rx) = oneshot::channel();
        let mut start_rx = start_rx.clone();
        let (topic, payload, window) = (format!("bench/{d}"), payload.clone(), args.window);
        tasks.spawn(async move {
            let mut counts = Counts::default();
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => break,
                    Ok(_) => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
            let _ = ready_tx.send(());
            let end = *start_rx.wait_for(Option::is_some).await.map_err(|e| e.to_string())?;
            let end = end.unwrap_or_else(Instant::now);
            let publish = |counts: &mut Counts| {
                counts.published += 1;
                client
                    .try_publish(&topic, qos, false, payload.to_vec())
                    .map_err(|e| e.to_string())
            };
            for _ in 0..window {
                publish(&mut counts)?;
            }
            // Write instants by packet id (rumqttc numbers them 1..=window).
            let mut written = vec![Instant::now(); usize::from(window) + 1];
            let mut outstanding = u64::from(window);
            while outstanding > 0 {
                let now = Instant::now();
                match eventloop.poll().await.map_err(|e| e.to_string())? {
                    Event::Outgoing(Outgoing::Publish(pkid)) => written[usize::from(pkid)] = now,
                    Event::Incoming(Packet::PubAck(ack)) => {
                        outstanding -= 1;
                        if now <= end {
                            counts.done_in_window += 1;
                            let us = now.duration_since(written[usize::from(ack.pkid)]).as_micros();
                            counts.latencies_us.push(u32::try_from(us).unwrap_or(u32::MAX));
                            publish(&mut counts)?;
                            outstanding += 1;
                        }
                    }
                    _ => {}
                }
            }
            let _ = client.try_disconnect();
            while !matches!(
                eventloop.poll().await,
                Ok(Event::Outgoing(Outgoing::Disconnect)) | Err(_)
            ) {}
            Ok(counts)
        });
        ready_rx.await.map_err(|_| format!("device {d} did not connect"))?;
    }

    let cpu0 = host::sample(cpu)?;
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(args.seconds);
    start_tx.send(Some(end))?;
    tokio::time::sleep_until(end.into()).await;
    let cpu1 = host::sample(cpu)?;
    let mut report = Report {
        elapsed: start.elapsed(),
        cpu: cpu1.since(&cpu0),
        ..Report::default()
    };
    while let Some(counts) = tasks.join_next().await {
        let counts = counts??;
        report.done_in_window += counts.done_in_window;
        report.published += counts.published;
        report.latencies_us.extend(counts.latencies_us);
    }
    Ok(report)
}
