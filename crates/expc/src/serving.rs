//! What `expc run` serves while it runs: `--metrics` (Prometheus' text
//! format of the live counters, on a thread of its own: the runner only
//! bumps the atomics it reads) and `--watch` (the live page, served by an
//! `expc watch` process at nice 19, which reads the run directory as any
//! reader would). Both are bound before the run starts, so a taken port or
//! a refused address stops `expc` before anything runs.

use std::net::TcpListener;
use std::time::Duration;

use exp_runtime::live::Live;

use crate::http::{bind, parse_address};

/// The page's refresh period under `expc run --watch`.
const WATCH_EVERY: Duration = Duration::from_secs(3);

/// The listeners `expc run` was asked for.
#[derive(Default)]
pub struct Serving {
    metrics: Option<TcpListener>,
    watch: Option<crate::watch::Server>,
}

impl Serving {
    /// Binds `--metrics ADDR` and `--watch [ADDR]` (loopback unless `beyond_loopback`).
    pub fn bind(metrics: Option<&str>, watch: Option<&str>, beyond_loopback: bool) -> Result<Serving, String> {
        let metrics = metrics
            .map(|text| bind(parse_address(text)?, beyond_loopback, "--metrics"))
            .transpose()?;
        let watch = watch
            .map(|text| {
                let listener = bind(parse_address(text)?, beyond_loopback, "--watch")?;
                crate::watch::Server::new(listener, WATCH_EVERY)
            })
            .transpose()?;
        Ok(Serving { metrics, watch })
    }

    /// Starts serving what the run's `live` counters and directory show,
    /// and says where.
    pub fn start(self, live: &Live) -> Result<(), String> {
        if let Some(listener) = self.metrics {
            let address = listener.local_addr().map_err(|e| e.to_string())?;
            crate::metrics::serve(listener, live.clone())?;
            errln!("metrics: http://{address}/metrics");
        }
        if let Some(server) = self.watch {
            errln!("watch: {}", server.url());
            server.start_for_run(live.clone())?;
        }
        Ok(())
    }
}
