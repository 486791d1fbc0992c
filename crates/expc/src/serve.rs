//! `expc serve`: the accepting side of replayed connections as a process of
//! its own, for a spec's `server = "host:port"` (replay across a real path;
//! no RTT emulation unless a delay stage sits in that path).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use exp_traffic::replay::{Acceptor, AcceptorRecord, ConnectionStatus};

/// How often the acceptor's finished connections are counted.
const POLL: Duration = Duration::from_millis(100);

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    bind: SocketAddr,
    /// Stop after this many connections have finished.
    #[arg(long)]
    max_connections: Option<u64>,
    /// Stop after this long (e.g. `90s`, `10min`).
    #[arg(long = "for", value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
}

#[derive(Default)]
struct Tally {
    connections: u64,
    complete: u64,
    short: u64,
    failed: u64,
    received: u64,
    sent: u64,
}

impl Tally {
    fn add(&mut self, records: Vec<AcceptorRecord>) {
        for r in records {
            self.connections += 1;
            self.received += r.received_bytes;
            self.sent += r.sent_bytes;
            match r.status {
                ConnectionStatus::Complete => self.complete += 1,
                ConnectionStatus::Short => self.short += 1,
                ConnectionStatus::Failed => {
                    self.failed += 1;
                    if let Some(error) = r.error {
                        eprintln!("connection from {}: {error}", r.peer);
                    }
                }
            }
        }
    }
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(serve(args))
}

async fn serve(args: Args) -> Result<ExitCode, String> {
    let acceptor = Acceptor::bind(args.bind).await.map_err(|e| e.to_string())?;
    // The address on stdout, alone on its line, so scripts can read it.
    println!("{}", acceptor.local_addr());
    eprintln!(
        "expc serve: accepting replayed connections on {} (Ctrl-C stops)",
        acceptor.local_addr()
    );
    let deadline = args.duration.map(|d| tokio::time::Instant::now() + d);
    let mut tally = Tally::default();
    // Created once, so a Ctrl-C between polls is not missed.
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let reason = loop {
        tokio::select! {
            _ = &mut ctrl_c => break "interrupted",
            _ = tokio::time::sleep(POLL) => {}
        }
        tally.add(acceptor.take_records());
        if args.max_connections.is_some_and(|max| tally.connections >= max) {
            break "reached --max-connections";
        }
        if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
            break "reached --for";
        }
    };
    drop(acceptor);
    eprintln!(
        "expc serve: {reason}; {} connections ({} complete, {} short, {} failed), {} bytes received, {} sent",
        tally.connections, tally.complete, tally.short, tally.failed, tally.received, tally.sent
    );
    Ok(ExitCode::SUCCESS)
}
