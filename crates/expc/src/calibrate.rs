//! `expc calibrate`: how faithfully the anomaly kernels reach their targets
//! on this machine. The measuring is `exp_anomaly::calibrate`'s; here are the
//! arguments, and the tables and JSON made of its results.

use std::process::ExitCode;
use std::time::Duration;

use exp_anomaly::bench;
use exp_anomaly::calibrate::{self, CpuoccupyReport, InterferenceReport, Lab, MemoryReport};
use exp_anomaly::Launcher;
use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
    /// Print the results as JSON instead of tables.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(clap::Subcommand)]
enum What {
    /// cpuoccupy: achieved vs target utilisation, on an idle core and next to a busy competitor.
    Cpuoccupy {
        /// The core to hold.
        #[arg(long, default_value_t = 1)]
        core: u32,
        /// Measured seconds per point (each target is measured twice: idle and contended).
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// Target utilisations in percent.
        #[arg(long, value_delimiter = ',', default_value = "0,10,25,50,75,90,100")]
        targets: Vec<f64>,
    },
    /// memleak and memeater: growth of the resident set vs the configured rate.
    Memory {
        /// The core the memory kernels run on.
        #[arg(long, default_value_t = 1)]
        core: u32,
        /// Measured seconds per case.
        #[arg(long, default_value_t = 6.0)]
        seconds: f64,
    },
    /// A STREAM copy loop's throughput alone and next to membw and cachecopy.
    Interference {
        /// The core the copy loop (the victim) runs on.
        #[arg(long, default_value_t = 1)]
        core: u32,
        /// The other core, for anomalies beside the victim (default: another online core).
        #[arg(long)]
        other_core: Option<u32>,
        /// Measured seconds per case.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Size of each of the victim's two arrays (default: STREAM's rule, 4 × the largest cache, at most
        /// 1 GiB); small arrays make a cache-resident victim.
        #[arg(long)]
        array_bytes: Option<u64>,
    },
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let (What::Cpuoccupy { core, .. } | What::Memory { core, .. } | What::Interference { core, .. }) = &args.what;
    let mut cores = vec![*core];
    if let What::Interference {
        other_core: Some(other),
        ..
    } = &args.what
    {
        cores.push(*other);
    }
    calibrate::ensure_online(&cores).map_err(|e| e.to_string())?;
    let mut lab = lab()?;
    let report = match args.what {
        What::Cpuoccupy { core, seconds, targets } => {
            let report = calibrate::cpuoccupy(&mut lab, core, seconds_arg(seconds)?, &targets);
            cpuoccupy(&report.map_err(|e| e.to_string())?)
        }
        What::Memory { core, seconds } => {
            let report = calibrate::memory(&mut lab, core, seconds_arg(seconds)?);
            memory(&report.map_err(|e| e.to_string())?)
        }
        What::Interference {
            core,
            other_core,
            seconds,
            array_bytes,
        } => {
            let other = other_core.or_else(|| exp_host::online_cpus().into_iter().find(|&c| c != core));
            let other = other.ok_or("interference needs a second online core (--other-core)")?;
            let array = array_bytes.unwrap_or_else(|| bench::stream_array_bytes(core));
            if array == 0 {
                return Err("--array-bytes must be positive".into());
            }
            let report = calibrate::interference(&mut lab, core, other, seconds_arg(seconds)?, array);
            interference(&report.map_err(|e| e.to_string())?)
        }
    };
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report.json).map_err(|e| e.to_string())?
        );
    } else {
        out!("{}", report.text);
    }
    Ok(ExitCode::SUCCESS)
}

fn seconds_arg(seconds: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("bad --seconds {seconds}"))
}

/// Anomaly children are this program again (`expc __anomaly-kernel`), with
/// their files in a directory of this process's own.
fn lab() -> Result<Lab, String> {
    let program = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let launcher = Launcher {
        program,
        args: vec!["__anomaly-kernel".into()],
    };
    let scratch = std::env::temp_dir().join(format!("expc-calibrate-{}", std::process::id()));
    Ok(Lab::new(launcher, scratch))
}

/// A table for people and the same numbers for programs.
struct Report {
    text: String,
    json: serde_json::Value,
}

fn cpuoccupy(report: &CpuoccupyReport) -> Report {
    let core = report.core;
    let mut text = format!(
        "cpuoccupy on core {core}, {:.0} s per point. achieved = CPU time of the child's threads \
         (/proc/<pid>/task/*/schedstat) / wall time.\n\
         others = what other processes and the hypervisor (steal) took of core {core}: /proc/stat busy + steal\n\
         time minus the children's.\n\
         idle: expected = min(target, 100 - others).\n\
         contended: next to a cpuoccupy 100 % pinned to the same core; expected = min(target, (100 - others) / 2),\n\
         the fair share of two busy tasks.\n\n",
        report.window.as_secs_f64()
    );
    text.push_str("        |               idle core                |                 contended core\n");
    text.push_str("target  | achieved  others  expected   error    | achieved  competitor  others  expected   error\n");
    let mut rows = Vec::new();
    for point in &report.points {
        let (target, idle, contended) = (point.target_percent, &point.idle, &point.contended);
        text.push_str(&format!(
            "{target:>5.0} % | {:>7.2} % {:>6.2} % {:>7.2} % {:>+7.2}    | \
             {:>7.2} % {:>9.2} % {:>6.2} % {:>7.2} % {:>+7.2}\n",
            idle.achieved_percent,
            idle.others_percent,
            idle.expected_percent,
            idle.error_points(),
            contended.achieved_percent,
            contended.competitor_percent,
            contended.others_percent,
            contended.expected_percent,
            contended.error_points()
        ));
        rows.push(json!({
            "target_percent": target,
            "idle": { "achieved_percent": idle.achieved_percent, "others_percent": idle.others_percent,
                      "expected_percent": idle.expected_percent, "error_points": idle.error_points() },
            "contended": { "achieved_percent": contended.achieved_percent,
                           "competitor_percent": contended.competitor_percent,
                           "others_percent": contended.others_percent,
                           "expected_percent": contended.expected_percent,
                           "error_points": contended.error_points() },
        }));
    }
    let json = json!({ "kind": "cpuoccupy", "core": core, "seconds": report.window.as_secs_f64(), "points": rows });
    Report { text, json }
}

fn memory(report: &MemoryReport) -> Report {
    let mut text = format!(
        "memory kernels on core {}, {:.0} s each; growth = resident set (/proc/<pid>/statm, sampled every \
         10 ms) between the first and the last step seen / the time between them\n\n",
        report.core,
        report.window.as_secs_f64()
    );
    text.push_str("case                             configured MB/s   measured MB/s    ratio   steps\n");
    let mut rows = Vec::new();
    for case in &report.cases {
        let (name, rate, measured) = (case.name, case.configured_bytes_per_s, case.measured_bytes_per_s);
        text.push_str(&format!(
            "{name:<32} {:>15.2} {:>15.2} {:>8.4} {:>7}\n",
            rate / 1e6,
            measured / 1e6,
            case.ratio(),
            case.steps
        ));
        rows.push(json!({
            "case": name, "configured_bytes_per_s": rate, "measured_bytes_per_s": measured,
            "ratio": case.ratio(), "steps": case.steps,
        }));
    }
    let json = json!({ "kind": "memory", "core": report.core, "seconds": report.window.as_secs_f64(), "cases": rows });
    Report { text, json }
}

fn interference(report: &InterferenceReport) -> Report {
    let mut text = format!(
        "victim: STREAM copy of {:.2} MiB arrays on core {}, {:.0} s per case; MB/s counts bytes read + \
         written.\nslowdown = first alone / this. per CPU-s = throughput while the victim is on a CPU, which \
         leaves out\ntime lost to sharing the core (with the anomaly or with other processes).\n\n",
        report.array_bytes as f64 / (1u64 << 20) as f64,
        report.core,
        report.window.as_secs_f64()
    );
    text.push_str(
        "condition                          MB/s  slowdown  MB/s per CPU-s  slowdown  victim CPU  anomaly CPU\n",
    );
    let mut rows = Vec::new();
    for case in &report.cases {
        let (name, mb_per_s, mb_per_cpu_s) = (&case.condition, case.victim.mb_per_s(), case.victim.mb_per_cpu_s());
        let (slowdown, cpu_slowdown) = (case.slowdown, case.cpu_slowdown);
        text.push_str(&format!(
            "{name:<30} {mb_per_s:>8.0} {slowdown:>8.2}x {mb_per_cpu_s:>15.0} {cpu_slowdown:>8.2}x {:>9.1} % {:>11}\n",
            case.victim.cpu_share() * 100.0,
            case.anomaly_cpu_percent
                .map_or("-".to_string(), |c| format!("{c:.1} %"))
        ));
        rows.push(json!({
            "condition": name, "mb_per_s": mb_per_s, "slowdown": slowdown, "mb_per_cpu_s": mb_per_cpu_s,
            "cpu_slowdown": cpu_slowdown, "victim_cpu_percent": case.victim.cpu_share() * 100.0,
            "anomaly_cpu_percent": case.anomaly_cpu_percent,
        }));
    }
    let json = json!({ "kind": "interference", "core": report.core, "other_core": report.other_core,
                       "array_bytes": report.array_bytes, "cases": rows });
    Report { text, json }
}
