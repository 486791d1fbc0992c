//! `expc serve`: the accepting side of replayed connections as a process of
//! its own, for a spec's `server = "host:port"` (replay across a real path;
//! no RTT emulation unless a delay stage sits in that path).
//!
//! With a secret (from an environment variable or a file, never from the
//! command line) it answers only preambles signed for sessions it opened;
//! a bind to anything but loopback refuses to start without one. Its
//! limits hold whatever a preamble asks. The threat model is in
//! docs/serve.md.

mod secret;
mod tally;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use exp_traffic::replay::{Acceptor, AcceptorConfig, Limits};
use tokio::signal::unix::{signal, SignalKind};

use crate::size::parse_size;
use tally::Tally;

/// How often the acceptor's finished connections are counted.
const POLL: Duration = Duration::from_millis(100);

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port). Anything but
    /// loopback needs a secret.
    #[arg(long, default_value = "127.0.0.1:0")]
    bind: SocketAddr,
    /// Environment variable holding the shared secret (at least 16 bytes).
    #[arg(long, default_value = "EXPC_SERVE_SECRET")]
    secret_env: String,
    /// File holding the shared secret (a regular file of at most 4 KiB,
    /// mode 600); created with a new random one when missing. Takes
    /// precedence over `--secret-env`.
    #[arg(long)]
    secret_file: Option<PathBuf>,
    /// Stop after this many replayed connections have finished.
    #[arg(long)]
    max_connections: Option<u64>,
    /// Stop after this long (e.g. `90s`, `10min`).
    #[arg(long = "for", value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
    /// Most bytes one connection may ask this acceptor to send; a preamble
    /// asking more is refused.
    #[arg(long, default_value = "1TiB", value_parser = parse_size)]
    max_bytes_per_connection: u64,
    /// Most bytes sent in total; then running connections are cut and new
    /// ones refused.
    #[arg(long, default_value = "10TiB", value_parser = parse_size)]
    max_total_bytes: u64,
    /// Most connections open at once.
    #[arg(long, default_value_t = Limits::default().concurrent)]
    max_concurrent: usize,
    /// Most connections open at once from one source address.
    #[arg(long, default_value_t = Limits::default().per_source)]
    max_per_source: usize,
    /// Longest a new connection may take to send its preamble.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    preamble_timeout: Duration,
    /// Longest preamble accepted.
    #[arg(long, default_value = "1MiB", value_parser = parse_size)]
    max_preamble: u64,
}

impl Args {
    fn limits(&self) -> Result<Limits, String> {
        let max_body = u64::from(exp_traffic::replay::preamble::MAX_BODY);
        if self.max_preamble > max_body {
            return Err(format!("--max-preamble may be at most {max_body} bytes"));
        }
        if self.max_concurrent == 0 || self.max_per_source == 0 {
            return Err("--max-concurrent and --max-per-source must be at least 1".into());
        }
        Ok(Limits {
            bytes_per_connection: self.max_bytes_per_connection,
            total_bytes: self.max_total_bytes,
            concurrent: self.max_concurrent,
            per_source: self.max_per_source,
            preamble_timeout: self.preamble_timeout,
            max_preamble: u32::try_from(self.max_preamble).unwrap_or(u32::MAX),
        })
    }
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let limits = args.limits()?;
    let secret = secret::resolve(args.secret_file.as_deref(), &args.secret_env)?;
    if secret.is_none() && !args.bind.ip().is_loopback() {
        return Err(format!(
            "refusing to listen on {} without a secret: anyone who can reach it could make it send \
             traffic. Set {} to a secret of at least 16 bytes, or pass --secret-file PATH (created \
             with a new secret if missing), and give the same secret to the spec's `secret_env`",
            args.bind, args.secret_env
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(serve(args, secret, limits))
}

async fn serve(args: Args, secret: Option<secret::Found>, limits: Limits) -> Result<ExitCode, String> {
    // Registered before the address is printed: a script that reads the
    // address and interrupts at once gets the closing report, not a kill.
    let interrupt = |kind| signal(kind).map_err(|e| format!("installing the signal handler: {e}"));
    let (mut sigint, mut sigterm) = (interrupt(SignalKind::interrupt())?, interrupt(SignalKind::terminate())?);
    let source = secret.as_ref().map(|s| s.source.clone());
    let config = AcceptorConfig {
        secret: secret.map(|s| s.secret),
        limits: limits.clone(),
    };
    let acceptor = Acceptor::bind_with(args.bind, config)
        .await
        .map_err(|e| e.to_string())?;
    // The address on stdout, alone on its line, so scripts can read it.
    outln!("{}", acceptor.local_addr());
    let how = match source {
        Some(source) => format!("signed preambles only, secret from {source}"),
        None => "no secret: unsigned preambles from anyone who can reach this loopback address".into(),
    };
    errln!(
        "expc serve: accepting replayed connections on {} ({how}; Ctrl-C or SIGTERM stops)",
        acceptor.local_addr()
    );
    errln!(
        "expc serve: limits: {} bytes per connection, {} bytes in total, {} open ({} per address), \
         preamble within {:?} and {} bytes",
        limits.bytes_per_connection,
        limits.total_bytes,
        limits.concurrent,
        limits.per_source,
        limits.preamble_timeout,
        limits.max_preamble
    );
    let deadline = args.duration.map(|d| tokio::time::Instant::now() + d);
    let mut tally = Tally::default();
    let reason = loop {
        tokio::select! {
            _ = sigint.recv() => break "interrupted",
            _ = sigterm.recv() => break "terminated",
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
    // What finished since the last poll (a Ctrl-C breaks before it).
    tally.add(acceptor.take_records());
    let sent_total = acceptor.sent_bytes();
    drop(acceptor);
    errln!("expc serve: {reason}; {}", tally.summary(sent_total));
    Ok(ExitCode::SUCCESS)
}
