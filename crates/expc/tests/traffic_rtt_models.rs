//! The study's RTT models end to end (`expc run`, network namespaces and the
//! delay stage; needs root, reported as ignored without it): on a trace
//! whose short connections have short RTTs, `paths(count = 10)` lengthens
//! the median `blk_conc` duration by a clear factor over per-connection
//! RTTs, while `assign = by_rtt` stays within 10 % of them.
//!
//! The factor follows from the trace: 60 % of the connections are near
//! (about 200 ms, 2 round trips), so the per-connection median is a near
//! connection, about 440 ms. Ten paths at the RTT quantiles put 60 % of
//! the connections on near paths whatever their own RTT, so the median
//! becomes a far connection (4 round trips) on a near path: about 2×.
//!
//! The three workloads run at the same time, each in its own pair of
//! namespaces, so a burst of load on the machine (the tests run beside
//! compilers on two cores) reaches all three alike: the ratios compared
//! here are between connections that ran side by side.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use crate::common::run_dir;

use std::path::PathBuf;
use std::process::Command;

use exp_parquet::Frame;

const CONNECTIONS: usize = 100;
const FAR: usize = 40;
const PATHS: usize = 10;

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// splitmix64: a deterministic trace without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-normal with this median and σ (Box–Muller).
    fn lognormal(&mut self, median_ms: f64, sigma: f64) -> f64 {
        let (u, v) = (1.0 - self.next(), self.next());
        let z = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
        median_ms * (sigma * z).exp()
    }
}

/// One connection of the trace: whether it is a far (large) one, and its RTT.
struct Traced {
    far: bool,
    rtt_us: u64,
}

/// 100 connections 10 ms apart. Most (60) are short and near: 1 KB
/// answers over RTTs log-normal around 200 ms (σ 0.1). The other 40, in
/// random order, are far: 50 KB answers over RTTs log-normal around 800 ms
/// (σ 0.4, at most 1.4 s). Together a heavy-tailed RTT distribution, most
/// of it short, in which the short connections have the short RTTs.
fn trace() -> (String, Vec<Traced>) {
    let mut rng = Rng(22);
    let mut far = [[true; FAR].as_slice(), &[false; CONNECTIONS - FAR]].concat();
    for i in (1..CONNECTIONS).rev() {
        far.swap(i, (rng.next() * (i + 1) as f64) as usize);
    }
    let mut text = String::new();
    let mut traced = Vec::new();
    for (i, far) in far.into_iter().enumerate() {
        let rtt_ms = if far {
            rng.lognormal(800.0, 0.4).min(1400.0)
        } else {
            rng.lognormal(200.0, 0.1)
        };
        let rtt_us = (rtt_ms * 1000.0) as u64;
        let answer = if far { 50_000 } else { 1_000 };
        text.push_str(&format!(
            "SEQ {} 1 c{i} c{i}\nr {rtt_us}\n> 300\n< {answer}\n",
            i * 10_000
        ));
        traced.push(Traced { far, rtt_us });
    }
    (text, traced)
}

const SPEC: &str = r#"experiment "rtt-models" {
  seed     = 22
  duration = 9s

  traffic "per-connection" {
    vectors   = trace("rtt.cvec")
    structure = blk_conc
    rtt       = per_connection
    for       = 8s
  }

  traffic "paths" {
    vectors   = trace("rtt.cvec")
    structure = blk_conc
    rtt       = paths(count = 10)
    for       = 8s
  }

  traffic "by-rtt" {
    vectors   = trace("rtt.cvec")
    structure = blk_conc
    rtt       = paths(count = 10, assign = by_rtt)
    for       = 8s
  }
}
"#;

/// One connection's row: connection, duration (ns), path, emulated RTT (ns).
type Row = (u64, u64, Option<u64>, u64);

/// The connections of one workload, by connection.
fn rows(table: &Frame, workload: &str) -> Vec<Row> {
    let column = |name: &str| table.column(name).unwrap();
    let workloads = column("workload").str().unwrap();
    let statuses = column("status").str().unwrap();
    let ids = column("connection").u64().unwrap();
    // Times are Int64 (differences compute); they are never negative.
    let durations = column("duration_ns").i64().unwrap();
    let paths = column("path").u64().unwrap();
    let rtts = column("assigned_rtt_ns").i64().unwrap();
    let mut out = Vec::new();
    for row in 0..table.height() {
        if workloads.get(row) != Some(workload) {
            continue;
        }
        assert_eq!(statuses.get(row), Some("complete"), "{workload}, row {row}");
        out.push((
            ids.get(row).unwrap(),
            u64::try_from(durations.get(row).unwrap()).unwrap(),
            paths.get(row),
            u64::try_from(rtts.get(row).unwrap()).unwrap(),
        ));
    }
    out.sort_unstable();
    assert_eq!(out.len(), CONNECTIONS, "{workload}: one row per connection");
    out
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (values[(n - 1) / 2] + values[n / 2]) / 2.0
}

/// Round trips a connection of each class (near, far) takes: the median
/// of duration / RTT under per-connection RTTs (about 2 and 4: the
/// handshake, the preamble, then the answer in slow start).
fn round_trips(own: &[Row], traced: &[Traced]) -> [f64; 2] {
    [false, true].map(|far| {
        median(
            own.iter()
                .filter(|r| traced[r.0 as usize].far == far)
                .map(|r| r.1 as f64 / r.3 as f64)
                .collect(),
        )
    })
}

/// The median duration each connection's round trips at its emulated RTT
/// predict, ms.
fn predicted_median_ms(rows: &[Row], traced: &[Traced], trips: [f64; 2]) -> f64 {
    median(
        rows.iter()
            .map(|&(id, _, _, rtt_ns)| trips[usize::from(traced[id as usize].far)] * rtt_ns as f64 / 1e6)
            .collect(),
    )
}

fn measured_median_ms(rows: &[Row]) -> f64 {
    median(rows.iter().map(|r| r.1 as f64 / 1e6).collect())
}

#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn paths_lengthen_blk_conc_durations_where_by_rtt_does_not() {
    let scratch = Scratch(std::env::temp_dir().join(format!("expc-rtt-models-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).unwrap();
    let (text, traced) = trace();
    std::fs::write(scratch.0.join("rtt.cvec"), text).unwrap();
    std::fs::write(scratch.0.join("spec.exp"), SPEC).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_expc"))
        .current_dir(&scratch.0)
        .args(["run", "spec.exp", "--out", "runs"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let path = run_dir(&scratch.0.join("runs"))
        .unwrap()
        .join("tables/traffic_connections/trial=0/part-0.parquet");
    let table = exp_parquet::Reader::new(std::fs::File::open(&path).unwrap())
        .and_then(|r| r.read_all())
        .unwrap();

    // The delay stage gave the connections their RTTs: the audit's median
    // connection is within 10 % of its assigned RTT (no V0202), as the
    // by_rtt comparison below relies on.
    let manifest = exp_results::manifest::Manifest::read(&run_dir(&scratch.0.join("runs")).unwrap()).unwrap();
    let validity = manifest.trials[0].validity.as_ref().unwrap();
    assert!(
        validity.findings.iter().all(|f| f.code != "V0202"),
        "{:#?}",
        validity.findings
    );
    let own = rows(&table, "per-connection");
    let paths = rows(&table, "paths");
    let by_rtt = rows(&table, "by-rtt");

    // Per connection: each its own RTT, no path.
    for &(id, _, path, rtt_ns) in &own {
        assert_eq!(
            (path, rtt_ns),
            (None, traced[id as usize].rtt_us * 1000),
            "connection {id}"
        );
    }
    // Paths: round robin in start order, ten fixed RTTs; the same path
    // always has the same RTT.
    let mut path_rtts = [None; PATHS];
    for &(id, _, path, rtt_ns) in &paths {
        let path = path.unwrap_or_else(|| panic!("connection {id} has no path"));
        assert_eq!(path, id % PATHS as u64, "connection {id}");
        let known = path_rtts[path as usize].get_or_insert(rtt_ns);
        assert_eq!(*known, rtt_ns, "path {path}");
    }
    // By RTT: a connection whose own RTT is lower is never on a higher path.
    for (a, grouped_a) in own.iter().zip(&by_rtt) {
        for (b, grouped_b) in own.iter().zip(&by_rtt) {
            let (path_a, path_b) = (grouped_a.2.unwrap(), grouped_b.2.unwrap());
            assert!(a.3 >= b.3 || path_a <= path_b, "connections {} and {}", a.0, b.0);
        }
    }

    let trips = round_trips(&own, &traced);
    let expected = predicted_median_ms(&paths, &traced, trips) / predicted_median_ms(&own, &traced, trips);
    let (own_ms, paths_ms, by_rtt_ms) = (
        measured_median_ms(&own),
        measured_median_ms(&paths),
        measured_median_ms(&by_rtt),
    );
    let measured = paths_ms / own_ms;
    eprintln!(
        "round trips per connection: near {:.2}, far {:.2}; median blk_conc duration: per_connection \
         {own_ms:.1} ms, paths(10) {paths_ms:.1} ms, paths(10, by_rtt) {by_rtt_ms:.1} ms; \
         paths / per_connection: expected {expected:.2} from the trace's RTTs, measured {measured:.2}",
        trips[0], trips[1]
    );
    assert!(
        measured > 1.5,
        "paths(10) should lengthen the median duration by a clear factor: {measured:.2} (expected {expected:.2})"
    );
    assert!(
        (by_rtt_ms / own_ms - 1.0).abs() <= 0.10,
        "by_rtt should stay within 10 % of per_connection: {by_rtt_ms:.1} vs {own_ms:.1} ms"
    );
}
