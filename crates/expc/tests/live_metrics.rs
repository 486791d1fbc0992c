//! `expc run --metrics`: Debian's Prometheus scrapes a running fleet every
//! second, and its HTTP API gives back a sent-messages counter that rose
//! while the fleet ran and ended at the number of sent rows the run's
//! `mqtt_messages` table holds.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{expc, run_dir, text, trial_frames, u64_values, wait_for, Scratch};

const PROMETHEUS: &str = "/usr/bin/prometheus";

/// 1,000 messages/s for 8 s of a 12 s trial: the last scrapes see the
/// fleet's final counts.
const SPEC: &str = r#"
experiment "live-metrics" {
  duration = 12s
  fleet "sensors" {
    devices = 20
    gap     = constant(20ms)
    qos     = 1
    for     = 8s
  }
}
"#;

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A Prometheus server of the test's own, killed when dropped (its storage
/// is in the test's scratch directory, removed with it).
struct Prometheus {
    child: Child,
    port: u16,
}

impl Prometheus {
    fn start(dir: &Path, target_port: u16) -> Prometheus {
        let port = free_port();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: expc\n    static_configs:\n      - targets: ['127.0.0.1:{target_port}']\n"
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = Command::new(PROMETHEUS)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("tsdb").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let prometheus = Prometheus { child, port };
        wait_for("prometheus to be ready", Duration::from_secs(30), || {
            get(port, "/-/ready").filter(|(status, _)| *status == 200)
        });
        prometheus
    }

    /// The one value an instant query gives.
    fn value(&self, query: &str) -> Option<f64> {
        let (status, body) = get(self.port, &format!("/api/v1/query?query={}", encode(query)))?;
        assert_eq!(status, 200, "{query}: {body}");
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        let result = json["data"]["result"].as_array()?;
        result.first()?["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` from 127.0.0.1:port: the status and the body.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split(' ').nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
    Some((status, body))
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
#[cfg_attr(not(prometheus), ignore = "needs Debian's prometheus (apt-get install prometheus)")]
fn prometheus_scrapes_the_fleet_counters_and_they_end_at_the_table() {
    let scratch = Scratch::new("live-metrics");
    let spec = scratch.0.join("metrics.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let metrics_port = free_port();
    let prometheus = Prometheus::start(&scratch.0, metrics_port);
    // Prometheus hands new targets to its scrapers some seconds after it
    // starts: the run starts once the target is scraped (and found down).
    wait_for("prometheus to scrape the target", Duration::from_secs(30), || {
        prometheus.value("up{job=\"expc\"}")
    });

    let out = scratch.0.join("runs");
    let started = Instant::now();
    let run = expc()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .arg("--metrics")
        .arg(format!("127.0.0.1:{metrics_port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Seen while the fleet sends: scraped, and rising.
    let sent = "expc_fleet_messages_sent_total{workload=\"sensors\"}";
    let early = wait_for("a scrape with messages sent", Duration::from_secs(20), || {
        prometheus.value(sent).filter(|v| *v > 0.0)
    });
    let output = run.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(&format!("metrics: http://127.0.0.1:{metrics_port}/metrics")),
        "expc says where the metrics are: {}",
        text(&output)
    );
    let window = format!("[{}s]", started.elapsed().as_secs() + 5);
    let last = prometheus.value(&format!("max_over_time({sent}{window})")).unwrap();
    let first = prometheus.value(&format!("min_over_time({sent}{window})")).unwrap();
    let scrapes = prometheus.value(&format!("count_over_time({sent}{window})")).unwrap();
    assert!(
        scrapes >= 8.0,
        "scraped every second while the run went: {scrapes} scrapes"
    );
    assert!(
        first < last && early < last,
        "the counter rose: {first}, then {early}, then {last}"
    );

    let dir = run_dir(&out).unwrap();
    let rows = trial_frames(&dir, "mqtt_messages", 0);
    let table_rows: usize = rows.iter().map(exp_parquet::Frame::height).sum();
    let table_sent = u64_values(&rows, "sent_ns").len() as f64;
    eprintln!("sent counter scraped {scrapes} times: {first}, then {early}, at last {last}; the table's sent rows: {table_sent}");
    // The fleet stopped 4 s before the trial: the last scrapes saw its final count.
    assert_eq!(
        last, table_sent,
        "the counter's last value against the table's sent rows"
    );
    let scheduled = "expc_fleet_messages_scheduled_total{workload=\"sensors\"}";
    let rows_seen = prometheus
        .value(&format!("max_over_time({scheduled}{window})"))
        .unwrap();
    assert_eq!(rows_seen, table_rows as f64, "every row counted once");
    let acked = prometheus
        .value(&format!("max_over_time(expc_fleet_messages_acked_total{window})"))
        .unwrap();
    let lost = prometheus
        .value(&format!("max_over_time(expc_fleet_messages_lost_total{window})"))
        .unwrap();
    assert_eq!(acked + lost, rows_seen, "each row is ok or lost");
    let trials = prometheus
        .value(&format!(
            "max_over_time(expc_trials_finished_total{{status=\"complete\"}}{window})"
        ))
        .unwrap_or(0.0);
    // The trial ends a moment before the process: its count may or may not have been scraped.
    assert!(trials <= 1.0);
    let running = prometheus
        .value(&format!("max_over_time(expc_trial_running{window})"))
        .unwrap();
    assert_eq!(running, 1.0, "the trial was seen running");
}
