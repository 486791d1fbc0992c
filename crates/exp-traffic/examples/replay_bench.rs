//! Replay benchmarks on loopback, both sides in-process (release build):
//!
//!   replay_bench start [RATE_PER_S] [SECONDS]   start accuracy: actual − planned start
//!   replay_bench hold [CONNECTIONS] [SECONDS] [TARGET]
//!                                               that many connections open at once
//!                                               (against `serve` at TARGET if given)
//!   replay_bench serve ADDR SECONDS             an acceptor alone, for SECONDS
//!   replay_bench bulk BYTES [TARGET]            one connection's throughput
//!                                               (against `serve` at TARGET if given)
//!
//! Each prints one line of `key=value` pairs (bench/traffic-replay.sh parses
//! them). Every mode is bounded by its arguments.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use exp_traffic::cvec::{Adu, Connection, Mode, Side};
use exp_traffic::replay::{replay, Acceptor, ConnectionStatus, ReplayConfig, ReplayResult};

fn adu(side: Side, recv_wait_us: u64, bytes: u64) -> Adu {
    Adu {
        side,
        send_wait_us: 0,
        recv_wait_us,
        bytes,
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank]
}

fn status_counts(result: &ReplayResult) -> String {
    let count = |s| result.connections.iter().filter(|r| r.status == s).count();
    format!(
        "complete={} short={} failed={}",
        count(ConnectionStatus::Complete),
        count(ConnectionStatus::Short),
        count(ConnectionStatus::Failed)
    )
}

/// Peak resident memory of this process (both sides), through exp-host.
fn peak_rss_mib() -> u64 {
    exp_host::peak_rss_bytes().unwrap_or(0) >> 20
}

/// Replays against an in-process acceptor, or the one at `target`.
async fn run(connections: Vec<Connection>, target: Option<&str>) -> Result<ReplayResult, String> {
    let (acceptor, mut config) = match target {
        None => {
            let acceptor = Acceptor::bind(parse("127.0.0.1:0")?).await.map_err(|e| e.to_string())?;
            let config = ReplayConfig::new(acceptor.local_addr());
            (Some(acceptor), config)
        }
        Some(target) => {
            let mut config = ReplayConfig::new(parse(target)?);
            config.fds_per_connection = 1;
            (None, config)
        }
    };
    config.connect_timeout = Duration::from_secs(30);
    let result = replay(connections, config).await.map_err(|e| e.to_string());
    drop(acceptor);
    result
}

fn parse(addr: &str) -> Result<SocketAddr, String> {
    addr.parse().map_err(|e| format!("address {addr:?}: {e}"))
}

/// An acceptor alone (what `expc serve` will run), for `seconds`.
async fn serve(addr: &str, seconds: u64) -> Result<String, String> {
    let acceptor = Acceptor::bind(parse(addr)?).await.map_err(|e| e.to_string())?;
    println!("listening={}", acceptor.local_addr());
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let records = acceptor.take_records();
    let complete = records
        .iter()
        .filter(|r| r.status == ConnectionStatus::Complete)
        .count();
    Ok(format!(
        "mode=serve connections={} complete={complete} peak_rss_mib={}",
        records.len(),
        peak_rss_mib()
    ))
}

/// `rate` new connections per second for `seconds`, each one small
/// request/response exchange.
async fn start_accuracy(rate: u64, seconds: u64) -> Result<String, String> {
    let total = rate * seconds;
    let gap = 1_000_000 / rate.max(1);
    let connections = (0..total)
        .map(|i| {
            let adus = vec![adu(Side::Initiator, 0, 100), adu(Side::Acceptor, 0, 1_000)];
            Connection::new(i * gap, Mode::Sequential, adus)
        })
        .collect();
    let result = run(connections, None).await?;
    let mut lateness: Vec<u64> = result
        .connections
        .iter()
        .map(|r| r.actual_start_us.saturating_sub(r.planned_start_us))
        .collect();
    lateness.sort_unstable();
    Ok(format!(
        "mode=start connections={total} rate={rate}/s late_p50_us={} late_p99_us={} late_max_us={} {}",
        percentile(&lateness, 0.5),
        percentile(&lateness, 0.99),
        lateness.last().copied().unwrap_or(0),
        status_counts(&result)
    ))
}

/// `count` connections opened over two seconds, each holding `seconds`
/// between its two exchanges, so all are open at once.
async fn hold(count: u64, seconds: u64, target: Option<&str>) -> Result<String, String> {
    let spread = 2_000_000 / count.max(1);
    let connections = (0..count)
        .map(|i| {
            let adus = vec![
                adu(Side::Initiator, 0, 10),
                adu(Side::Acceptor, 0, 10),
                adu(Side::Initiator, seconds * 1_000_000, 10),
                adu(Side::Acceptor, 0, 10),
            ];
            Connection::new(i * spread, Mode::Sequential, adus)
        })
        .collect();
    let result = run(connections, target).await?;
    Ok(format!(
        "mode=hold connections={count} peak_active={} nofile_limit={} peak_rss_mib={} {}",
        result.peak_active(),
        result.nofile_limit,
        peak_rss_mib(),
        status_counts(&result)
    ))
}

/// One connection sending `bytes` initiator → acceptor, as fast as it
/// goes; the acceptor in this process, or `serve` at `target`.
async fn bulk(bytes: u64, target: Option<&str>) -> Result<String, String> {
    // The acceptor answers one byte once everything has arrived, so the
    // time to that answer is the receiver's view, like iperf3's.
    let adus = vec![adu(Side::Initiator, 0, bytes), adu(Side::Acceptor, 0, 1)];
    let result = run(vec![Connection::new(0, Mode::Sequential, adus)], target).await?;
    let row = result.connections.first().ok_or("no connection row")?;
    let elapsed_us = row
        .last_byte_us
        .unwrap_or(row.end_us)
        .saturating_sub(row.first_byte_us.unwrap_or(row.actual_start_us));
    let gbit_per_s = row.sent_bytes as f64 * 8.0 / elapsed_us.max(1) as f64 / 1e3;
    Ok(format!(
        "mode=bulk bytes={} seconds={:.3} gbit_per_s={gbit_per_s:.3} {}",
        row.sent_bytes,
        elapsed_us as f64 / 1e6,
        status_counts(&result)
    ))
}

fn arg(args: &[String], index: usize, default: u64) -> Result<u64, String> {
    args.get(index)
        .map_or(Ok(default), |s| s.parse().map_err(|e| format!("argument {s:?}: {e}")))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // One worker, as `expc run` has (crates/expc/src/run.rs).
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        match args.first().map(String::as_str) {
            Some("start") => start_accuracy(arg(&args, 1, 1_000)?, arg(&args, 2, 10)?).await,
            Some("hold") => {
                let target = args.get(3).map(String::as_str);
                hold(arg(&args, 1, 10_000)?, arg(&args, 2, 5)?, target).await
            }
            Some("serve") => {
                let addr = args.get(1).map_or("127.0.0.1:0", String::as_str);
                serve(addr, arg(&args, 2, 60)?).await
            }
            Some("bulk") => bulk(arg(&args, 1, 10 << 30)?, args.get(2).map(String::as_str)).await,
            _ => Err(
                "usage: replay_bench start [RATE] [SECONDS] | hold [N] [SECONDS] [TARGET] \
                 | serve ADDR SECONDS | bulk [BYTES] [TARGET]"
                    .into(),
            ),
        }
    });
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("replay_bench: {e}");
            ExitCode::FAILURE
        }
    }
}
